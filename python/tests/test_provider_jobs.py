"""How a provider's job becomes a call of the gateway: routing, the event stream, progress.

The runpod bridge as a whole runs against the provider's real library in
test/integration/runpod.test.ts; these are the pure pieces it is made of.
"""
import asyncio
import json
import os
import unittest

from apipod._runtime.event_stream import EventStreamParser, ServerSentEvent
from apipod._runtime.provider_routes import JobInputError, Route, route_job
from apipod._runtime.route_names import upstream_route_name
from tests.worker_process import REPOSITORY

HELLO = Route("/hello", ("POST",), streaming=False, chat=False)
ADD = Route("/add", ("POST",), streaming=False, chat=False)
FRIES = Route("/make_fries", ("POST",), streaming=False, chat=False)
ROUTE_NAMES = os.path.join(REPOSITORY, "test", "fixtures", "routes", "upstream-route-names.json")


class RouteJobTest(unittest.TestCase):
    def test_takes_the_path_with_or_without_its_slash_and_passes_the_rest(self):
        self.assertEqual(route_job({"path": "/add", "a": 1, "b": 2}, [HELLO, ADD]), (ADD, {"a": 1, "b": 2}))
        self.assertEqual(route_job({"path": "add/"}, [HELLO, ADD]), (ADD, {}))

    def test_a_single_endpoint_service_may_leave_the_path_out(self):
        self.assertEqual(route_job({"name": "Ada"}, [HELLO]), (HELLO, {"name": "Ada"}))

    def test_without_a_path_among_several_endpoints_names_them(self):
        with self.assertRaisesRegex(JobInputError, 'no "path".*this service has /hello, /add'):
            route_job({"a": 1}, [HELLO, ADD])

    def test_an_unknown_path_names_the_endpoints_there_are(self):
        with self.assertRaisesRegex(JobInputError, 'no endpoint at "/nope"; this service has /hello, /add'):
            route_job({"path": "/nope"}, [HELLO, ADD])

    def test_takes_the_path_as_the_apipod_package_spells_it(self):
        for spelling in ("make-fries", "/make-fries", "/Make_Fries", "make_fries"):
            self.assertEqual(route_job({"path": spelling}, [HELLO, FRIES]), (FRIES, {}))

    def test_a_spelling_two_endpoints_share_names_them_and_the_path_as_written_wins(self):
        dashed = Route("/make-fries", ("POST",), streaming=False, chat=False)
        self.assertEqual(route_job({"path": "make-fries"}, [FRIES, dashed]), (dashed, {}))
        upper = Route("/Make_Fries", ("POST",), streaming=False, chat=False)
        with self.assertRaisesRegex(JobInputError, '"make-fries" could name any of /make_fries, /Make_Fries'):
            route_job({"path": "make-fries"}, [FRIES, upper])

    def test_spells_routes_as_the_apipod_package_does(self):
        with open(ROUTE_NAMES, encoding="utf-8") as file:
            for path, spelt in json.load(file)["names"]:
                self.assertEqual(upstream_route_name(path), spelt, path)

    def test_input_that_is_not_an_object_or_a_path_that_is_not_text_is_refused(self):
        for bad in (None, [1], "hello"):
            with self.assertRaisesRegex(JobInputError, 'must be an object'):
                route_job(bad, [HELLO])
        with self.assertRaisesRegex(JobInputError, '"path" must be a string'):
            route_job({"path": 3}, [HELLO])


class EventStreamParserTest(unittest.TestCase):
    def feed(self, *lines):
        parser = EventStreamParser()
        return [event for event in map(parser.feed, lines) if event is not None]

    def test_an_event_ends_at_a_blank_line_and_joins_its_data_lines(self):
        events = self.feed("event: chunk", 'data: {"a":', "data: 1}", "", "data: plain", "")
        self.assertEqual(events, [ServerSentEvent("chunk", '{"a":\n1}'), ServerSentEvent("message", "plain")])

    def test_comments_and_events_without_data_are_not_events(self):
        self.assertEqual(self.feed(": keep-alive", "", "event: progress", ""), [])

    def test_only_one_space_after_the_colon_is_dropped(self):
        self.assertEqual(self.feed("data:  two", ""), [ServerSentEvent("message", " two")])


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class ProgressReporterTest(unittest.TestCase):
    """Imported here: the bridge module needs aiohttp, which the provider's library brings."""

    def setUp(self):
        try:
            from apipod._runtime.runpod_bridge import ProgressReporter, progress_payload
        except ImportError as error:
            raise unittest.SkipTest(f"the provider's library is not installed: {error}")
        self.ProgressReporter = ProgressReporter
        self.progress_payload = progress_payload

    def test_sends_the_first_update_at_once_and_only_the_last_of_a_burst_after_the_interval(self):
        async def scenario():
            sent = []
            clock = FakeClock()
            reporter = self.ProgressReporter(sent.append, interval=0.05, clock=clock)
            reporter.report({"progress": 0.1})
            reporter.report({"progress": 0.2})
            reporter.report({"progress": 0.3})
            self.assertEqual(sent, [{"progress": 0.1}])
            clock.now = 0.05
            await asyncio.sleep(0.1)
            return sent

        self.assertEqual(asyncio.run(scenario()), [{"progress": 0.1}, {"progress": 0.3}])

    def test_a_closed_reporter_drops_what_is_pending(self):
        async def scenario():
            sent = []
            reporter = self.ProgressReporter(sent.append, interval=0.05, clock=FakeClock())
            reporter.report({"progress": 0.5})
            reporter.report({"progress": 0.6})
            reporter.close()
            await asyncio.sleep(0.1)
            return sent

        self.assertEqual(asyncio.run(scenario()), [{"progress": 0.5}])

    def test_the_fraction_goes_out_as_it_is_and_the_initial_state_not_at_all(self):
        from apipod._runtime.gateway_client import Progress

        self.assertEqual(self.progress_payload(Progress(0.125, "an eighth")), {"progress": 0.125, "message": "an eighth"})
        self.assertIsNone(self.progress_payload(Progress(0, None)))
        self.assertIsNone(self.progress_payload(Progress(None, None)))



class LibraryResultTest(unittest.TestCase):
    """What a test input prints and how it ends, as the library's run_job reports the job."""

    def setUp(self):
        try:
            from apipod._runtime.runpod_bridge import library_result
        except ImportError as error:
            raise unittest.SkipTest(f"the provider's library is not installed: {error}")
        self.library_result = library_result

    def test_a_truthy_error_fails_the_job_beside_the_rest_of_the_output(self):
        self.assertEqual(self.library_result({"error": "boom"}), {"error": "boom"})
        self.assertEqual(self.library_result({"error": "boom", "partial": 1}), {"output": {"partial": 1}, "error": "boom"})

    def test_an_empty_error_and_refresh_worker_are_no_output_and_no_failure(self):
        output = {"value": 1, "error": None, "refresh_worker": True}
        self.assertEqual(self.library_result(output), {"output": {"value": 1}})
        self.assertEqual(output, {"value": 1, "error": None, "refresh_worker": True})  # the library still sees it whole
        self.assertEqual(self.library_result({"error": ""}), {})

    def test_any_other_output_is_the_output(self):
        for output in ([1, 2], "text", 0, None, False):
            self.assertEqual(self.library_result(output), {"output": output})


if __name__ == "__main__":
    unittest.main()
