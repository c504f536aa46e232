"""A worker subprocess wired the way the gateway wires it: commands on fd 3, events on fd 4,
cancels on fd 5."""
from __future__ import annotations

import fcntl
import json
import os
import queue
import subprocess
import sys
import threading
from typing import Optional

from apipod._runtime.protocol import validate_event

PYTHON_DIRECTORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVICES = os.path.join(PYTHON_DIRECTORY, "tests", "services")
REPOSITORY = os.path.dirname(PYTHON_DIRECTORY)


def service_path(name: str) -> str:
    return os.path.join(SERVICES, name)


class WorkerProcess:
    def __init__(self, service_file: str, environment: Optional[dict] = None):
        command_read, command_write = _pipe_above_standard_descriptors()
        event_read, event_write = _pipe_above_standard_descriptors()
        cancel_read, cancel_write = _pipe_above_standard_descriptors()

        def wire_protocol_descriptors():  # runs in the child, before exec
            os.dup2(command_read, 3)
            os.dup2(event_write, 4)
            os.dup2(cancel_read, 5)

        self.process = subprocess.Popen(
            [sys.executable, "-m", "apipod._runtime.worker", service_file],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": PYTHON_DIRECTORY, **(environment or {})},
            preexec_fn=wire_protocol_descriptors, close_fds=False,
        )
        os.close(command_read)
        os.close(event_write)
        os.close(cancel_read)
        self._commands = os.fdopen(command_write, "wb", buffering=0)
        self._cancels = os.fdopen(cancel_write, "wb", buffering=0)
        self._events: queue.Queue = queue.Queue()
        threading.Thread(target=self._read_events, args=(event_read,), daemon=True).start()

    def send(self, message: dict) -> None:
        """On the message's pipe, as the gateway sends it: cancels and withdraws on fd 5, the rest on fd 3."""
        self.send_on(5 if message["type"] in ("cancel", "withdraw") else 3, message)

    def send_on(self, descriptor: int, message: dict) -> None:
        pipe = self._cancels if descriptor == 5 else self._commands
        pipe.write((json.dumps(message) + "\n").encode("utf-8"))

    def next_event(self, timeout: float = 20) -> dict:
        """The next event, checked against the protocol; None once the worker closed fd 4."""
        event = self._events.get(timeout=timeout)
        return event if event is None else validate_event(event)

    def events_until_end_of(self, call_id: str, timeout: float = 20) -> list[dict]:
        """Events up to and including the one that ends `call_id`."""
        events = []
        while True:
            event = self.next_event(timeout)
            events.append(event)
            if event is None or (event.get("call") == call_id and event["type"] in ("result", "streamed", "error", "cancelled")):
                return events

    def finish(self, timeout: float = 20) -> tuple[int, str, str]:
        """Closes fd 3 if still open, waits for the exit; returns (exit code, stdout, stderr)."""
        self._close_pipes()
        stdout, stderr = self.process.communicate(timeout=timeout)
        return self.process.returncode, stdout.decode(), stderr.decode()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()
        self._close_pipes()

    def _close_pipes(self) -> None:
        for pipe in (self._commands, self._cancels):
            if not pipe.closed:
                pipe.close()

    def _read_events(self, descriptor: int) -> None:
        with os.fdopen(descriptor, "rb") as stream:
            for line in stream:
                self._events.put(json.loads(line))
        self._events.put(None)


def _pipe_above_standard_descriptors() -> tuple[int, int]:
    """A pipe whose ends are above 5, so moving them onto 3, 4 and 5 in the child clobbers none."""
    ends = []
    for end in os.pipe():
        ends.append(fcntl.fcntl(end, fcntl.F_DUPFD_CLOEXEC, 10))
        os.close(end)
    return ends[0], ends[1]
