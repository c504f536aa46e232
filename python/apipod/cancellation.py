"""Cancelling the running call: the command reader sends SIGINT to its own process, and the
handler raises CallCancelled in the main thread, inside the user's code. A signal also wakes
`time.sleep` and blocking I/O, which nothing else could.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator, Optional


class CallCancelled(BaseException):
    """A BaseException, so a user's `except Exception` cannot swallow the cancel."""


class Cancellation:
    def __init__(self):
        self._lock = threading.Lock()
        self._running_call: Optional[str] = None
        self._is_requested = False
        self._shield_depth = 0  # main thread only: inside a protocol write
        self._is_deferred = False

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._on_interrupt)

    @contextlib.contextmanager
    def running(self, call_id: str) -> Iterator[None]:
        """Marks `call_id` as the call a cancel may interrupt while the block runs."""
        with self._lock:
            self._running_call = call_id
            self._is_requested = False
        try:
            yield
        finally:
            with self._lock:
                self._running_call = None
                self._is_requested = False

    def request(self, call_id: str) -> None:
        """From the command reader thread. A cancel for a call that is not running is ignored."""
        with self._lock:
            if self._running_call != call_id or self._is_requested:
                return
            self._is_requested = True
        os.kill(os.getpid(), signal.SIGINT)

    @contextlib.contextmanager
    def shielded(self) -> Iterator[None]:
        """Holds a cancel back until the block ends, so it never cuts an event line in half."""
        if threading.current_thread() is not threading.main_thread():
            yield  # the handler only ever raises in the main thread
            return
        self._shield_depth += 1
        try:
            yield
        finally:
            self._shield_depth -= 1
            if self._shield_depth == 0 and self._is_deferred:
                self._is_deferred = False
                self._raise_if_requested()

    def _on_interrupt(self, signum, frame) -> None:
        if self._shield_depth > 0:
            self._is_deferred = True
            return
        self._raise_if_requested()

    def _raise_if_requested(self) -> None:
        if not self._is_requested or self._running_call is None:
            # Not our cancel (say Ctrl-C in the terminal reaching the whole process group):
            # the gateway decides when a worker stops, by `shutdown`, EOF or a kill.
            print("apipod worker: ignoring a SIGINT that cancels no running call", file=sys.stderr)
            return
        # Forget the call first: one cancel raises once, whatever happens next.
        self._running_call = None
        self._is_requested = False
        raise CallCancelled()
