"""Cancelling the running call: the cancel thread sends SIGINT to its own process, and the
handler raises CallCancelled in the main thread, inside the user's code. A signal also wakes
`time.sleep` and blocking I/O, which nothing else could.
"""
from __future__ import annotations

import collections
import signal
import sys
import threading
from typing import Callable, Optional


RESIGNAL_SECONDS = 0.1
_CANCELS_KEPT = 64  # cancels for calls not started yet; the gateway sends at most a few ahead
# Calls started, for a withdraw to tell from those still to come: the gateway withdraws only
# calls it sent behind a running one (eight at the most), and sends no more behind it.
_STARTS_KEPT = 64


class CallCancelled(BaseException):
    """A BaseException, so a user's `except Exception` cannot swallow the cancel."""


class CallWithdrawn(BaseException):
    """The gateway took the call back before it started, to run it in another worker."""


class Cancellation:
    def __init__(self):
        self._lock = threading.Lock()
        self._call_ended = threading.Condition(self._lock)
        self._running_call: Optional[str] = None
        self._is_requested = False
        # Cancels and calls come on separate pipes, so a cancel may overtake its call; and the
        # gateway sends a quick worker's next calls behind its running one, any of which may
        # be cancelled before it starts. The oldest are forgotten: a cancel for a call that
        # ended already is never taken.
        self._cancelled_before_start: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._started: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._withdrawn: set[str] = set()
        self._shield_depth = 0  # main thread only: inside a protocol write
        self._is_deferred = False
        self._shield = _Shield(self)

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._on_interrupt)

    def running(self, call_id: str) -> "_Running":
        """Marks `call_id` as the call a cancel may interrupt while the block runs; raises
        CallWithdrawn at once when the gateway took it back, CallCancelled when its cancel came first."""
        return _Running(self, call_id)

    def _start(self, call_id: str) -> None:
        with self._lock:
            if call_id in self._withdrawn:
                self._withdrawn.discard(call_id)
                self._cancelled_before_start.pop(call_id, None)
                raise CallWithdrawn()
            self._started[call_id] = None
            if len(self._started) > _STARTS_KEPT:
                self._started.popitem(last=False)
            if self._cancelled_before_start.pop(call_id, False) is None:
                raise CallCancelled()
            self._running_call = call_id
            self._is_requested = False

    def _end(self) -> None:
        with self._lock:
            self._running_call = None
            self._is_requested = False
            self._call_ended.notify_all()

    def request(self, call_id: str) -> None:
        """From the cancel thread. A cancel for a call that is not running is kept for when
        that call starts, so a cancel that overtook its call, or came for one waiting behind
        the running call, stops it before it starts.

        The signal goes to the main thread itself (sent to the process, another thread may
        take it), and again every RESIGNAL_SECONDS until the call has taken it: one that
        lands just before the main thread enters a sleep is seen only when the sleep ends."""
        with self._lock:
            if self._running_call != call_id:
                self._cancelled_before_start[call_id] = None
                while len(self._cancelled_before_start) > _CANCELS_KEPT:
                    self._cancelled_before_start.popitem(last=False)
                return
            if self._is_requested:
                return
            self._is_requested = True
            # Checked and sent under the lock, never for a call that has ended; the wait lets
            # the call end (running() notifies), so the next cancel is read at once.
            while self._is_requested and self._running_call == call_id:
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                self._call_ended.wait(RESIGNAL_SECONDS)

    def withdraw(self, call_ids: list[str], answer: Callable[[list[str]], None]) -> None:
        """From the cancel thread: takes back those of `call_ids` that have not started, which
        the main thread then skips without a word, and answers with them (maybe none). The
        answer is given under the lock, so it reaches the gateway before any event of a call
        that comes after them."""
        with self._lock:
            # The running call is among those started: it is never taken.
            taken = [call_id for call_id in call_ids if call_id not in self._started]
            self._withdrawn.update(taken)
            answer(taken)

    def shielded(self) -> "_Shield":
        """Holds a cancel back until the block ends, so it never cuts an event line in half."""
        return self._shield

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


class _Running:
    """`Cancellation.running`'s block. A class, as _Shield is: it wraps every call."""

    __slots__ = ("_cancellation", "_call_id")

    def __init__(self, cancellation: Cancellation, call_id: str):
        self._cancellation = cancellation
        self._call_id = call_id

    def __enter__(self) -> None:
        self._cancellation._start(self._call_id)

    def __exit__(self, *exception: object) -> bool:
        self._cancellation._end()
        return False


class _Shield:
    """`Cancellation.shielded`'s block. A class, not a contextlib generator, which took ~1 us
    a use: it wraps every event line the worker writes, a streamed token's too."""

    __slots__ = ("_cancellation", "_main_thread")

    def __init__(self, cancellation: Cancellation):
        self._cancellation = cancellation
        self._main_thread = threading.main_thread().ident

    def __enter__(self) -> None:
        if threading.get_ident() == self._main_thread:  # the handler only ever raises in the main thread
            self._cancellation._shield_depth += 1

    def __exit__(self, *exception: object) -> bool:
        if threading.get_ident() != self._main_thread:
            return False
        cancellation = self._cancellation
        cancellation._shield_depth -= 1
        if cancellation._shield_depth == 0 and cancellation._is_deferred:
            cancellation._is_deferred = False
            cancellation._raise_if_requested()
        return False
