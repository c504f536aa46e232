"""OpenAI-style chat completion request and response, as plain classes (pydantic not needed).

Fields follow the OpenAI Chat Completions API; fields this module does not know are kept in
`extra` and written back by `to_dict()`, so newer client options pass through untouched.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Any, Optional


@dataclass
class ChatMessage:
    role: str
    content: Any = None  # a string, or a list of content parts for multimodal messages
    extra: dict = field(default_factory=dict)  # name, tool_calls, tool_call_id, ...

    @classmethod
    def from_dict(cls, data: dict) -> "ChatMessage":
        if not isinstance(data, dict) or not isinstance(data.get("role"), str):
            raise ValueError(f"a chat message needs a string 'role', got {data!r}")
        extra = {key: value for key, value in data.items() if key not in ("role", "content")}
        return cls(role=data["role"], content=data.get("content"), extra=extra)

    @property
    def text(self) -> str:
        """The message's text: its content string, or the text parts of a multimodal list joined."""
        if isinstance(self.content, str):
            return self.content
        if isinstance(self.content, list):
            return " ".join(part["text"] for part in self.content
                            if isinstance(part, dict) and isinstance(part.get("text"), str))
        return ""

    def to_dict(self) -> dict:
        return {"role": self.role, "content": self.content, **self.extra}

    def to_json(self) -> dict:
        return self.to_dict()


@dataclass
class ChatCompletionRequest:
    messages: list[ChatMessage]
    model: Optional[str] = None
    max_tokens: Optional[int] = None
    max_completion_tokens: Optional[int] = None
    # The apipod toolkit's defaults (socaity-schemas' ChatCompletionRequest), which services
    # written for it read (`do_sample=temperature > 0`); to_dict still writes back only what
    # the client sent, so a service that passes the request on adds nothing to it.
    temperature: Optional[float] = 0.7
    top_p: Optional[float] = 1.0
    n: Optional[int] = 1
    stream: Optional[bool] = False
    stop: Any = None  # a string or a list of strings
    presence_penalty: Optional[float] = 0.0
    frequency_penalty: Optional[float] = 0.0
    seed: Optional[int] = None
    user: Optional[str] = None
    # The rest of OpenAI's request, which the toolkit's request has as fields too (as sent).
    stream_options: Optional[dict] = None
    logit_bias: Optional[dict] = None
    logprobs: Optional[bool] = False
    top_logprobs: Optional[int] = None
    response_format: Optional[dict] = None
    reasoning_effort: Optional[str] = None
    tools: Optional[list] = None
    tool_choice: Any = None  # "none", "auto", "required" or {"type": "function", "function": {"name": ...}}
    parallel_tool_calls: Optional[bool] = None
    store: Optional[bool] = None
    metadata: Optional[dict] = None
    extra: dict = field(default_factory=dict)
    # The fields the client sent, when read from one (from_dict); None when made in code.
    sent_fields: Optional[frozenset] = field(default=None, repr=False, compare=False)

    def __init_subclass__(cls, **options):
        """A subclass's own fields (`class PirateRequest(ChatCompletionRequest): persona: str =
        "pirate"`, as upstream's pydantic request is extended) become fields too, read from the
        request by from_dict; keyword-only, so one without a default may follow ours."""
        super().__init_subclass__(**options)
        dataclass(cls, kw_only=True)

    @classmethod
    def from_dict(cls, data: dict) -> "ChatCompletionRequest":
        if not isinstance(data, dict):
            raise ValueError(f"a chat completion request is an object, got {type(data).__name__}")
        messages = data.get("messages")
        if not isinstance(messages, list):
            raise ValueError("a chat completion request needs a 'messages' list")
        known = _field_names(cls)
        values = {key: value for key, value in data.items() if key in known and key != "messages"}
        extra = {key: value for key, value in data.items() if key not in known}
        return cls(messages=[ChatMessage.from_dict(message) for message in messages], extra=extra,
                   sent_fields=frozenset(values), **values)

    def to_dict(self) -> dict:
        data = {"messages": [message.to_dict() for message in self.messages]}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            was_given = self.sent_fields is None or name in self.sent_fields
            if value is not None and name != "messages" and was_given:
                data[name] = value
        data.update(self.extra)
        return data

    def to_json(self) -> dict:
        return self.to_dict()


@dataclass
class ChatCompletionResponse:
    choices: list = field(default_factory=list)  # {"index", "message", "finish_reason"} objects
    model: Optional[str] = None
    usage: Optional[dict] = None
    id: str = field(default_factory=lambda: f"chatcmpl-{_random_hex()}")
    object: str = "chat.completion"
    created: int = field(default_factory=lambda: int(time.time()))

    @classmethod
    def from_text(cls, text: str, model: Optional[str] = None) -> "ChatCompletionResponse":
        """A response with one assistant message, as most endpoints return."""
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        return cls(choices=[choice], model=model)

    @classmethod
    def from_dict(cls, data: dict) -> "ChatCompletionResponse":
        known = _field_names(cls)
        return cls(**{key: value for key, value in data.items() if key in known})

    def to_dict(self) -> dict:
        choices = [choice.to_dict() if hasattr(choice, "to_dict") else choice for choice in self.choices]
        return {
            "id": self.id,
            "object": self.object,
            "created": self.created,
            "model": self.model,
            "choices": choices,
            "usage": self.usage,
        }

    def to_json(self) -> dict:
        return self.to_dict()


def _field_names(cls) -> list[str]:
    return [item.name for item in fields(cls) if item.name not in ("extra", "sent_fields")]


# What the gateway validates a chat request against; unknown fields stay allowed (see `extra`).
CHAT_COMPLETION_REQUEST_SCHEMA = {
    "type": "object",
    "examples": [{"messages": [{"role": "user", "content": "Hello"}]}],
    "properties": {
        "messages": {
            "type": "array",
            "minItems": 1,  # as OpenAI and vLLM answer an empty list: 400
            "items": {
                "type": "object",
                # The roles OpenAI takes (`function` its deprecated one), which the apipod toolkit checks too.
                "properties": {"role": {"enum": ["system", "developer", "user", "assistant", "tool", "function"]}, "content": {}},
                "required": ["role"],
            },
        },
        "model": {"type": ["string", "null"]},
        "max_tokens": {"type": ["integer", "null"]},
        "max_completion_tokens": {"type": ["integer", "null"]},
        "temperature": {"type": ["number", "null"]},
        "top_p": {"type": ["number", "null"]},
        "n": {"type": ["integer", "null"]},
        "stream": {"type": ["boolean", "null"]},
        "stop": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "presence_penalty": {"type": ["number", "null"]},
        "frequency_penalty": {"type": ["number", "null"]},
        "seed": {"type": ["integer", "null"]},
        "user": {"type": ["string", "null"]},
    },
    "required": ["messages"],
    "additionalProperties": True,
}

CHAT_COMPLETION_RESPONSE_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "object": {"type": "string"},
        "created": {"type": "integer"},
        "model": {"type": ["string", "null"]},
        "choices": {"type": "array", "items": {"type": "object"}},
        "usage": {"type": ["object", "null"]},
    },
    "required": ["id", "object", "created", "choices"],
}


def _random_hex() -> str:
    """A fresh uuid4's 32 hex digits. uuid is imported here, not with the toolkit: it brings
    `platform`, ~0.4 MiB in every worker, and only a chat completion needs an id."""
    import uuid
    return uuid.uuid4().hex
