"""Where a worker's time goes on a trivial call, without HTTP and without the gateway.

  python3 bench/serve/profile_worker.py [--calls 20000] [--cprofile]

1. in-process: svc's CallRunner.run() on one `call` command, events written to /dev/null
   (argument binding, the call, serialising and writing the result event);
2. over the pipes: a real `python -m apipod._runtime.worker` child, driven from here the way the
   gateway drives it (one call line on fd 3, wait for the result line on fd 4), so the
   difference to (1) is the pipe round trip and the worker's reader-thread hand-off;
3. the bare floor: the same pipe ping-pong with a 10-line Python echo child.
Uses svc's own python/apipod toolkit (first on sys.path), not any installed copy.
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLKIT = os.path.join(HERE, "..", "..", "python")
SERVICE = os.path.join(HERE, "svc", "service.py")
sys.path.insert(0, TOOLKIT)

from apipod._runtime.call_runner import CallRunner, ServedEndpoint  # noqa: E402
from apipod._runtime.cancellation import Cancellation  # noqa: E402
from apipod._runtime.channel import EventWriter  # noqa: E402
from apipod._runtime.service_loader import load_app  # noqa: E402
from apipod._runtime.signature import read_signature  # noqa: E402

ECHO_CHILD = r"""
import os
r = os.fdopen(3, "rb", buffering=0)
buf = b""
while True:
    chunk = os.read(3, 65536)
    if not chunk:
        break
    buf += chunk
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        os.write(4, b'{"type":"result","call":"x","value":{"text":"hello"}}\n')
"""


def in_process(calls: int, profile: bool) -> float:
    app = load_app(SERVICE)
    endpoints = [ServedEndpoint(e, read_signature(e.path, e.function)) for e in app.endpoints]
    devnull = os.open(os.devnull, os.O_WRONLY)
    cancellation = Cancellation()
    cancellation.install()
    runner = CallRunner(endpoints, EventWriter(devnull, cancellation.shielded), cancellation, asyncio.new_event_loop())
    command = {"type": "call", "call": "c-1", "endpoint": "/echo", "arguments": {"text": "hello"}}
    for _ in range(1000):
        runner.run(command)
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    for i in range(calls):
        runner.run({**command, "call": f"c-{i}"})
    if profiler:
        profiler.disable()
    elapsed = time.perf_counter() - started
    if profiler:
        print("\ncProfile of CallRunner.run, by own time (top 15):")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
    return elapsed / calls * 1e6


def ping_pong(argv: list[str], calls: int, env: dict, ready: bool) -> tuple[float, float]:
    """Mean microseconds per call over the pipes, and the child's CPU microseconds per call."""
    command_read, command_write = os.pipe()
    event_read, event_write = os.pipe()
    cancel_read, cancel_write = os.pipe()  # no cancels here, but the worker wants the pipe
    child = subprocess.Popen(argv, env=env, close_fds=False, cwd=HERE,
                             preexec_fn=lambda: (os.dup2(command_read, 3), os.dup2(event_write, 4),
                                                 os.dup2(cancel_read, 5)),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    os.close(command_read)
    os.close(event_write)
    os.close(cancel_read)
    events = os.fdopen(event_read, "rb")
    if ready:
        json.loads(events.readline())  # the worker's `ready`

    def one(i: int) -> None:
        line = json.dumps({"type": "call", "call": f"c-{i}", "endpoint": "/echo", "arguments": {"text": "hello"}})
        os.write(command_write, (line + "\n").encode())
        events.readline()

    for i in range(1000):
        one(i)
    cpu_before = _cpu_seconds(child.pid)
    started = time.perf_counter()
    for i in range(calls):
        one(i)
    elapsed = time.perf_counter() - started
    cpu = _cpu_seconds(child.pid) - cpu_before
    os.close(command_write)
    os.close(cancel_write)
    child.wait(timeout=30)
    return elapsed / calls * 1e6, cpu / calls * 1e6


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--cprofile", action="store_true")
    options = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": TOOLKIT, "APIPOD_COMMAND_FD": "3", "APIPOD_EVENT_FD": "4",
           "APIPOD_CANCEL_FD": "5", "PYTHONUNBUFFERED": "1"}
    run_us = in_process(options.calls, False)
    worker_us, worker_cpu_us = ping_pong([sys.executable, "-m", "apipod._runtime.worker", SERVICE], options.calls, env, True)
    echo_us, echo_cpu_us = ping_pong([sys.executable, "-c", ECHO_CHILD], options.calls, env, False)
    print(f"calls: {options.calls}, Python {sys.version.split()[0]}")
    print(f"1. CallRunner.run in-process (bind, call, serialise, write event): {run_us:7.1f} us/call")
    print(f"2. real worker over pipes, one call at a time:                   {worker_us:7.1f} us/call "
          f"(worker CPU {worker_cpu_us:.1f} us/call)")
    print(f"3. bare Python echo child over the same pipes:                   {echo_us:7.1f} us/call "
          f"(child CPU {echo_cpu_us:.1f} us/call)")
    print(f"   worker overhead beyond the bare pipe round trip: {worker_us - echo_us:.1f} us/call")
    if options.cprofile:
        in_process(options.calls, True)


if __name__ == "__main__":
    main()
