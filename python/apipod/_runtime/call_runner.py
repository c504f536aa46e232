"""Runs one call: binds its arguments, runs the endpoint (plain or async, function or
generator) and ends the call with exactly one of `result` (`streamed` for a generator),
`error` or `cancelled`."""
from __future__ import annotations

import collections.abc
import contextlib
import inspect
import io
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

from . import protocol
from ..app import Endpoint
from .arguments import ArgumentError, bind_arguments
from .cancellation import CallCancelled, CallWithdrawn, Cancellation
from .channel import EventWriter, ResultTooLarge
from .event_loop import WorkerLoop
from .file_reference import delete_referenced_files
from ..progress import JobProgress
from .serialise import to_json_value
from .signature import EndpointSignature


@dataclass(frozen=True)
class ServedEndpoint:
    endpoint: Endpoint
    signature: EndpointSignature


@dataclass(frozen=True)
class StreamedChunks:
    """A generator's call ended: its result is the `count` chunks it sent."""
    count: int


class CallRunner:
    def __init__(self, endpoints: list[ServedEndpoint], events: EventWriter, cancellation: Cancellation,
                 loop: WorkerLoop, max_value_depth: Optional[int] = None):
        self._endpoints = {served.endpoint.path: served for served in endpoints}
        self._events = events
        self._cancellation = cancellation
        self._loop = loop  # one loop for the worker's life: lifespan resources may be bound to it
        self._max_value_depth = max_value_depth  # the deepest result the gateway reads (APIPOD_MAX_VALUE_DEPTH)

    def run(self, command: dict) -> None:
        call_id = command["call"]
        call_is_over = False  # a flag, not a threading.Event: no other thread waits on it

        def report_progress(fraction, message):
            if not call_is_over:  # a leftover user thread must not report on an ended call
                self._events.send(protocol.progress(call_id, fraction, message))

        job_progress = JobProgress(reporter=report_progress)
        try:
            with self._cancellation.running(call_id):
                try:
                    served = self._find(command["endpoint"])
                    positional, keywords = bind_arguments(served.signature.parameters, command["arguments"],
                                                          job_progress)
                finally:
                    delete_referenced_files(_file_holders(command))
                value = self._invoke(call_id, served.endpoint.function, positional, keywords)
                if isinstance(value, StreamedChunks):
                    outcome = protocol.streamed(call_id, value.count)
                else:
                    outcome = protocol.result(call_id, to_json_value(value, self._max_value_depth, doubles=True))
        except CallWithdrawn:
            return  # another worker runs it, with its uploads: nothing to say, nothing to delete
        except CallCancelled:
            delete_referenced_files(_file_holders(command))  # cancelled before it started: unread uploads
            outcome = protocol.cancelled(call_id)
        except BaseException as exception:  # SystemExit from user code fails the call, not the worker
            # The gateway logs the traceback from the event, tagged with this call.
            argument = exception.argument if isinstance(exception, ArgumentError) else None
            outcome = protocol.error(call_id, protocol.error_info(exception, argument))
        finally:
            call_is_over = True
        # The gateway tags output lines with the running call: let them out before it ends.
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            self._events.send(outcome)
        except ResultTooLarge as too_large:
            self._events.send(protocol.error(call_id, protocol.error_info(too_large)))

    def _find(self, path: str) -> ServedEndpoint:
        if path not in self._endpoints:
            raise LookupError(f"no endpoint {path}; this service has {', '.join(sorted(self._endpoints))}")
        return self._endpoints[path]

    def _invoke(self, call_id: str, function: Callable, positional: list, keywords: dict) -> Any:
        outcome = function(*positional, **keywords)
        if inspect.isawaitable(outcome):
            outcome = self._await(outcome)
        if inspect.isasyncgen(outcome) or _is_async_iterator(outcome):
            return self._stream_async(call_id, outcome)
        if inspect.isgenerator(outcome) or _is_plain_iterator(outcome):
            # A returned iterator (e.g. a text streamer) streams like a generator does.
            return self._stream(call_id, outcome)
        return outcome

    def _stream(self, call_id: str, generator) -> StreamedChunks:
        # Each chunk is sent and let go: the gateway keeps them, and they are the result.
        count = size = 0
        try:
            for item in generator:
                size = self._send_chunk(call_id, item, size)
                count += 1
        finally:
            close = getattr(generator, "close", None)
            if close is not None:
                close()
        return StreamedChunks(count)

    def _stream_async(self, call_id: str, generator) -> StreamedChunks:
        count = size = 0
        try:
            while True:
                try:
                    item = self._await(generator.__anext__())
                except StopAsyncIteration:
                    break
                size = self._send_chunk(call_id, item, size)
                count += 1
        finally:
            aclose = getattr(generator, "aclose", None)
            if aclose is not None:
                self._await(aclose())
        return StreamedChunks(count)

    def _send_chunk(self, call_id: str, item: Any, sent_before: int) -> int:
        if type(item) is str:  # a streamed token: nothing in it to convert, nor files to delete
            return self._events.send_text_chunk(call_id, item, sent_before)
        value = to_json_value(item, self._max_value_depth)
        try:
            return self._events.send_chunk(protocol.chunk(call_id, value), sent_before)
        except BaseException:  # unsent (too large, or the call cancelled): its files go with it
            delete_referenced_files(value)
            raise

    def _await(self, awaitable) -> Any:
        import asyncio  # loaded by the loop's making: a service of plain functions never pays for it

        loop = self._loop.get()
        task = asyncio.ensure_future(awaitable, loop=loop)
        try:
            return loop.run_until_complete(task)
        except CallCancelled:
            # The signal may have landed outside the task: cancel it so its own cleanup runs.
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
            raise


def _is_plain_iterator(value: Any) -> bool:
    """An iterator to stream: not text, bytes or a file, which are iterators by accident."""
    return isinstance(value, collections.abc.Iterator) and not isinstance(value, (str, bytes, io.IOBase))


def _is_async_iterator(value: Any) -> bool:
    return isinstance(value, collections.abc.AsyncIterator)


def _file_holders(command: dict) -> dict:
    """The arguments that may hold file references: not the lists of numbers that came as
    doubles (a walk through 200,000 floats looking for one costs ~3 ms)."""
    numbers = command.get("numbers")
    arguments = command["arguments"]
    return {name: value for name, value in arguments.items() if name not in numbers} if numbers else arguments
