"""The protocol pipes: commands arrive on one descriptor, events leave on another, each a
JSON object on one UTF-8 line."""
from __future__ import annotations

import array
import binascii
import contextlib
import json
import os
import re
import select
import sys
import threading
import time
from json.encoder import encode_basestring
from typing import Callable, ContextManager, Iterator, Optional

from .doubles import Doubles
from .machine_load import OtherLoad
from .protocol import validate_command

_READ_SIZE = 1 << 16  # bytes per read of a command pipe
KEPT_LINE_BYTES = 8 << 20  # a buffer for a call's texts and numbers this large is kept for the next call


class ResultTooLarge(ValueError):
    """A result, chunk or progress message too large to send as one event."""


class EventWriter:
    """Thread-safe: progress may come from any of the user's threads while the main thread
    sends chunks. Each event is written whole and unbuffered, so the gateway sees it at once."""

    def __init__(self, descriptor: int, shield: Callable[[], ContextManager] = contextlib.nullcontext,
                 max_bytes: Optional[int] = None):
        self._descriptor = descriptor
        self._shield = shield  # holds a cancel back until the line is written
        self._lock = threading.Lock()
        self._max_bytes = max_bytes  # the longest line the reader takes (APIPOD_MAX_EVENT_BYTES)

    def send(self, message: dict) -> None:
        if message["type"] == "result":
            self._write(*self._encode_result(message))
        else:
            self._write(self._encode(message))

    def send_chunk(self, chunk: dict, sent_before: int) -> int:
        """Writes a generator's chunk event. Its chunks together are its result, which must fit
        in one event as a list: `sent_before` is the size of its earlier chunks. Returns the total."""
        return self._send_chunk_line(self._encode(chunk), sent_before)

    def send_text_chunk(self, call_id: str, text: str, sent_before: int) -> int:
        """send_chunk for a chunk that is a str, a streamed token: the same line `json.dumps`
        writes for its event, put together directly in a third of the time."""
        line = memoryview(_utf8(f'{{"type":"chunk","call":{_json_string(call_id)},"value":{_json_string(text)}}}\n'))
        self._check_size("chunk", len(line))
        return self._send_chunk_line(line, sent_before)

    def _send_chunk_line(self, line: memoryview, sent_before: int) -> int:
        total = sent_before + len(line)
        if self._max_bytes is not None and total > self._max_bytes:
            raise ResultTooLarge(
                f"the chunks come to more than the {_mebibytes(self._max_bytes)} as JSON that svc carries as "
                "one result: store large data elsewhere (a bucket, a shared disk) and yield where it is")
        self._write(line)
        return total

    def _write(self, *pieces: bytes | memoryview) -> None:
        # Held for all the pieces: a progress event from another thread must not come between
        # a result and its texts.
        with self._shield(), self._lock:
            if len(pieces) == 1:  # an event's commonest write: one piece, most often whole at once
                written = os.write(self._descriptor, pieces[0])
                if written == len(pieces[0]):
                    return
                pieces = (memoryview(pieces[0])[written:],)
            remaining = [memoryview(piece) for piece in pieces if len(piece) > 0]
            while remaining:
                written = os.writev(self._descriptor, remaining)
                while remaining and written >= len(remaining[0]):
                    written -= len(remaining.pop(0))
                if remaining:
                    remaining[0] = remaining[0][written:]

    def _encode(self, message: dict) -> memoryview:
        line = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
        encoded = memoryview(_utf8(line))
        self._check_size(message["type"], len(encoded))
        return encoded

    def _encode_result(self, message: dict) -> list[bytes]:
        """A result's line, and after it, in the order they sit in its value, a line for each
        long string (its UTF-8: `json` would take ~1.2 ns a character to write it, which the
        gateway checks in a tenth of that) and for each list of floats sent as Doubles (base64
        of its doubles: `json` writes a float in ~0.5 us, the gateway in half that).
        The value holds `""` where each goes (docs/worker-protocol.md)."""
        skeleton, texts = _take_long_texts(message["value"])
        doubles: list[Doubles] = []

        def marked(item: object) -> str:
            if not isinstance(item, Doubles):
                raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
            doubles.append(item)
            return _NUMBERS_MARKER

        whole = message if skeleton is message["value"] else {**message, "value": skeleton}
        encoded = json.dumps(whole, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=marked)
        if not texts and not doubles:
            line = _utf8(encoded + "\n")
            self._check_size("result", len(line))
            return [line]
        call = json.dumps(message["call"])
        # The message's keys in order: type, call, value (protocol.result).
        value = encoded[len('{"type":"result","call":') + len(call) + len(',"value":'):-1]
        pieces = _PLACES.split(value)
        places = pieces[1::2]
        if places.count(_TEXT_MARKER_JSON) != len(texts) or places.count(_NUMBERS_MARKER_JSON) != len(doubles):
            # A marker is also one of the value's own strings: the whole value as JSON.
            return [self._encode({**message, "value": _with_lists(message["value"])})]
        parts = [_utf8(part) for part in pieces[0::2]]
        text_offsets, number_offsets, following = [], [], []
        offset = 0
        remaining_texts, remaining_doubles = iter(texts), iter(doubles)
        for part, place in zip(parts, places):
            offset += len(part)
            if place == _TEXT_MARKER_JSON:
                text_offsets.append(offset)
                following.append(next(remaining_texts))
            else:
                number_offsets.append(offset)
                following.append(binascii.b2a_base64(next(remaining_doubles).data, newline=False))
            offset += 2
        line = b"".join([
            b'{"type":"result","call":', _utf8(call), b',"texts":', _compact_json(text_offsets),
            *((b',"numbers":', _compact_json(number_offsets)) if number_offsets else ()),
            b',"value":', b'""'.join(parts), b"}\n",
        ])
        self._check_size("result", len(line) + sum(len(piece) + 1 for piece in following))
        return [line, *(piece for text in following for piece in (text, b"\n"))]

    def _check_size(self, kind: str, size: int) -> None:
        if self._max_bytes is not None and size > self._max_bytes:
            raise ResultTooLarge(
                f"the {kind} is {_mebibytes(size)} as JSON, more than the "
                f"{_mebibytes(self._max_bytes)} svc carries in one: store large data elsewhere (a bucket, "
                "a shared disk) and return where it is")


_json_string = encode_basestring  # a str as json.dumps(..., ensure_ascii=False) writes it


def _utf8(text: str) -> bytes:
    # A lone surrogate ("\ud800" is valid JSON input) has no UTF-8 form, and can only sit
    # inside a JSON string, where backslashreplace's `\ud800` is exactly JSON's escape.
    return text.encode("utf-8", "backslashreplace")


LONG_TEXT_CHARS = 32 * 1024  # a result's string this long is sent as a line of its own
_MOST_KEYS_LOOKED_AT = 64  # an object with more keys is sent as JSON, not looked through
_TEXT_MARKER = "\x00svc-text\x00"
_TEXT_MARKER_JSON = json.dumps(_TEXT_MARKER)
_NUMBERS_MARKER = "\x00svc-numbers\x00"
_NUMBERS_MARKER_JSON = json.dumps(_NUMBERS_MARKER)
_PLACES = re.compile(f"({re.escape(_TEXT_MARKER_JSON)}|{re.escape(_NUMBERS_MARKER_JSON)})")


def _compact_json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _with_lists(value: object) -> object:
    """The value with each Doubles a list again (Doubles sit where lists do: in lists and dicts)."""
    if isinstance(value, Doubles):
        return value.tolist()
    if isinstance(value, dict):
        return {key: _with_lists(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_lists(item) for item in value]
    return value


def _take_long_texts(value: object) -> tuple[object, list[bytes]]:
    """The value with each long string (the value itself, or one of its object's values) put
    as a marker, and those strings' UTF-8, in the order JSON writes them."""
    if isinstance(value, str):
        text = _long_text(value)
        return (value, []) if text is None else (_TEXT_MARKER, [text])
    if not isinstance(value, dict) or len(value) > _MOST_KEYS_LOOKED_AT:
        return value, []
    skeleton = value
    texts = []
    for key, item in value.items():
        text = _long_text(item) if isinstance(item, str) else None
        if text is not None:
            if skeleton is value:
                skeleton = dict(value)
            skeleton[key] = _TEXT_MARKER
            texts.append(text)
    return skeleton, texts


def _long_text(text: str) -> Optional[bytes]:
    """A long string's UTF-8, when it can be a line: it has a UTF-8 form (no lone surrogate)
    and no line break (the gateway ends a line at \\n or \\r)."""
    if len(text) < LONG_TEXT_CHARS:
        return None
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return None if b"\n" in data or b"\r" in data else data


def _mebibytes(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


def read_commands(descriptor: int, accepted_types: tuple[str, ...], poll_seconds: float = 0.0) -> Iterator[dict]:
    """Valid commands of the pipe's types until EOF. Any other line is reported on stderr
    and skipped. With `poll_seconds`, see `_Lines`."""
    lines = _Lines(descriptor, poll_seconds)
    while True:
        line = lines.next_line()
        if not line:
            return
        if not line.strip():
            continue
        try:
            command = validate_command(json.loads(line))
            if command["type"] not in accepted_types:
                raise ValueError(f"a {command['type']} command does not belong on fd {descriptor}")
            sizes = _following_sizes(command)
            _read_texts(command, lines, sizes)
            _read_numbers(command, lines, sizes)
            yield command
        except ValueError as error:  # bad JSON, bad UTF-8, a malformed or misplaced command
            print(f"apipod worker: ignoring a command line ({error}): {line[:200]!r}", file=sys.stderr)


def _following_sizes(command: dict) -> Iterator[int]:
    """The byte sizes of the lines that follow a call, its texts' then its numbers', newlines
    not counted: `line_bytes`, which a call with texts or numbers must carry."""
    following = sum(len(names) for names in (command.get("texts"), command.get("numbers")) if isinstance(names, list))
    sizes = command.pop("line_bytes", None)
    if following == 0:
        return iter(())
    if not isinstance(sizes, list) or len(sizes) != following or not all(type(size) is int and size >= 0 for size in sizes):
        raise ValueError(f"'line_bytes' must give the size of each of the {following} lines after the call")
    return iter(sizes)


def _read_texts(command: dict, lines: _Lines, sizes: Iterator[int]) -> None:
    """Puts in a call's arguments the strings that follow its line, one line of UTF-8 each, for
    the parameters its `texts` names: the gateway sends a client's long string so, undecoded,
    where JSON would cost a parse on each side (docs/worker-protocol.md)."""
    names = command.pop("texts", None)
    if names is None:
        return
    if not isinstance(names, list) or not all(isinstance(name, str) and name in command["arguments"] for name in names):
        raise ValueError("'texts' must list parameters the call's arguments hold")
    for name in names:
        line = lines.line_of(next(sizes), f"the text of {name!r}")
        command["arguments"][name] = str(line[:-1], "utf-8")


def _read_numbers(command: dict, lines: _Lines, sizes: Iterator[int]) -> None:
    """Puts in a call's arguments the lists of numbers that follow its texts, one line each of
    base64 of little-endian doubles, for the parameters its `numbers` names: Python's json
    takes ~40 ms to parse 200,000 numbers, array and binascii ~7 ms to read their doubles.
    `numbers` stays in the command: such a list holds no file reference to look for."""
    names = command.get("numbers")
    if names is None:
        return
    if not isinstance(names, list) or not all(isinstance(name, str) and command["arguments"].get(name) == [] for name in names):
        raise ValueError("'numbers' must list parameters the call's arguments hold as []")
    for name in names:
        line = lines.line_of(next(sizes), f"the numbers of {name!r}")
        try:
            doubles = array.array("d", binascii.a2b_base64(line))
        except (binascii.Error, ValueError) as error:
            raise ValueError(f"the numbers of {name!r} are not base64 of doubles: {error}") from error
        if sys.byteorder == "big":
            doubles.byteswap()
        command["arguments"][name] = doubles.tolist()


class _Lines:
    """The pipe's lines, the last one possibly without its newline.

    With `poll_seconds`, once every line read so far has been taken, the pipe is polled
    without sleeping for up to that long (less when polling has been finding nothing, see
    PollWindow) before blocking on it. A process asleep on a pipe is woken by its writer, and
    that wake-up is the largest cost of a short call (on a VM, one waits for a halted virtual
    CPU): under load the gateway usually sends the next call within a fraction of a
    millisecond, and then finds the worker awake."""

    def __init__(self, descriptor: int, poll_seconds: float):
        self._descriptor = descriptor
        self._window = PollWindow(poll_seconds) if poll_seconds > 0 else None
        if self._window is not None:
            os.set_blocking(descriptor, False)
        # The last read, and where in it the next line starts.
        self._chunk = b""
        self._start = 0
        self._buffer = bytearray()

    def next_line(self) -> bytes:
        """The next line, b"" at EOF. Each read is searched once and its pieces joined once,
        so a 90 MB line (a call with an image inline) costs a pass, not a pass per read."""
        pieces: list[bytes] = []
        chunk, start = self._chunk, self._start
        while True:
            newline = chunk.find(b"\n", start)
            if newline != -1:
                pieces.append(chunk[start:newline + 1])
                self._chunk, self._start = chunk, newline + 1
                return b"".join(pieces)
            if start < len(chunk):
                pieces.append(chunk[start:])
            chunk, start = self._read(), 0
            if not chunk:
                self._chunk, self._start = b"", 0
                return b"".join(pieces)

    def line_of(self, size: int, what: str) -> memoryview:
        """The next line, which its writer said is `size` bytes and a newline, read straight
        into one buffer (valid until the next call): a 2 MB line read 64 KiB at a time and
        joined cost the worker ~1.1 ms of CPU, read so ~0.35 ms. The buffer is kept for the
        next line up to KEPT_LINE_BYTES: a new one each time costs its zeroing and a page
        fault per 4 KiB, as much again."""
        if size + 1 > len(self._buffer):
            buffer = bytearray(size + 1)
            if size + 1 <= KEPT_LINE_BYTES:
                self._buffer = buffer
        else:
            buffer = self._buffer
        line = memoryview(buffer)[:size + 1]
        have = min(len(self._chunk) - self._start, size + 1)
        line[:have] = memoryview(self._chunk)[self._start:self._start + have]
        self._start += have
        while have < size + 1:
            got = self._read_into(line[have:])
            if got == 0:
                raise ValueError(f"the pipe closed before {what}")
            have += got
        if line[size] != 0x0A or buffer.find(b"\n", 0, size) != -1:
            raise ValueError(f"{what} is not a line of {size} bytes")
        return line

    def _read(self) -> bytes:
        if self._window is not None:
            return self._window.read(self._descriptor)
        return os.read(self._descriptor, _READ_SIZE)

    def _read_into(self, view: memoryview) -> int:
        while True:
            try:
                return os.readv(self._descriptor, [view])
            except BlockingIOError:  # polling left the pipe non-blocking: wait for the rest
                select.select([self._descriptor], [], [])


class PollWindow:
    """How long to poll a non-blocking descriptor before sleeping on it, following what polling
    finds. A poll that finds data saved the writer a wake-up; one that finds nothing burnt its
    CPU for nothing, and on a busy machine took it from the very gateway that would send the
    next call. So each poll that comes up empty halves the window, down to none, and each
    command that arrives within the most (`most_seconds`) doubles it again, whether it was found
    by polling or woke the worker: polling comes back as soon as calls arrive quickly. And
    while other processes keep the machine busy (OtherLoad), it does not poll at all."""

    SMALLEST_SECONDS = 20e-6  # below this a window is none: a poll that short catches nothing

    def __init__(self, most_seconds: float, other_load: Optional[OtherLoad] = None):
        self.most_seconds = most_seconds
        self.seconds = most_seconds
        self._other_load = other_load or OtherLoad(os.getppid())

    def read(self, descriptor: int) -> bytes:
        started = time.perf_counter()
        deadline = started + self.seconds
        # Never while other work keeps the machine busy: then no core is to spare for it.
        if self.seconds > 0 and not self._other_load.is_busy():
            while True:
                try:
                    chunk = os.read(descriptor, _READ_SIZE)
                    self._arrived_after(time.perf_counter() - started)
                    return chunk
                except BlockingIOError:
                    if time.perf_counter() >= deadline:
                        break
        while True:
            select.select([descriptor], [], [])
            try:
                chunk = os.read(descriptor, _READ_SIZE)
            except BlockingIOError:  # woken for nothing: wait again
                continue
            self._arrived_after(time.perf_counter() - started)
            return chunk

    def _arrived_after(self, seconds: float) -> None:
        if seconds <= self.most_seconds:
            self.seconds = min(self.most_seconds, max(2 * self.seconds, self.SMALLEST_SECONDS))
        else:
            self.seconds = self.seconds / 2 if self.seconds / 2 >= self.SMALLEST_SECONDS else 0.0
