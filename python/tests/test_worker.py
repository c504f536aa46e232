"""The worker as the gateway sees it: a real subprocess talking over fds 3, 4 and 5."""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from apipod._runtime import protocol
from tests.worker_process import PYTHON_DIRECTORY, REPOSITORY, WorkerProcess, service_path


class WorkerTestCase(unittest.TestCase):
    def start_worker(self, service_file: str, environment: dict = None) -> WorkerProcess:
        worker = WorkerProcess(service_file, environment)
        self.addCleanup(worker.kill)
        return worker

    def start_ready_worker(self, service_file: str, environment: dict = None) -> tuple[WorkerProcess, dict]:
        worker = self.start_worker(service_file, environment)
        ready = worker.next_event()
        self.assertEqual(ready["type"], "ready", ready)
        return worker, ready

    def service_from_source(self, source: str) -> str:
        """A service file holding `source`, in a directory removed after the test."""
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        service = os.path.join(directory, "service.py")
        with open(service, "w") as file:
            file.write(source)
        return service

    def call(self, worker: WorkerProcess, call_id: str, endpoint: str, arguments: dict = None) -> list[dict]:
        worker.send(protocol.call(call_id, endpoint, arguments or {}))
        return worker.events_until_end_of(call_id)


class ReadyTest(WorkerTestCase):
    def test_the_hello_example_reports_its_endpoints_and_schemas(self):
        worker, ready = self.start_ready_worker(os.path.join(REPOSITORY, "examples", "hello", "service.py"))
        self.assertEqual(ready["protocol"], 9)
        self.assertEqual(ready["app"], {"title": "Hello", "compute": "dedicated", "provider": "localhost"})
        hello, add = ready["endpoints"]
        self.assertEqual(hello["path"], "/hello")
        self.assertEqual(hello["methods"], ["POST"])
        self.assertEqual(hello["input_schema"], {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "world"},
                "excited": {"type": "boolean", "default": False},
            },
            "required": [],
            "additionalProperties": False,
        })
        self.assertEqual(add["input_schema"]["required"], ["a", "b"])
        self.assertEqual(add["output_schema"], {"type": "object"})
        self.assertEqual(ready["python"], "%d.%d.%d" % sys.version_info[:3])
        self.assertEqual(worker.finish()[0], 0)

    def test_the_toolkit_leaves_modules_a_worker_may_never_need_unimported(self):
        # Each held for the worker's life: uuid with platform ~0.4 MiB, mimetypes with
        # urllib.parse and ipaddress ~0.4 MiB. A service that uses one imports it itself.
        # -S: no site-packages .pth file runs, which might import them on its own.
        code = ("import sys, apipod, apipod._runtime.worker; "
                "print(sorted(m for m in ('uuid', 'platform', 'mimetypes', 'urllib.parse', 'ipaddress') if m in sys.modules))")
        loaded = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path.insert(0, {PYTHON_DIRECTORY!r}); {code}"],
                                capture_output=True, text=True, check=True).stdout.strip()
        self.assertEqual(loaded, "[]")

    @unittest.skipUnless(hasattr(os, "SCHED_BATCH"), "SCHED_BATCH is Linux's")
    def test_the_worker_its_threads_and_the_subprocesses_its_service_starts_run_as_batch_work(self):
        service = self.service_from_source(
            "import os, subprocess, sys\n"
            "from apipod import APIPod\n"
            "app = APIPod()\n"
            "@app.endpoint('/policy')\n"
            "def policy() -> dict:\n"
            "    child = subprocess.run([sys.executable, '-c', 'import os; print(os.sched_getscheduler(0))'],\n"
            "                           capture_output=True, text=True, check=True).stdout\n"
            "    return {'child': int(child)}\n")
        worker, _ready = self.start_ready_worker(service)
        result = self.call(worker, "c1", "/policy")[-1]  # by its end, the cancel thread runs too
        self.assertEqual(result["value"], {"child": os.SCHED_BATCH})
        threads = os.listdir(f"/proc/{worker.process.pid}/task")
        self.assertGreaterEqual(len(threads), 3)  # the main thread, the cancel thread, the orphan watch
        self.assertEqual({os.sched_getscheduler(int(thread)) for thread in threads}, {os.SCHED_BATCH})

    def test_the_chat_example_answers_a_chat_request(self):
        worker, ready = self.start_ready_worker(os.path.join(REPOSITORY, "examples", "chat", "service.py"))
        self.assertTrue(ready["endpoints"][0]["is_chat"])
        request = {"model": "echo", "messages": [{"role": "user", "content": "Hi there"}], "stream": False}
        words = ["You", " said:", " Hi", " there"]  # the example streams its answer word by word
        self.assertEqual(self.call(worker, "c-1", "/chat", {"request": request}),
                         [*({"type": "chunk", "call": "c-1", "value": word} for word in words),
                          {"type": "streamed", "call": "c-1", "chunks": len(words)}])

    def test_endpoint_kinds_and_injected_parameters_are_reported(self):
        _, ready = self.start_ready_worker(service_path("calls.py"))
        endpoints = {endpoint["path"]: endpoint for endpoint in ready["endpoints"]}
        self.assertEqual(endpoints["/echo"]["doc"], "Returns its input.")
        self.assertEqual(endpoints["/steps"]["injected"], ["job_progress"])
        self.assertEqual(endpoints["/steps"]["input_schema"]["properties"], {})
        self.assertTrue(endpoints["/tokens"]["is_generator"])
        self.assertFalse(endpoints["/tokens"]["is_async"])
        self.assertTrue(endpoints["/async-tokens"]["is_generator"])
        self.assertTrue(endpoints["/async-tokens"]["is_async"])
        self.assertTrue(endpoints["/double"]["is_async"])
        self.assertEqual(endpoints["/tokens"]["output_schema"], {"type": "array", "items": {"type": "string"}})


class CallTest(WorkerTestCase):
    def setUp(self):
        self.worker, _ = self.start_ready_worker(service_path("calls.py"))

    def test_a_call_answers_with_its_result(self):
        self.assertEqual(self.call(self.worker, "c-1", "/echo", {"text": "hi"}),
                         [{"type": "result", "call": "c-1", "value": "hi"}])

    def test_a_user_exception_answers_with_its_type_message_and_traceback(self):
        [event] = self.call(self.worker, "c-1", "/fail")
        self.assertEqual(event["type"], "error")
        self.assertEqual(event["error"]["type"], "ValueError")
        self.assertEqual(event["error"]["message"], "broken on purpose")
        self.assertIn('calls.py", line', event["error"]["traceback"])
        self.assertIn("raise ValueError", event["error"]["traceback"])
        self.assertNotIn("call_runner.py", event["error"]["traceback"])
        # the worker goes on serving
        self.assertEqual(self.call(self.worker, "c-2", "/echo", {"text": "still here"})[-1]["value"], "still here")

    def test_user_prints_reach_stdout_and_never_the_protocol(self):
        self.assertEqual(self.call(self.worker, "c-1", "/noisy"),
                         [{"type": "result", "call": "c-1", "value": "quiet result"}])
        exit_code, stdout, stderr = self.worker.finish()
        self.assertEqual(exit_code, 0)
        self.assertIn("printed, not sent", stdout)
        self.assertIn("to stderr", stderr)

    def test_progress_is_reported_and_clamped_before_the_result(self):
        self.assertEqual(self.call(self.worker, "c-1", "/steps"), [
            {"type": "progress", "call": "c-1", "progress": 0.25, "message": "quarter"},
            {"type": "progress", "call": "c-1", "progress": 1.0, "message": "past the end"},
            {"type": "result", "call": "c-1", "value": "done"},
        ])

    def test_progress_from_a_call_that_ended_is_never_sent(self):
        # A handle kept past its call (a user's thread that outlives it) reports nothing more:
        # the gateway would give it to whatever call runs next.
        service = self.service_from_source(
            "from apipod import APIPod, JobProgress\n"
            "app = APIPod()\n"
            "kept = []\n"
            "@app.endpoint('/keep')\n"
            "def keep(job_progress: JobProgress) -> str:\n"
            "    kept.append(job_progress)\n"
            "    return 'kept'\n"
            "@app.endpoint('/late')\n"
            "def late() -> str:\n"
            "    kept[0].set_status(0.5, 'from the first call')\n"
            "    return 'late'\n")
        worker, _ = self.start_ready_worker(service)
        self.assertEqual(self.call(worker, "c-1", "/keep"), [{"type": "result", "call": "c-1", "value": "kept"}])
        self.assertEqual(self.call(worker, "c-2", "/late"), [{"type": "result", "call": "c-2", "value": "late"}])

    def test_a_generator_sends_each_chunk_then_how_many_it_sent(self):
        self.assertEqual(self.call(self.worker, "c-1", "/tokens", {"prompt": "one two"}), [
            {"type": "chunk", "call": "c-1", "value": "one"},
            {"type": "chunk", "call": "c-1", "value": "two"},
            {"type": "streamed", "call": "c-1", "chunks": 2},
        ])

    def test_an_async_generator_streams_too(self):
        self.assertEqual(self.call(self.worker, "c-1", "/async-tokens", {"prompt": "one two"}), [
            {"type": "chunk", "call": "c-1", "value": "ONE"},
            {"type": "chunk", "call": "c-1", "value": "TWO"},
            {"type": "streamed", "call": "c-1", "chunks": 2},
        ])

    def test_a_returned_iterator_streams_like_a_generator(self):
        self.assertEqual(self.call(self.worker, "c-1", "/returned-iterator", {"prompt": "a b"}), [
            {"type": "chunk", "call": "c-1", "value": "a"},
            {"type": "chunk", "call": "c-1", "value": "b"},
            {"type": "streamed", "call": "c-1", "chunks": 2},
        ])

    def test_an_async_endpoint_answers(self):
        self.assertEqual(self.call(self.worker, "c-1", "/double", {"number": 21})[-1]["value"], 42)
        self.assertEqual(self.call(self.worker, "c-2", "/double", {"number": 2})[-1]["value"], 4)

    def test_structured_results_are_made_json(self):
        self.assertEqual(self.call(self.worker, "c-1", "/report")[-1]["value"],
                         {"colour": "red", "pair": [1, 2], "ratio": None,
                          "raw": {"file_name": "file", "content_type": "application/octet-stream", "content": "AAE="}})

    def test_a_result_that_is_not_json_fails_the_call_naming_its_type(self):
        [event] = self.call(self.worker, "c-1", "/unserialisable")
        self.assertEqual(event["error"]["type"], "TypeError")
        self.assertIn("object", event["error"]["message"])

    def test_sys_exit_in_an_endpoint_fails_the_call_not_the_worker(self):
        [event] = self.call(self.worker, "c-1", "/exit")
        self.assertEqual(event["error"]["type"], "SystemExit")
        self.assertEqual(self.call(self.worker, "c-2", "/echo", {"text": "alive"})[-1]["value"], "alive")

    def test_an_unknown_endpoint_fails_the_call(self):
        [event] = self.call(self.worker, "c-1", "/missing")
        self.assertEqual(event["error"]["type"], "LookupError")

    def test_a_large_media_result_comes_back_as_a_file_reference(self):
        [event] = self.call(self.worker, "c-1", "/big-image")
        reference = event["value"]["$file"]
        self.addCleanup(lambda: os.path.exists(reference["path"]) and os.remove(reference["path"]))
        self.assertEqual(reference["file_name"], "big.png")
        self.assertEqual(reference["content_type"], "image/png")
        self.assertEqual(os.path.getsize(reference["path"]), 100_008)

    def test_a_small_media_result_is_inline(self):
        [event] = self.call(self.worker, "c-1", "/big-image", {"size": 10})
        self.assertEqual(event["value"]["content_type"], "image/png")
        self.assertIn("content", event["value"])

    def test_a_file_reference_argument_is_read_and_deleted(self):
        descriptor, path = tempfile.mkstemp(prefix="apipod-test-")
        with os.fdopen(descriptor, "wb") as file:
            file.write(b"%PDF-1.7 tiny")
        self.addCleanup(lambda: os.path.exists(path) and os.remove(path))
        reference = {"$file": {"path": path, "file_name": "doc.pdf", "content_type": None}}
        [event] = self.call(self.worker, "c-1", "/describe-file", {"file": reference})
        self.assertEqual(event["value"], {"size": 13, "file_name": "doc.pdf", "content_type": "application/pdf"})
        self.assertFalse(os.path.exists(path))

    def test_a_base64_argument_becomes_a_media_file(self):
        [event] = self.call(self.worker, "c-1", "/describe-file", {"file": "data:text/plain;base64,aGVsbG8="})
        self.assertEqual(event["value"], {"size": 5, "file_name": "file", "content_type": "text/plain"})

    def test_malformed_commands_are_skipped(self):
        self.worker._commands.write(b"not json\n")
        self.worker.send({"type": "reboot"})
        self.worker.send({"type": "call", "call": "c-0"})
        self.worker.send_on(3, protocol.cancel("c-1"))  # each pipe carries its own commands only
        self.worker.send_on(5, protocol.call("c-9", "/echo", {"text": "lost"}))
        self.assertEqual(self.call(self.worker, "c-1", "/echo", {"text": "fine"})[-1]["value"], "fine")
        # The cancel thread reads fd 5 in order: once this cancel has acted, the line before it was reported.
        self.worker.send(protocol.call("c-2", "/sleep", {"seconds": 30}))
        self.worker.send_on(5, protocol.cancel("c-2"))
        self.assertEqual(self.worker.events_until_end_of("c-2")[-1]["type"], "cancelled")
        _, _, stderr = self.worker.finish()
        self.assertEqual(stderr.count("ignoring a command line"), 5)
        self.assertIn("a cancel command does not belong on fd 3", stderr)


class CommandPollTest(WorkerTestCase):
    def test_calls_answer_whether_the_worker_polls_for_them_or_sleeps(self):
        for poll in ("0", "500", "100000"):
            with self.subTest(APIPOD_COMMAND_POLL_US=poll):
                worker, _ = self.start_ready_worker(service_path("calls.py"), {"APIPOD_COMMAND_POLL_US": poll})
                for n in range(3):
                    self.assertEqual(self.call(worker, f"c-{n}", "/echo", {"text": str(n)})[-1]["value"], str(n))
                    time.sleep(0.01)
                self.assertEqual(worker.finish()[0], 0)

    def test_a_poll_time_that_is_not_a_number_is_refused(self):
        worker = self.start_worker(service_path("calls.py"), {"APIPOD_COMMAND_POLL_US": "soon"})
        code, _, stderr = worker.finish()
        self.assertEqual(code, 2)
        self.assertIn("APIPOD_COMMAND_POLL_US must be a whole number of microseconds, not 'soon'", stderr)


class EventSizeTest(WorkerTestCase):
    def test_a_result_or_chunk_larger_than_the_gateway_takes_fails_its_call_and_the_worker_goes_on(self):
        limit = 64 * 1024  # the ready event, with every endpoint's schema, is smaller
        worker, _ = self.start_ready_worker(service_path("calls.py"), {"APIPOD_MAX_EVENT_BYTES": str(limit)})
        [event] = self.call(worker, "c-1", "/echo", {"text": "x" * 2 * limit})
        self.assertEqual(event["error"]["type"], "ResultTooLarge")
        self.assertIn("the result is 0.1 MiB as JSON, more than the 0.1 MiB svc carries in one", event["error"]["message"])
        *_, failed = self.call(worker, "c-2", "/tokens", {"prompt": "short " + "y" * 2 * limit})
        self.assertEqual([failed["type"], failed["error"]["type"]], ["error", "ResultTooLarge"])
        self.assertIn("the chunk is", failed["error"]["message"])
        self.assertEqual(self.call(worker, "c-3", "/echo", {"text": "small"})[-1]["value"], "small")

    def test_chunks_that_together_outgrow_one_result_fail_at_the_chunk_that_crosses(self):
        limit = 64 * 1024
        worker, _ = self.start_ready_worker(service_path("calls.py"), {"APIPOD_MAX_EVENT_BYTES": str(limit)})
        words = " ".join(f"{n:05d}" + "w" * 1000 for n in range(100))  # 100 chunks of ~1 KiB each
        events = self.call(worker, "c-1", "/tokens", {"prompt": words})
        chunks, failed = events[:-1], events[-1]
        self.assertTrue(50 < len(chunks) < 64, len(chunks))  # those that fit were sent as they came
        self.assertEqual({event["type"] for event in chunks}, {"chunk"})
        self.assertEqual([failed["type"], failed["error"]["type"]], ["error", "ResultTooLarge"])
        self.assertIn("the chunks come to more than the 0.1 MiB as JSON that svc carries as one result",
                      failed["error"]["message"])
        self.assertEqual(self.call(worker, "c-2", "/echo", {"text": "small"})[-1]["value"], "small")

    def test_a_limit_that_is_not_a_number_is_refused(self):
        for name, unit in (("APIPOD_MAX_EVENT_BYTES", "bytes"), ("APIPOD_MAX_VALUE_DEPTH", "levels")):
            worker = self.start_worker(service_path("calls.py"), {name: "lots"})
            code, _, stderr = worker.finish()
            self.assertEqual(code, 2)
            self.assertIn(f"{name} must be a whole number of {unit}, not 'lots'", stderr)


class CancelTest(WorkerTestCase):
    def setUp(self):
        self.worker, _ = self.start_ready_worker(service_path("calls.py"))

    def cancel_after_start(self, endpoint: str) -> list:
        """The call sleeps 30 s, so events before the 10 s timeout mean the cancel stopped it."""
        self.worker.send(protocol.call("c-1", endpoint, {}))
        time.sleep(0.3)  # let the call reach its sleep
        self.worker.send(protocol.cancel("c-1"))
        return self.worker.events_until_end_of("c-1", timeout=10)

    def test_a_cancel_racing_its_call_always_stops_it(self):
        # Sent together, the cancel lands before, as or after the call starts; one that landed
        # just before the main thread entered its sleep was seen 30 s later (1 in ~5,000).
        for n in range(3000):
            self.worker.send(protocol.call(f"c-{n}", "/sleep", {"seconds": 30}))
            self.worker.send_on(5, protocol.cancel(f"c-{n}"))
            self.assertEqual(self.worker.events_until_end_of(f"c-{n}", timeout=5)[-1]["type"], "cancelled", n)

    def test_cancelling_a_sleeping_call_answers_cancelled(self):
        events = self.cancel_after_start("/sleep")
        self.assertEqual(events, [{"type": "cancelled", "call": "c-1"}])
        self.assertEqual(self.call(self.worker, "c-2", "/echo", {"text": "next"})[-1]["value"], "next")

    def test_cancelling_an_async_call_answers_cancelled(self):
        events = self.cancel_after_start("/async-sleep")
        self.assertEqual(events, [{"type": "cancelled", "call": "c-1"}])
        self.assertEqual(self.call(self.worker, "c-2", "/double", {"number": 1})[-1]["value"], 2)

    def test_except_exception_in_user_code_does_not_swallow_a_cancel(self):
        events = self.cancel_after_start("/stubborn")
        self.assertEqual(events, [{"type": "cancelled", "call": "c-1"}])

    def test_a_cancel_that_overtakes_its_call_stops_it_before_it_starts(self):
        descriptor, path = tempfile.mkstemp(prefix="apipod-test-")
        os.close(descriptor)
        self.addCleanup(lambda: os.path.exists(path) and os.remove(path))
        self.worker.send(protocol.cancel("c-1"))
        time.sleep(0.3)  # the cancel pipe is read first
        reference = {"$file": {"path": path, "file_name": "unread.bin", "content_type": None}}
        self.worker.send(protocol.call("c-1", "/describe-file", {"file": reference}))
        self.assertEqual(self.worker.events_until_end_of("c-1"), [{"type": "cancelled", "call": "c-1"}])
        self.assertFalse(os.path.exists(path))  # its upload is not left behind
        self.assertEqual(self.call(self.worker, "c-2", "/echo", {"text": "next"})[-1]["value"], "next")

    def test_a_cancel_for_another_call_is_ignored(self):
        self.worker.send(protocol.call("c-1", "/sleep", {"seconds": 0.5}))
        self.worker.send(protocol.cancel("c-other"))
        self.assertEqual(self.worker.events_until_end_of("c-1"), [{"type": "result", "call": "c-1", "value": "woke up"}])


class WithdrawTest(WorkerTestCase):
    def setUp(self):
        self.worker, _ = self.start_ready_worker(service_path("calls.py"))

    def test_calls_behind_a_slow_one_are_taken_back_at_once_and_never_run(self):
        descriptor, path = tempfile.mkstemp(prefix="apipod-test-")
        os.close(descriptor)
        self.addCleanup(lambda: os.path.exists(path) and os.remove(path))
        reference = {"$file": {"path": path, "file_name": "kept.bin", "content_type": None}}
        self.worker.send(protocol.call("c-1", "/sleep", {"seconds": 1}))
        self.worker.send(protocol.call("c-2", "/describe-file", {"file": reference}))
        self.worker.send(protocol.call("c-3", "/echo", {"text": "behind"}))
        self.worker.send(protocol.call("c-4", "/echo", {"text": "kept"}))
        time.sleep(0.2)
        sent = time.monotonic()
        self.worker.send(protocol.withdraw(["c-2", "c-3"]))
        self.assertEqual(self.worker.next_event(), {"type": "withdrawn", "calls": ["c-2", "c-3"]})
        self.assertLess(time.monotonic() - sent, 0.5)  # answered mid-sleep, not after it
        self.assertEqual(self.worker.events_until_end_of("c-4"), [
            {"type": "result", "call": "c-1", "value": "woke up"},
            {"type": "result", "call": "c-4", "value": "kept"},
        ])
        self.assertTrue(os.path.exists(path))  # the upload is for the worker that runs the call now

    def test_a_withdraw_racing_its_call_either_takes_it_or_lets_it_run_never_both(self):
        taken = 0
        for n in range(2000):
            call = f"c-{n}"
            self.worker.send(protocol.call(call, "/echo", {"text": call}))
            self.worker.send(protocol.withdraw([call]))
            events = []
            withdrawn, ran = [], []
            while not withdrawn or (withdrawn[0]["calls"] == [] and not ran):
                events.append(self.worker.next_event(timeout=5))
                withdrawn = [event for event in events if event["type"] == "withdrawn"]
                ran = [event for event in events if event.get("call") == call]
            self.assertEqual(len(withdrawn), 1, events)
            self.assertEqual(len(events), len(withdrawn) + len(ran), events)  # none of an earlier call
            if withdrawn[0]["calls"] == [call]:
                taken += 1
                self.assertEqual(events, withdrawn, n)
            else:
                self.assertEqual(withdrawn[0]["calls"], [], n)
                self.assertEqual(ran, [{"type": "result", "call": call, "value": call}], n)
        # The last event seen was the end of the last call or its withdrawal: nothing is left over.
        self.assertEqual(self.call(self.worker, "c-last", "/echo", {"text": "last"})[-1]["value"], "last")
        self.assertTrue(0 < taken < 2000, f"{taken} of 2000 taken: the race was not run both ways")


class LifespanTest(WorkerTestCase):
    def setUp(self):
        descriptor, self.log = tempfile.mkstemp()
        os.close(descriptor)
        self.addCleanup(os.remove, self.log)

    def phases(self) -> list[str]:
        with open(self.log) as log:
            return log.read().splitlines()

    def test_lifespan_starts_once_and_shuts_down_on_the_shutdown_command(self):
        worker, _ = self.start_ready_worker(service_path("lifespan_service.py"), {"LIFESPAN_LOG": self.log})
        self.assertEqual(self.call(worker, "c-1", "/model")[-1]["value"], "loaded")
        self.assertEqual(self.call(worker, "c-2", "/model")[-1]["value"], "loaded")
        self.assertEqual(self.phases(), ["startup"])
        worker.send(protocol.shutdown())
        self.assertIsNone(worker.next_event())
        self.assertEqual(worker.finish()[0], 0)
        self.assertEqual(self.phases(), ["startup", "shutdown"])

    def test_end_of_commands_also_runs_the_shutdown(self):
        worker, _ = self.start_ready_worker(service_path("lifespan_service.py"), {"LIFESPAN_LOG": self.log})
        self.assertEqual(worker.finish()[0], 0)
        self.assertEqual(self.phases(), ["startup", "shutdown"])

    def test_a_plain_generator_works_as_a_lifespan(self):
        worker, _ = self.start_ready_worker(service_path("generator_lifespan.py"), {"LIFESPAN_LOG": self.log})
        self.assertEqual(self.call(worker, "c-1", "/model")[-1]["value"], "loaded by a generator")
        self.assertEqual(worker.finish()[0], 0)
        self.assertEqual(self.phases(), ["generator shutdown"])


class EventLoopTest(WorkerTestCase):
    """One loop for the worker's life, made only when needed."""

    def test_async_endpoints_run_on_the_loop_the_service_took_at_its_import(self):
        service = self.service_from_source(
            "import asyncio\n"
            "from apipod import APIPod\n"
            "app = APIPod()\n"
            "queue = asyncio.Queue()\n"
            "loop = asyncio.get_event_loop()\n"
            "@app.endpoint('/same-loop')\n"
            "async def same_loop() -> bool:\n"
            "    return asyncio.get_running_loop() is loop\n"
        )
        worker, _ = self.start_ready_worker(service)
        self.assertEqual(self.call(worker, "c-1", "/same-loop")[-1]["value"], True)
        self.assertEqual(self.call(worker, "c-2", "/same-loop")[-1]["value"], True)

    def test_async_endpoints_share_the_loop_an_async_lifespan_ran_on(self):
        service = self.service_from_source(
            "import asyncio\n"
            "from contextlib import asynccontextmanager\n"
            "from apipod import APIPod\n"
            "state = {}\n"
            "@asynccontextmanager\n"
            "async def lifespan(app):\n"
            "    state['loop'] = asyncio.get_running_loop()\n"
            "    yield\n"
            "app = APIPod(lifespan=lifespan)\n"
            "@app.endpoint('/same-loop')\n"
            "async def same_loop() -> bool:\n"
            "    return asyncio.get_running_loop() is state['loop']\n"
        )
        worker, _ = self.start_ready_worker(service)
        self.assertEqual(self.call(worker, "c-1", "/same-loop")[-1]["value"], True)

    def test_a_service_that_ran_asyncio_at_its_import_still_gets_a_loop(self):
        service = self.service_from_source(
            "import asyncio\n"
            "from apipod import APIPod\n"
            "async def warm():\n"
            "    return 1\n"
            "asyncio.run(warm())\n"
            "app = APIPod()\n"
            "@app.endpoint('/double')\n"
            "async def double(number: int) -> int:\n"
            "    await asyncio.sleep(0)\n"
            "    return number * 2\n"
        )
        worker, _ = self.start_ready_worker(service)
        self.assertEqual(self.call(worker, "c-1", "/double", {"number": 21})[-1]["value"], 42)

    def test_a_service_of_plain_functions_never_loads_asyncio(self):
        # asyncio is ~6 MiB of an idle worker's ~24: a sync service must not pay for it.
        service = self.service_from_source(
            "import sys\n"
            "from apipod import APIPod\n"
            "app = APIPod()\n"
            "@app.endpoint('/asyncio-loaded')\n"
            "def asyncio_loaded() -> bool:\n"
            "    return 'asyncio' in sys.modules\n"
        )
        worker, _ = self.start_ready_worker(service)
        self.assertEqual(self.call(worker, "c-1", "/asyncio-loaded")[-1]["value"], False)
        self.assertEqual(self.call(worker, "c-2", "/asyncio-loaded")[-1]["value"], False)

    def test_a_plain_function_of_a_service_that_imports_asyncio_finds_the_loop_async_endpoints_run_on(self):
        service = self.service_from_source(
            "import asyncio\n"
            "from apipod import APIPod\n"
            "app = APIPod()\n"
            "seen = {}\n"
            "@app.endpoint('/plain')\n"
            "def plain() -> bool:\n"
            "    seen['loop'] = asyncio.get_event_loop()\n"
            "    return seen['loop'].is_running()\n"
            "@app.endpoint('/same-loop')\n"
            "async def same_loop() -> bool:\n"
            "    return asyncio.get_running_loop() is seen['loop']\n"
        )
        worker, _ = self.start_ready_worker(service)
        self.assertEqual(self.call(worker, "c-1", "/plain")[-1]["value"], False)
        self.assertEqual(self.call(worker, "c-2", "/same-loop")[-1]["value"], True)


class FootprintTest(unittest.TestCase):
    def test_the_worker_loads_no_module_a_service_of_plain_functions_does_not_use(self):
        # Together ~7 MiB of an idle worker's ~24 (asyncio ~6). `-S`: no site-packages .pth
        # files, which may import anything, only what the worker itself imports.
        unused = ("asyncio", "importlib.resources", "tempfile", "shutil", "pathlib")
        script = ("import sys, apipod._runtime.worker, apipod._runtime.call_runner\n"
                  f"print(' '.join(name for name in {unused!r} if name in sys.modules))")
        loaded = subprocess.run([sys.executable, "-S", "-c", script], env={**os.environ, "PYTHONPATH": PYTHON_DIRECTORY},
                                capture_output=True, text=True, check=True).stdout.split()
        self.assertEqual(loaded, [])


class SetupFailureTest(WorkerTestCase):
    def assert_setup_fails(self, service: str, stage: str) -> dict:
        worker = self.start_worker(service_path(service))
        event = worker.next_event()
        self.assertEqual(event["type"], "setup_failed", event)
        self.assertEqual(event["stage"], stage)
        self.assertEqual(worker.finish()[0], 1)
        return event["error"]

    def test_an_import_error_fails_setup_at_the_import_stage(self):
        error = self.assert_setup_fails("import_error.py", "import")
        self.assertEqual(error["type"], "ModuleNotFoundError")
        self.assertIn("module_that_does_not_exist", error["message"])
        self.assertIn("import_error.py", error["traceback"])

    def test_a_file_without_an_app_fails_setup_at_the_import_stage(self):
        error = self.assert_setup_fails("no_app.py", "import")
        self.assertIn("no APIPod instance", error["message"])

    def test_a_missing_file_fails_setup_at_the_import_stage(self):
        error = self.assert_setup_fails("does_not_exist.py", "import")
        self.assertEqual(error["type"], "FileNotFoundError")

    def test_a_failing_lifespan_fails_setup_at_the_lifespan_stage(self):
        error = self.assert_setup_fails("lifespan_failure.py", "lifespan")
        self.assertEqual(error["type"], "RuntimeError")
        self.assertEqual(error["message"], "model weights missing")

    def test_an_undescribable_parameter_fails_setup_at_the_schema_stage(self):
        error = self.assert_setup_fails("bad_schema.py", "schema")
        self.assertIn("/predict", error["message"])
        self.assertIn("'model'", error["message"])


if __name__ == "__main__":
    unittest.main()
