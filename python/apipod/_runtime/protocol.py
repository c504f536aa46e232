"""The gateway <-> worker messages of docs/worker-protocol.md, defined once for Python.

Constructors build each message; `validate_command` and `validate_event` reject malformed ones.
Both are tested against the shared examples in test/fixtures/protocol/, as is the TypeScript side.
"""
from __future__ import annotations

import math
import os
import re
import traceback
from typing import Any, Callable, Optional

from ..app import COMPUTE_CHOICES, PROVIDER_CHOICES
from ..common.exceptions import JobException

PROTOCOL_VERSION = 9  # 2: cancels have a pipe of their own; 3: a generator ends with `streamed`; 4: `direct`; 5: a call's `texts`; 6: its `numbers`; 7: their `line_bytes`; 8: `withdraw`; 9: a result's `numbers`
SETUP_STAGES = ("import", "lifespan", "schema")


class ProtocolError(ValueError):
    pass


# Commands (gateway -> worker): calls and shutdown on the command pipe, cancels and withdraws
# on the cancel pipe (read while a call runs)

CALL_CHANNEL_TYPES = ("call", "shutdown")
CANCEL_CHANNEL_TYPES = ("cancel", "withdraw")


def call(call_id: str, endpoint: str, arguments: dict) -> dict:
    return {"type": "call", "call": call_id, "endpoint": endpoint, "arguments": arguments}


def cancel(call_id: str) -> dict:
    return {"type": "cancel", "call": call_id}


def withdraw(call_ids: list[str]) -> dict:
    return {"type": "withdraw", "calls": call_ids}


def shutdown() -> dict:
    return {"type": "shutdown"}


# Events (worker -> gateway)

def ready(python: str, app: dict, endpoints: list[dict]) -> dict:
    return {"type": "ready", "protocol": PROTOCOL_VERSION, "python": python, "app": app, "endpoints": endpoints}


def setup_failed(stage: str, error: dict) -> dict:
    return {"type": "setup_failed", "stage": stage, "error": error}


def progress(call_id: str, fraction: Optional[float], message: Optional[str]) -> dict:
    return {"type": "progress", "call": call_id, "progress": fraction, "message": message}


def chunk(call_id: str, value: Any) -> dict:
    return {"type": "chunk", "call": call_id, "value": value}


def result(call_id: str, value: Any) -> dict:
    return {"type": "result", "call": call_id, "value": value}


def streamed(call_id: str, chunks: int) -> dict:
    """A generator's end: its result is the list of the `chunks` chunks sent before."""
    return {"type": "streamed", "call": call_id, "chunks": chunks}


def error(call_id: str, error: dict) -> dict:
    return {"type": "error", "call": call_id, "error": error}


def cancelled(call_id: str) -> dict:
    return {"type": "cancelled", "call": call_id}


def withdrawn(call_ids: list[str]) -> dict:
    """The calls of a `withdraw` that had not started: they never will, and nothing more comes for them."""
    return {"type": "withdrawn", "calls": call_ids}


def error_info(exception: BaseException, argument: Optional[str] = None) -> dict:
    """The ERROR object for an exception; the traceback starts at the user's code. `argument`
    names the argument that could not be converted, when that is what failed. `rejects_input`
    says the function refused its input with the toolkit's JobException, which the apipod
    toolkit answers with a 422 (apipod 1.0.33, engine/backend/fastapi/exception_handling.py)."""
    frames = exception.__traceback__
    while frames is not None and _is_toolkit_frame(frames.tb_frame.f_code.co_filename):
        frames = frames.tb_next
    text = "".join(traceback.format_exception(type(exception), exception, frames))
    source = getattr(exception, "source", None)  # (file, line, function) an error is about, outside the traceback
    if source is not None:
        text = f'  File "{source[0]}", line {source[1]}, in {source[2]}\n{text}'
    return {
        "type": type(exception).__name__,
        "message": str(exception),
        "traceback": text,
        "argument": argument,
        "rejects_input": isinstance(exception, JobException),
    }


def _is_toolkit_frame(file_name: str) -> bool:
    return file_name.startswith(_TOOLKIT_DIRECTORY) or file_name.startswith("<frozen importlib")


_TOOLKIT_DIRECTORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # apipod/, this module is in apipod/_runtime/


# Validation. A checker returns what is wrong with a value, or None when it is fine.

Checker = Callable[[Any], Optional[str]]


def validate_command(message: Any) -> dict:
    return _validate(message, _COMMAND_FIELDS, "command")


def validate_event(message: Any) -> dict:
    message = _validate(message, _EVENT_FIELDS, "event")
    if message["type"] == "ready":
        paths = [endpoint["path"] for endpoint in message["endpoints"]]
        if len(paths) != len(set(paths)):
            raise ProtocolError("ready: two endpoints share a path; a call names its endpoint by path")
    return message


def _validate(message: Any, fields_by_type: dict[str, dict[str, Checker]], kind: str) -> dict:
    if not isinstance(message, dict):
        raise ProtocolError(f"a {kind} is a JSON object, not {_json_type(message)}")
    message_type = message.get("type")
    if message_type not in fields_by_type:
        raise ProtocolError(f"unknown {kind} type {message_type!r}")
    problem = _object_with(fields_by_type[message_type])(message)
    if problem:
        raise ProtocolError(f"{message_type}: {problem}")
    return message


def _object_with(fields: dict[str, Checker]) -> Checker:
    def check(value: Any) -> Optional[str]:
        if not isinstance(value, dict):
            return f"must be an object, not {_json_type(value)}"
        for name, check_field in fields.items():
            if name not in value:
                return f"'{name}' is missing"
            problem = check_field(value[name])
            if problem:
                return f"'{name}' {problem}"
        return None
    return check


def _list_of(check_item: Checker, non_empty: bool = False) -> Checker:
    def check(value: Any) -> Optional[str]:
        if not isinstance(value, list):
            return f"must be a list, not {_json_type(value)}"
        if non_empty and not value:
            return "must not be empty"
        for index, item in enumerate(value):
            problem = check_item(item)
            if problem:
                return f"[{index}] {problem}"
        return None
    return check


def _nullable(check_value: Checker) -> Checker:
    return lambda value: None if value is None else check_value(value)


def _one_of(choices: tuple) -> Checker:
    return lambda value: None if value in choices and isinstance(value, str) else \
        f"must be one of {', '.join(choices)}, not {value!r}"


def _matching(pattern: str, description: str) -> Checker:
    compiled = re.compile(pattern)
    return lambda value: None if isinstance(value, str) and compiled.fullmatch(value) else \
        f"must be {description}, not {value!r}"


def _string(value: Any) -> Optional[str]:
    return None if isinstance(value, str) else f"must be a string, not {_json_type(value)}"


def _boolean(value: Any) -> Optional[str]:
    return None if isinstance(value, bool) else f"must be true or false, not {_json_type(value)}"


def _any(value: Any) -> Optional[str]:
    return None


def _count(value: Any) -> Optional[str]:
    is_integer = isinstance(value, int) and not isinstance(value, bool)
    return None if is_integer and value >= 0 else f"must be a whole number, 0 or more, not {value!r}"


def _fraction(value: Any) -> Optional[str]:
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if is_number and math.isfinite(value) and 0 <= value <= 1:
        return None
    return f"must be a number from 0 to 1, or null, not {value!r}"


def _protocol_version(value: Any) -> Optional[str]:
    is_integer = isinstance(value, int) and not isinstance(value, bool)
    return None if is_integer and value == PROTOCOL_VERSION else f"must be {PROTOCOL_VERSION}, not {value!r}"


def _object_schema(value: Any) -> Optional[str]:
    if not isinstance(value, dict) or value.get("type") != "object":
        return 'must be a JSON Schema with "type": "object"'
    return None


def _schema(value: Any) -> Optional[str]:
    return None if isinstance(value, dict) else f"must be a JSON Schema object, not {_json_type(value)}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


_CALL_ID = _matching(r".+", "a non-empty string")
_PATH = _matching(r"/.*", 'a path starting with "/"')

_ERROR = _object_with({"type": _string, "message": _string, "traceback": _string, "argument": _nullable(_string),
                       "rejects_input": _boolean})

_ENDPOINT = _object_with({
    "path": _PATH,
    "methods": _list_of(_matching(r"[A-Z]+", "an upper-case HTTP method"), non_empty=True),
    "function": _string,
    "doc": _nullable(_string),
    "is_async": _boolean,
    "is_generator": _boolean,
    "is_chat": _boolean,
    "direct": _boolean,
    "body_parameter": _nullable(_string),
    "input_schema": _object_schema,
    "output_schema": _schema,
    "injected": _list_of(_string),
})

_COMMAND_FIELDS = {
    "call": {"call": _CALL_ID, "endpoint": _PATH, "arguments": _object_with({})},
    "cancel": {"call": _CALL_ID},
    "withdraw": {"calls": _list_of(_CALL_ID)},
    "shutdown": {},
}

_EVENT_FIELDS = {
    "ready": {
        "protocol": _protocol_version,
        "python": _string,
        "app": _object_with({
            "title": _nullable(_string),
            "compute": _one_of(COMPUTE_CHOICES),
            "provider": _one_of(PROVIDER_CHOICES),
        }),
        "endpoints": _list_of(_ENDPOINT),
    },
    "setup_failed": {"stage": _one_of(SETUP_STAGES), "error": _ERROR},
    "progress": {"call": _CALL_ID, "progress": _nullable(_fraction), "message": _nullable(_string)},
    "chunk": {"call": _CALL_ID, "value": _any},
    "result": {"call": _CALL_ID, "value": _any},
    "streamed": {"call": _CALL_ID, "chunks": _count},
    "error": {"call": _CALL_ID, "error": _ERROR},
    "cancelled": {"call": _CALL_ID},
    "withdrawn": {"calls": _list_of(_CALL_ID)},
}
