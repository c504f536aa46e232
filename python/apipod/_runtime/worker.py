"""The worker process: `python -m apipod._runtime.worker SERVICE_FILE` (see docs/worker-protocol.md).

Imports the service, describes its endpoints, runs its lifespan, reports `ready`, then reads
calls off the command pipe and runs them one at a time in the main thread, while a thread
waits on the cancel pipe. Reading calls in the main thread saves a thread hand-off per call
(a third of a trivial call's CPU); cancels need their own pipe and thread, since they must
arrive while the main thread is busy in the user's code.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from . import protocol
from ..app import APIPod, Endpoint
from .cancellation import Cancellation
from .channel import EventWriter, read_commands
from .endpoint_description import describe_endpoint
from .event_loop import WorkerLoop, event_loop
from .lifespan import Lifespan
from .service_loader import load_app
from .signature import EndpointSignature, read_signature
from .value_depth import make_room_for

if TYPE_CHECKING:
    import asyncio


class SetupFailed(Exception):
    def __init__(self, stage: str, cause: BaseException):
        super().__init__(stage)
        self.stage = stage
        self.cause = cause


@dataclass
class Service:
    app: APIPod
    endpoints: list[tuple[Endpoint, EndpointSignature]]
    descriptions: list[dict]
    lifespan: Lifespan
    # Made before the lifespan starts, when the service has one; else once the worker is ready.
    loop: Optional[asyncio.AbstractEventLoop]


# How long the worker polls for its next call before it sleeps on the pipe (channel._Lines).
DEFAULT_COMMAND_POLL_US = 500
ORPHAN_CHECK_SECONDS = 1.0  # how soon a worker notices that its gateway died


def main(arguments: list[str]) -> int:
    if len(arguments) != 1:
        print("usage: python -m apipod._runtime.worker SERVICE_FILE", file=sys.stderr)
        return 2
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)  # user prints reach the gateway while their call runs
    command_descriptor = int(os.environ.get("APIPOD_COMMAND_FD", "3"))
    event_descriptor = int(os.environ.get("APIPOD_EVENT_FD", "4"))
    cancel_descriptor = int(os.environ.get("APIPOD_CANCEL_FD", "5"))
    for descriptor in (command_descriptor, event_descriptor, cancel_descriptor):
        try:
            os.set_inheritable(descriptor, False)  # a user's subprocess must not hold the pipes open
        except OSError:
            print(f"apipod worker: file descriptor {descriptor} is not open; svc starts workers with "
                  "commands on fd 3, events on fd 4 and cancels on fd 5", file=sys.stderr)
            return 2

    poll_microseconds = os.environ.get("APIPOD_COMMAND_POLL_US", str(DEFAULT_COMMAND_POLL_US))
    max_event_bytes = os.environ.get("APIPOD_MAX_EVENT_BYTES", "")
    max_value_depth = os.environ.get("APIPOD_MAX_VALUE_DEPTH", "")
    for name, value, unit in (("APIPOD_COMMAND_POLL_US", poll_microseconds, "microseconds"),
                              ("APIPOD_MAX_EVENT_BYTES", max_event_bytes or "0", "bytes"),
                              ("APIPOD_MAX_VALUE_DEPTH", max_value_depth or "0", "levels")):
        if not value.isdigit():
            print(f"apipod worker: {name} must be a whole number of {unit}, not {value!r}", file=sys.stderr)
            return 2
    if max_value_depth:
        make_room_for(int(max_value_depth))

    run_as_batch_work()  # before any thread starts: each inherits its starter's policy
    threading.Thread(target=exit_when_orphaned, args=(os.getppid(),), name="apipod-orphan-watch", daemon=True).start()
    cancellation = Cancellation()
    cancellation.install()
    events = EventWriter(event_descriptor, cancellation.shielded, int(max_event_bytes) if max_event_bytes else None)
    try:
        service = set_up(arguments[0])
    except SetupFailed as failure:
        events.send(protocol.setup_failed(failure.stage, protocol.error_info(failure.cause)))
        return 1
    app = service.app
    events.send(protocol.ready(
        sys.version.split()[0],  # what platform.python_version() says, without importing platform
        {"title": app.title, "compute": app.compute, "provider": app.provider},
        service.descriptions,
    ))

    # Imported once the gateway has the endpoints: the call runner loads while it builds its
    # routes, not before it can.
    from .call_runner import CallRunner, ServedEndpoint

    loop = WorkerLoop(service.loop)
    loop.make_if_asyncio_is_loaded()
    threading.Thread(target=receive_cancels, args=(cancel_descriptor, cancellation, events),
                     name="apipod-cancels", daemon=True).start()
    runner = CallRunner([ServedEndpoint(endpoint, signature) for endpoint, signature in service.endpoints],
                        events, cancellation, loop, int(max_value_depth) if max_value_depth else None)
    for command in read_commands(command_descriptor, protocol.CALL_CHANNEL_TYPES, int(poll_microseconds) / 1e6):
        if command["type"] == "shutdown":  # start nothing more
            break
        runner.run(command)

    try:
        service.lifespan.stop()
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        loop.close()
    return 0


def set_up(service_file: str) -> Service:
    """Import, then schemas (so a bad signature fails before a long model load), then lifespan."""
    try:
        app = load_app(service_file)
    except BaseException as error:  # SystemExit from a service's top level too
        raise SetupFailed("import", error) from None
    try:
        endpoints = [(endpoint, read_signature(endpoint.path, endpoint.function)) for endpoint in app.endpoints]
        descriptions = [describe_endpoint(endpoint, signature) for endpoint, signature in endpoints]
    except Exception as error:
        raise SetupFailed("schema", error) from None
    loop = event_loop() if app.lifespan is not None else None
    lifespan = Lifespan(app.lifespan, app, loop)
    try:
        lifespan.start()
    except BaseException as error:
        raise SetupFailed("lifespan", error) from None
    return Service(app, endpoints, descriptions, lifespan, loop)


def run_as_batch_work() -> None:
    """Puts the worker under Linux's SCHED_BATCH policy: the same share of the CPU as any
    process, but its wake-ups never preempt a running one. The worker wakes for each call the
    gateway sends, and preempting the gateway halfway through a turn costs both processes a
    context switch and their caches: with a CPU-bound process beside them on two cores, the
    gateway was preempted about once a request, as batch work half as often; three runs made
    1.15x, 0.95x and 1.10x the requests a second (bench/RESULTS.md, run 23). The threads and
    subprocesses the service starts inherit the policy."""
    if not hasattr(os, "SCHED_BATCH"):
        return  # not Linux: the default policy
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except OSError:
        pass  # a sandbox that forbids it: the default policy serves, only slower under load


def exit_when_orphaned(gateway: int) -> None:
    """The watchdog thread. A gateway that dies without shutting its workers down (SIGKILL,
    the OOM killer) leaves them to the init process; one in a call that never ends would hold
    its GPU memory for good. So once the parent is gone, the worker goes, with the
    subprocesses of its own process group (svc starts each worker as a group's leader)."""
    while os.getppid() == gateway:
        time.sleep(ORPHAN_CHECK_SECONDS)
    # Nothing to say it on: the pipes to the gateway are closed, and writing to them would raise.
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(1)


def receive_cancels(descriptor: int, cancellation: Cancellation, events: EventWriter) -> None:
    """The cancel thread: asleep until a cancel or a withdraw arrives, which then acts at once
    (a withdraw comes while the main thread is in a long call)."""
    for command in read_commands(descriptor, protocol.CANCEL_CHANNEL_TYPES):
        if command["type"] == "withdraw":
            cancellation.withdraw(command["calls"], lambda taken: events.send(protocol.withdrawn(taken)))
        else:
            cancellation.request(command["call"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
