"""Reading server-sent events, as the WHATWG HTML standard's "event stream interpretation" says.

The gateway's job stream (GET /v1/jobs/{id}/stream) is such a stream; a provider's worker
process follows it. Fed one line at a time (without its line ending), the parser returns an
event whenever a blank line completes one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class ServerSentEvent:
    event: str
    data: str


class EventStreamParser:
    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> Optional[ServerSentEvent]:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment, e.g. a keep-alive
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._event = value
        elif field == "data":
            self._data.append(value)
        return None

    def _dispatch(self) -> Optional[ServerSentEvent]:
        if not self._data:
            self._event = ""
            return None
        event = ServerSentEvent(self._event or "message", "\n".join(self._data))
        self._event = ""
        self._data = []
        return event
