"""`python -m apipod._runtime.runpod_bridge`: the service as a worker of the serverless GPU provider.

`svc start --provider runpod` starts this process beside its gateway and Python workers.
The provider's own library (`runpod.serverless`) takes the jobs: from the provider's job
endpoints in production (the RUNPOD_WEBHOOK_* variables it sets on its workers), from the
library's local test server, or from one test input. The handler here routes each job to
an endpoint by the "path" in its input and runs it through svc's gateway, so validation,
media, progress, time-outs and errors are those of local serving, implemented once.

The library decides per handler, not per job, whether a handler streams, so the handler
streams when any endpoint is a generator: each job's output is then the list of the
parts it yielded, and an endpoint that returns once yields its result as the only part.

svc passes its settings as JSON in APIPOD_RUNPOD_SETTINGS: the gateway's URL and key, the
concurrency (one job per worker process), the routes, and the mode.
"""
from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Optional

from .gateway_client import Accepted, Chunk, Failed, Finished, GatewayClient, Progress
from .provider_routes import JobInputError, Route, route_job

SETTINGS_ENV = "APIPOD_RUNPOD_SETTINGS"
# The library posts each progress update from a thread of its own: a function that reports
# per token would otherwise start a thread and a request per token.
PROGRESS_INTERVAL_SECONDS = 0.2

Payload = dict


class ProgressReporter:
    """Forwards a job's progress at most once per interval; the last of a burst goes out
    when its interval ends, unless the job has ended first (its result says more)."""

    def __init__(self, send: Callable[[Payload], None], interval: float = PROGRESS_INTERVAL_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._send = send
        self._interval = interval
        self._clock = clock
        self._last_sent = -math.inf
        self._pending: Optional[Payload] = None
        self._timer: Optional[asyncio.TimerHandle] = None

    def report(self, payload: Payload) -> None:
        if self._timer is not None:
            self._pending = payload
            return
        wait = self._last_sent + self._interval - self._clock()
        if wait <= 0:
            self._emit(payload)
            return
        self._pending = payload
        self._timer = asyncio.get_running_loop().call_later(wait, self._flush)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _flush(self) -> None:
        self._timer = None
        payload, self._pending = self._pending, None
        if payload is not None:
            self._emit(payload)

    def _emit(self, payload: Payload) -> None:
        self._last_sent = self._clock()
        self._send(payload)


def progress_payload(event: Progress) -> Optional[Payload]:
    """The update the provider receives: the fraction as it is (not rounded) and the message.
    None for the initial state every job starts in."""
    if event.progress in (None, 0) and event.message is None:
        return None
    return {"progress": event.progress, "message": event.message}


SendProgress = Callable[[dict, Payload], None]


def plain_handler(client: GatewayClient, routes: list[Route], send_progress: Optional[SendProgress]):
    """A handler that returns the function's result, or {"error": message}: the library then
    marks the job failed."""

    async def handler(job: dict) -> Any:
        try:
            route, arguments = route_job(job.get("input"), routes)
        except JobInputError as error:
            return {"error": str(error)}
        outcome: Any = None
        async for event in _call(client, route, arguments, job, send_progress):
            if isinstance(event, Finished):
                outcome = event.result
            elif isinstance(event, Failed):
                outcome = {"error": event.message}
        return outcome

    return handler


def streaming_handler(client: GatewayClient, routes: list[Route], send_progress: Optional[SendProgress]):
    """A handler that yields each chunk as it comes (the library streams it and returns the
    list); an endpoint that returns once yields its result; a failure is yielded as
    {"error": message}, which ends the job failed."""

    async def handler(job: dict):
        try:
            route, arguments = route_job(job.get("input"), routes)
        except JobInputError as error:
            yield {"error": str(error)}
            return
        async for event in _call(client, route, arguments, job, send_progress):
            if isinstance(event, Chunk):
                yield event.value
            elif isinstance(event, Finished) and not route.streams_chunks:
                yield event.result
            elif isinstance(event, Failed):
                yield {"error": event.message}

    return handler


def aggregating_handler(client: GatewayClient, routes: list[Route], send_progress: Optional[SendProgress]):
    """What the library's worker loop makes of `streaming_handler`, done here for its local
    test modes, which do not do it: the parts as one list, or {"error": message} when a part
    is a failure. Their runsync would otherwise list the failure as output and say COMPLETED."""
    stream = streaming_handler(client, routes, send_progress)

    async def handler(job: dict) -> Any:
        parts = []
        async for part in stream(job):
            if isinstance(part, dict) and part.get("error"):
                return {"error": str(part["error"])}
            parts.append(part)
        return parts

    return handler


async def _call(client: GatewayClient, route: Route, arguments: dict, job: dict, send_progress: Optional[SendProgress]):
    """The call's chunks, then one Finished or Failed; its progress goes to the provider."""
    reporter = ProgressReporter(lambda payload: send_progress(job, payload)) if send_progress else None
    try:
        async for event in client.call(route, arguments):
            if isinstance(event, Accepted):
                _log_svc_job(job, event.job_id)
                continue
            if not isinstance(event, Progress):
                yield event
                continue
            payload = progress_payload(event)
            if reporter is not None and payload is not None:
                reporter.report(payload)
    finally:
        if reporter is not None:
            reporter.close()


def _log_svc_job(job: dict, svc_job_id: str) -> None:
    """The provider's job id beside svc's, which tags the worker's output for the job."""
    from runpod.serverless.modules.rp_logger import RunPodLogger

    RunPodLogger().info(f"svc job {svc_job_id}", job.get("id"))


def library_arguments(mode: dict) -> list[str]:
    """The command line the library reads its mode from (runpod.serverless parses sys.argv)."""
    if mode["kind"] == "test-server":
        return ["--rp_serve_api", "--rp_api_host", mode["host"], "--rp_api_port", str(mode["port"])]
    if mode["kind"] == "test-input":
        return ["--test_input", json.dumps(mode["job"])]
    return []


def recording_result(handler, result_fd: int):
    """The plain handler, also writing the job's result as the library will report it on a
    pipe to svc, which prints it."""

    async def recorded(job: dict) -> Any:
        output = await handler(job)
        with os.fdopen(result_fd, "w", encoding="utf-8") as pipe:
            pipe.write(json.dumps(library_result(output)) + "\n")
        return output

    return recorded


def library_result(output: Any) -> dict:
    """A handler's output as the library reports the job (run_job in runpod/serverless/modules/
    rp_job.py): a dict's truthy "error" fails it, its "error" and "refresh_worker" keys are
    not output, and an empty output is left out."""
    if not isinstance(output, dict):
        return {"output": output}
    rest = {key: value for key, value in output.items() if key not in ("error", "refresh_worker")}
    result: dict = {"output": rest} if rest else {}
    if output.get("error"):
        result["error"] = output["error"]
    return result


def stop_when_svc_is_gone() -> None:
    """svc holds this process's stdin open; once it closes (svc stopped, or died), stop as
    the provider stops a worker (SIGTERM: running jobs end, no new ones are taken), so no
    job is taken that nobody can run."""
    def watch() -> None:
        # os.read, not sys.stdin: a daemon thread holding the buffered reader's lock makes
        # the interpreter abort when it exits.
        while os.read(0, 4096):
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="svc-watch", daemon=True).start()


def main() -> None:
    stop_when_svc_is_gone()
    settings = json.loads(os.environ.pop(SETTINGS_ENV))
    routes = [Route.from_json(route) for route in settings["routes"]]
    client = GatewayClient(settings["gateway"], settings["key"])
    mode = settings["mode"]
    sys.argv = [sys.argv[0], *library_arguments(mode)]

    import runpod  # the provider's library; svc checked that it is installed

    # Only the provider's own job endpoints receive progress; locally there is nowhere to post it.
    send_progress = runpod.serverless.progress_update if mode["kind"] == "worker" else None
    if not any(route.streams_chunks for route in routes):
        handler = plain_handler(client, routes, send_progress)
    elif mode["kind"] == "worker":
        handler = streaming_handler(client, routes, send_progress)
    else:
        # The test server and the one-job path give a streamed failure no FAILED status (and the
        # one-job path runs only plain functions): same output as a worker, without the stream.
        handler = aggregating_handler(client, routes, send_progress)
    if mode["kind"] == "test-input":
        handler = recording_result(handler, settings["result_fd"])
    concurrency = settings["concurrency"]
    runpod.serverless.start({
        "handler": handler,
        "concurrency_modifier": lambda _current: concurrency,
        "return_aggregate_stream": True,
    })


if __name__ == "__main__":
    main()
