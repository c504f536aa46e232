"""Cancels and withdraws that come before their call starts: the gateway may send a quick
worker's next calls behind its running one, and cancel or take back any of them while they wait;
and a cancel that comes while an event line is being written."""
import signal
import threading
import time
import unittest

from apipod._runtime.cancellation import CallCancelled, CallWithdrawn, Cancellation


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


class WithdrawTest(unittest.TestCase):
    def withdraw(self, cancellation: Cancellation, calls: list) -> list:
        answers = []
        cancellation.withdraw(calls, answers.append)
        self.assertEqual(len(answers), 1)  # always answered, even when nothing is taken
        return answers[0]

    def test_calls_not_started_are_taken_back_and_never_run(self):
        cancellation = Cancellation()
        self.assertEqual(self.withdraw(cancellation, ["c-2", "c-3"]), ["c-2", "c-3"])
        for call in ("c-2", "c-3"):
            with self.subTest(call=call), self.assertRaises(CallWithdrawn):
                with cancellation.running(call):
                    self.fail("a withdrawn call ran")
        with cancellation.running("c-4"):
            pass

    def test_the_running_call_and_those_that_ran_are_not_taken(self):
        cancellation = Cancellation()
        with cancellation.running("c-1"):
            pass
        with cancellation.running("c-2"):
            self.assertEqual(self.withdraw(cancellation, ["c-1", "c-2", "c-3"]), ["c-3"])
        with cancellation.running("c-1"):  # a call id run again is not a withdrawn one
            pass

    def test_a_withdrawn_call_that_was_also_cancelled_is_only_withdrawn(self):
        cancellation = Cancellation()
        cancellation.request("c-2")
        self.assertEqual(self.withdraw(cancellation, ["c-2"]), ["c-2"])
        with self.assertRaises(CallWithdrawn):
            with cancellation.running("c-2"):
                pass
        with cancellation.running("c-2"):  # its cancel went with it: the gateway runs it elsewhere
            pass


class ShieldedWriteTest(unittest.TestCase):
    def test_a_cancel_that_comes_while_an_event_is_written_is_raised_as_the_write_ends(self):
        cancellation = Cancellation()
        cancellation.install()
        self.addCleanup(signal.signal, signal.SIGINT, signal.default_int_handler)
        steps = []
        canceller = threading.Thread(target=cancellation.request, args=("c-1",))
        with self.assertRaises(CallCancelled):
            with cancellation.running("c-1"):
                with cancellation.shielded():
                    canceller.start()
                    time.sleep(0.3)  # the signal comes meanwhile, and is held back
                    steps.append("line written")
                steps.append("went on")
        canceller.join()
        self.assertEqual(steps, ["line written"])

    def test_a_shield_in_another_thread_holds_no_cancel_back(self):
        cancellation = Cancellation()
        cancellation.install()
        self.addCleanup(signal.signal, signal.SIGINT, signal.default_int_handler)
        entered, release = threading.Event(), threading.Event()

        def progress_from_a_thread():
            with cancellation.shielded():
                entered.set()
                release.wait(5)

        other = threading.Thread(target=progress_from_a_thread)
        other.start()
        entered.wait(5)
        canceller = threading.Thread(target=cancellation.request, args=("c-1",))
        try:
            with self.assertRaises(CallCancelled):
                with cancellation.running("c-1"):
                    canceller.start()
                    time.sleep(5)
                    self.fail("the cancel waited for another thread's write")
        finally:
            release.set()
            other.join()
            canceller.join()


if __name__ == "__main__":
    unittest.main()
