"""A provider job's input as a call of one of the service's endpoints.

The existing toolkit's convention: {"input": {"path": "/generate", ...parameters}}. The path
may be written with or without its leading slash, or as the apipod package spells it
("make-fries" for /make_fries); parameters left out take their defaults (the gateway fills
them in); a service with a single endpoint may leave the path out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .route_names import upstream_route_name


class JobInputError(ValueError):
    """The job cannot be routed; the message says why, in words for the job's sender."""


@dataclass(frozen=True)
class Route:
    """An endpoint as the gateway serves it."""
    path: str
    methods: tuple[str, ...]
    streaming: bool
    chat: bool

    @property
    def streams_chunks(self) -> bool:
        """A generator endpoint whose chunks are the job's stream (a chat endpoint answers whole)."""
        return self.streaming and not self.chat

    @classmethod
    def from_json(cls, value: dict) -> "Route":
        return cls(value["path"], tuple(value["methods"]), bool(value["streaming"]), bool(value["chat"]))


EXAMPLE = '{"input": {"path": "/generate", "prompt": "..."}}'


def route_job(job_input: Any, routes: Sequence[Route]) -> tuple[Route, dict]:
    """The endpoint a job's input names, and the parameters to call it with."""
    if not isinstance(job_input, dict):
        raise JobInputError(f'the job\'s "input" must be an object of parameters with "path" naming the endpoint, e.g. {EXAMPLE}')
    arguments = dict(job_input)
    path = arguments.pop("path", None)
    if path is None:
        if len(routes) == 1:
            return routes[0], arguments
        raise JobInputError(f'the job\'s input has no "path" naming the endpoint to call; {_choices(routes)}, e.g. {EXAMPLE}')
    if not isinstance(path, str):
        raise JobInputError(f'"path" must be a string naming the endpoint, e.g. "/generate"; {_choices(routes)}')
    wanted = "/" + path.strip().strip("/")
    for route in routes:
        if route.path == wanted:
            return route, arguments
    spelt = _spelling(wanted)
    matches = [route for route in routes if _spelling(route.path) == spelt]
    if len(matches) == 1:
        return matches[0], arguments
    if matches:
        raise JobInputError(f'"{path}" could name any of {", ".join(route.path for route in matches)}; give the path as written')
    raise JobInputError(f'no endpoint at "{path}"; {_choices(routes)}')


def _spelling(path: str) -> str:
    """A path as the apipod package compares a job's path with its routes."""
    return upstream_route_name(path).strip("/")


def _choices(routes: Sequence[Route]) -> str:
    return "this service has " + ", ".join(route.path for route in routes)
