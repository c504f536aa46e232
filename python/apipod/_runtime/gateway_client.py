"""svc's own gateway, called by a provider's worker process (python -m apipod._runtime.runpod_bridge).

A call is submitted as server-sent events (`Accept: text/event-stream`), so it gets the
same validation, media handling, queue, time-outs and workers as an HTTP client's call,
with its progress and chunks as they happen, and is followed from the moment it exists:
the gateway keeps no job for later reads. Leaving the stream (the provider stopping the
job) cancels the call. A chat endpoint answers with the completion itself. Uses aiohttp,
which the provider's library depends on: this module is imported only where that library is.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, AsyncIterator, Optional, Union

import aiohttp

from .event_stream import EventStreamParser
from .provider_routes import Route

# A job may run for hours with nothing to say: only connecting is bounded.
SESSION_TIMEOUT = aiohttp.ClientTimeout(total=None, connect=10)
# The statuses a job ends in (src/serve/jobs/job-status.ts).
ENDED = ("FINISHED", "FAILED", "CANCELLED", "TIMEOUT")


@dataclass(frozen=True)
class Accepted:
    """The gateway took the call as this job, whose id tags the worker's output lines."""
    job_id: str


@dataclass(frozen=True)
class Chunk:
    value: Any


@dataclass(frozen=True)
class Progress:
    progress: Optional[float]
    message: Optional[str]


@dataclass(frozen=True)
class Finished:
    result: Any


@dataclass(frozen=True)
class Failed:
    message: str


CallEvent = Union[Accepted, Chunk, Progress, Finished, Failed]


class GatewayClient:
    def __init__(self, base_url: str, key: str) -> None:
        self._base_url = base_url.rstrip("/")
        self._headers = {"authorization": f"Bearer {key}"}

    async def call(self, route: Route, arguments: dict) -> AsyncIterator[CallEvent]:
        """The job the call became, its progress and chunks as they come, then one Finished or Failed.

        Cancelling the task that iterates (the provider stopping the job) closes the stream,
        which cancels the call.
        """
        unsendable = _unsendable_in_query(arguments) if "POST" not in route.methods else []
        if unsendable:
            yield Failed(f"{route.path} takes its parameters as a query string, which cannot carry "
                         f"{', '.join(unsendable)}: leave them out to get their defaults")
            return
        async with aiohttp.ClientSession(timeout=SESSION_TIMEOUT, headers=self._headers) as session:
            try:
                async with self._request(session, route, arguments) as response:
                    if response.status >= 400:
                        yield Failed(_error_message(await _json_of(response), response.status))
                    elif route.chat:
                        yield Finished(await _json_of(response))
                    else:
                        location = response.headers.get("content-location")
                        if location:
                            yield Accepted(location.rsplit("/", 1)[-1])
                        async for event in _call_events(response):
                            yield event
            except (aiohttp.ClientError, asyncio.TimeoutError) as error:
                yield Failed(f"svc's gateway did not answer: {str(error) or type(error).__name__}")

    def _request(self, session: aiohttp.ClientSession, route: Route, arguments: dict):
        url = self._base_url + route.path
        if route.chat:
            # A chat endpoint answers the whole completion; provider jobs do not stream it.
            body = {name: value for name, value in arguments.items() if name != "stream"}
            return session.post(url, json=body)
        headers = {"accept": "text/event-stream"}
        if "POST" in route.methods:
            return session.post(url, json=arguments, headers=headers)
        return session.get(url, params=_query_of(arguments), headers=headers)


async def _call_events(response: aiohttp.ClientResponse) -> AsyncIterator[CallEvent]:
    async for event in _server_sent_events(response):
        data = json.loads(event.data)
        if event.event == "chunk":
            yield Chunk(data)
        elif event.event == "progress" and data.get("status") not in ENDED:
            # An ended job's last progress (1.0) is no report of the function's: its status says more.
            yield Progress(data.get("progress"), data.get("message"))
        elif event.event == "status":
            yield outcome_of(data)
            return
    yield Failed("svc's gateway closed the call's stream before the call ended")


def outcome_of(envelope: dict) -> Union[Finished, Failed]:
    """A terminal job envelope as the call's outcome, its error in one line."""
    status = envelope.get("status")
    if status == "FINISHED":
        return Finished(envelope.get("result"))
    if status == "CANCELLED":
        return Failed("the job was cancelled")
    detail = envelope.get("error_detail") or {}
    if detail.get("type") and detail.get("message"):
        return Failed(f"{detail['type']}: {detail['message']}")
    return Failed(f"the job ended {status}")


async def _server_sent_events(response: aiohttp.ClientResponse):
    # Lines are split here: aiohttp's own line reader refuses lines over 128 KiB, and a
    # chunk (a base64 image, say) is one line of any size.
    parser = EventStreamParser()
    pending = bytearray()
    async for data in response.content.iter_any():
        pending.extend(data)
        while (end := pending.find(b"\n")) >= 0:
            line = pending[:end].decode("utf-8").rstrip("\r")
            del pending[: end + 1]
            event = parser.feed(line)
            if event is not None:
                yield event


async def _json_of(response: aiohttp.ClientResponse) -> Any:
    text = await response.text()
    try:
        return json.loads(text)
    except ValueError:
        return text


def _error_message(body: Any, status: int) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict) and body["error"].get("message"):
        return body["error"]["message"]
    return f"svc's gateway answered HTTP {status}"


def _unsendable_in_query(arguments: dict) -> list[str]:
    """What a query string would lose: null reads as the text "null", an empty list as nothing,
    and an object, or a null or list inside a list, has no form there the gateway reads."""
    def lost(value: Any) -> bool:
        if value is None or value == [] or isinstance(value, dict):
            return True
        return isinstance(value, list) and any(item is None or isinstance(item, (list, dict)) for item in value)

    return [f"{name}={json.dumps(value)[:40]}" for name, value in arguments.items() if lost(value)]


def _query_of(arguments: dict) -> list[tuple[str, str]]:
    """Parameters of a GET endpoint as its query string, as the gateway reads one: text as it
    is, a list as the key repeated once per item, anything else as JSON."""
    return [(name, item if isinstance(item, str) else json.dumps(item))
            for name, value in arguments.items()
            for item in (value if isinstance(value, list) else [value])]
