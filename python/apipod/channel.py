"""The protocol pipes: commands arrive on one descriptor, events leave on another, each a
JSON object on one UTF-8 line."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from typing import Callable, ContextManager, Iterator

from .protocol import validate_command


class EventWriter:
    """Thread-safe: progress may come from any of the user's threads while the main thread
    sends chunks. Each event is written whole and unbuffered, so the gateway sees it at once."""

    def __init__(self, descriptor: int, shield: Callable[[], ContextManager] = contextlib.nullcontext):
        self._descriptor = descriptor
        self._shield = shield  # holds a cancel back until the line is written
        self._lock = threading.Lock()

    def send(self, message: dict) -> None:
        line = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
        remaining = memoryview(line.encode("utf-8"))
        with self._shield(), self._lock:
            while remaining:
                remaining = remaining[os.write(self._descriptor, remaining):]


def read_commands(descriptor: int, accepted_types: tuple[str, ...]) -> Iterator[dict]:
    """Valid commands of the pipe's types until EOF. Any other line is reported on stderr
    and skipped."""
    with open(descriptor, "rb", closefd=False) as stream:
        for line in stream:
            if not line.strip():
                continue
            try:
                command = validate_command(json.loads(line))
                if command["type"] not in accepted_types:
                    raise ValueError(f"a {command['type']} command does not belong on fd {descriptor}")
                yield command
            except ValueError as error:  # bad JSON, bad UTF-8, a malformed or misplaced command
                print(f"apipod worker: ignoring a command line ({error}): {line[:200]!r}", file=sys.stderr)
