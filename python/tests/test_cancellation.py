"""Cancels that come before their call starts: the gateway may send a quick worker's next
calls behind its running one, and cancel any of them while they wait."""
import unittest

from apipod._runtime.cancellation import CallCancelled, Cancellation


class CancelledBeforeStartTest(unittest.TestCase):
    def test_each_call_cancelled_while_it_waited_is_stopped_as_it_starts_and_only_it(self):
        cancellation = Cancellation()
        cancellation.request("c-2")
        cancellation.request("c-3")
        for call in ("c-2", "c-3"):
            with self.subTest(call=call), self.assertRaises(CallCancelled):
                with cancellation.running(call):
                    self.fail("a call cancelled before it started ran")
        ran = []
        for call in ("c-4", "c-2"):  # another call, and one whose cancel was taken already
            with cancellation.running(call):
                ran.append(call)
        self.assertEqual(ran, ["c-4", "c-2"])

    def test_cancels_for_calls_that_never_come_are_forgotten_oldest_first(self):
        cancellation = Cancellation()
        for number in range(100):
            cancellation.request(f"c-{number}")
        with cancellation.running("c-0"):
            pass  # forgotten: the worker keeps the latest few
        with self.assertRaises(CallCancelled):
            with cancellation.running("c-99"):
                pass


if __name__ == "__main__":
    unittest.main()
