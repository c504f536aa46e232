"""JSON Schema (draft 2020-12) for the Python annotations endpoints use."""
from __future__ import annotations

import collections.abc
import copy
import dataclasses
import datetime
import enum
import json
import typing
from typing import Any

from ..chat import (
    CHAT_COMPLETION_REQUEST_SCHEMA,
    CHAT_COMPLETION_RESPONSE_SCHEMA,
    ChatCompletionRequest,
    ChatCompletionResponse,
)
from ..file_model import FileModel
from ..media import ImageFile, MediaFile
from ..media_containers import MediaDict, MediaList
from .service_module import SERVICE_MODULE_NAME
from .optional_types import (is_numpy_array_class, is_pil_image_class, is_pydantic_model_class, loaded_uuid_class,
                             media_toolkit_kind, upload_annotation_kind)
from .signature import strip_annotated, union_members

MEDIA_OBJECT_SCHEMA = {
    "type": "object",
    "properties": {
        "file_name": {"type": ["string", "null"]},
        "content_type": {"type": ["string", "null"]},
        "content": {"type": "string"},
    },
    "required": ["content"],
}

_PRIMITIVES = {str: "string", bool: "boolean", int: "integer", float: "number"}
# Values that travel as strings in a standard format (ISO 8601, RFC 4122), as FastAPI takes them.
_STRING_FORMATS = {datetime.datetime: "date-time", datetime.date: "date", datetime.time: "time"}
_ARRAY_ORIGINS = {
    list, set, frozenset, collections.abc.Sequence, collections.abc.MutableSequence,
    collections.abc.Set, collections.abc.MutableSet, collections.abc.Collection,
}
_OBJECT_ORIGINS = {dict, collections.abc.Mapping, collections.abc.MutableMapping}
# What generator endpoints are annotated with; their result is the list of every chunk.
_STREAM_ORIGINS = {
    collections.abc.Iterator, collections.abc.Iterable, collections.abc.Generator,
    collections.abc.AsyncIterator, collections.abc.AsyncIterable, collections.abc.AsyncGenerator,
}
# Annotated[...] metadata (pydantic Field, annotated_types) -> JSON Schema keyword.
_CONSTRAINT_KEYWORDS = {
    "ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf", "pattern": "pattern", "title": "title", "description": "description",
}
_LENGTH_KEYWORDS = {"min_length": ("minLength", "minItems"), "max_length": ("maxLength", "maxItems")}

_NOT_JSON = object()


class UnsupportedType(TypeError):
    pass


class SchemaBuilder:
    """Describes annotations for one schema document; pydantic models' `$defs` gather in
    `definitions`, which belong at the document's root."""

    def __init__(self, for_output: bool = False):
        self.for_output = for_output  # results: media are objects (the gateway inlines files)
        self.definitions: dict[str, Any] = {}
        self._open: list[type] = []  # classes being described, to catch self-reference

    def describe(self, annotation: Any) -> dict:
        base, metadata = strip_annotated(annotation)
        schema = self._describe_base(base)
        for item in metadata:
            _apply_constraints(schema, item)
        return schema

    def _describe_base(self, base: Any) -> dict:
        if base in (Any, object) or isinstance(base, typing.TypeVar):
            return {}
        if base is None or base is type(None):
            return {"type": "null"}
        if isinstance(base, (str, typing.ForwardRef)):  # a quoted name typing could not resolve
            name = base if isinstance(base, str) else base.__forward_arg__
            raise UnsupportedType(f"cannot resolve the name {name!r}; define it before the endpoint or "
                                  "import it at module level")
        members = union_members(base)
        if members:
            return {"anyOf": [self.describe(member) for member in members]}
        origin = typing.get_origin(base)
        if origin is not None:
            return self._describe_generic(origin, typing.get_args(base))
        if isinstance(base, type):
            return self._describe_class(base)
        raise UnsupportedType(f"cannot describe {base!r} as JSON")

    def _describe_generic(self, origin: Any, arguments: tuple) -> dict:
        if origin is typing.Literal:
            values = [value.value if isinstance(value, enum.Enum) else value for value in arguments]
            if not all(_is_json_scalar(value) for value in values):
                raise UnsupportedType(f"Literal values must be JSON strings, numbers, booleans or None: {values!r}")
            return {"enum": values}
        if origin in _ARRAY_ORIGINS:
            return {"type": "array", "items": self.describe(arguments[0])} if arguments else {"type": "array"}
        if origin is MediaList:
            return {"type": "array", "items": self.describe(arguments[0] if arguments else MediaFile)}
        if origin is MediaDict:
            return self._describe_media_dict(arguments[0] if arguments else MediaFile)
        if origin is tuple:
            return self._describe_tuple(arguments)
        if origin in _OBJECT_ORIGINS:
            key, value = arguments or (str, Any)
            if strip_annotated(key)[0] not in (str, Any):
                raise UnsupportedType(f"JSON object keys are strings, not {_type_name(key)}")
            return {"type": "object", "additionalProperties": self.describe(value)}
        if origin in _STREAM_ORIGINS and self.for_output:
            return {"type": "array", "items": self.describe(arguments[0])} if arguments else {"type": "array"}
        raise UnsupportedType(f"cannot describe {_type_name(origin)}[...] as JSON")

    def _describe_tuple(self, arguments: tuple) -> dict:
        if not arguments:
            return {"type": "array"}
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return {"type": "array", "items": self.describe(arguments[0])}
        if arguments == ((),):  # tuple[()] is the empty tuple
            return {"type": "array", "maxItems": 0}
        return {
            "type": "array",
            "prefixItems": [self.describe(argument) for argument in arguments],
            "minItems": len(arguments),
            "maxItems": len(arguments),
        }

    def _describe_class(self, cls: type) -> dict:
        if issubclass(cls, enum.Enum):
            return self._describe_enum(cls)
        if cls in _PRIMITIVES:
            return {"type": _PRIMITIVES[cls]}
        if cls in _STRING_FORMATS:
            return {"type": "string", "format": _STRING_FORMATS[cls]}
        if cls is loaded_uuid_class():
            return {"type": "string", "format": "uuid"}
        if issubclass(cls, MediaFile):
            return media_schema(cls.media_kind, self.for_output)
        if media_toolkit_kind(cls) is not None:
            return media_schema(media_toolkit_kind(cls), self.for_output)
        if upload_annotation_kind(cls) is not None and not self.for_output:
            # FastAPI's UploadFile and socaity-schemas' file models: a file, as the apipod toolkit takes one
            return media_schema(upload_annotation_kind(cls), self.for_output)
        if issubclass(cls, FileModel):  # the upstream toolkit's upload model: a file as MediaFile takes one
            return media_schema(MediaFile.media_kind, self.for_output)
        if issubclass(cls, MediaList):
            return {"type": "array", "items": media_schema(MediaFile.media_kind, self.for_output)}
        if issubclass(cls, MediaDict):
            return self._describe_media_dict(MediaFile)
        if cls in (bytes, bytearray):
            return media_schema(MediaFile.media_kind, self.for_output)
        if issubclass(cls, ChatCompletionRequest):
            return copy.deepcopy(CHAT_COMPLETION_REQUEST_SCHEMA)
        if issubclass(cls, ChatCompletionResponse):
            return copy.deepcopy(CHAT_COMPLETION_RESPONSE_SCHEMA)
        if cls in _OBJECT_ORIGINS:
            return {"type": "object"}
        if cls in _ARRAY_ORIGINS or cls is tuple:
            return {"type": "array"}
        if cls in self._open:
            raise UnsupportedType(f"{cls.__name__} refers to itself; use a pydantic model for recursive data")
        self._open.append(cls)
        try:
            if is_pydantic_model_class(cls):
                return self._describe_pydantic_model(cls)
            if dataclasses.is_dataclass(cls):
                return self._describe_dataclass(cls)
            if typing.is_typeddict(cls):
                return self._describe_typeddict(cls)
        finally:
            self._open.pop()
        for primitive in (bool, int, float, str):  # subclasses such as `class Token(str)`
            if issubclass(cls, primitive):
                return {"type": _PRIMITIVES[primitive]}
        if self.for_output:
            if is_pil_image_class(cls):
                return media_schema(ImageFile.media_kind, for_output=True)
            if is_numpy_array_class(cls):
                return {"type": "array"}
            if callable(getattr(cls, "to_json", None)):
                return {}  # serialised by calling its to_json()
        raise UnsupportedType(
            f"cannot describe {_type_name(cls)} as JSON; annotate with a JSON type (str, int, float, bool, "
            "list, dict), a dataclass, a TypedDict, a pydantic model, an Enum or Literal, or a media type"
        )

    def _describe_media_dict(self, item: Any) -> dict:
        if not self.for_output:
            # As the apipod toolkit refuses it: a parameter's files are a list.
            raise UnsupportedType("MediaDict is not a parameter type: take several files as MediaList[...] "
                                  "or list[...] of a media type")
        return {"type": "object", "additionalProperties": self.describe(item)}

    def _describe_enum(self, cls: type) -> dict:
        values = [member.value for member in cls]
        if not all(_is_json_scalar(value) for value in values):
            raise UnsupportedType(f"the values of Enum {cls.__name__} must be JSON strings, numbers or booleans")
        return {"title": cls.__name__, "enum": values}

    def _describe_dataclass(self, cls: type) -> dict:
        hints = _field_types(cls)
        properties, required = {}, []
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            try:
                schema = self.describe(hints.get(field.name, Any))
            except UnsupportedType as error:
                raise UnsupportedType(f"field '{field.name}' of {cls.__name__}: {error}") from None
            if field.default is not dataclasses.MISSING:
                add_default(schema, field.default)
            elif field.default_factory is dataclasses.MISSING:
                required.append(field.name)
            properties[field.name] = schema
        # Unknown keys would fail the constructor, so the gateway rejects them up front.
        return {"type": "object", "title": cls.__name__, "properties": properties, "required": required,
                "additionalProperties": False}

    def _describe_typeddict(self, cls: type) -> dict:
        hints = _field_types(cls)
        properties = {}
        for name, annotation in hints.items():
            try:
                properties[name] = self.describe(annotation)
            except UnsupportedType as error:
                raise UnsupportedType(f"key '{name}' of {cls.__name__}: {error}") from None
        required = [name for name in hints if name in cls.__required_keys__]
        return {"type": "object", "title": cls.__name__, "properties": properties, "required": required}

    def _describe_pydantic_model(self, cls: type) -> dict:
        reference = "#/$defs/{model}"
        if hasattr(cls, "model_json_schema"):  # pydantic 2
            mode = "serialization" if self.for_output else "validation"
            schema = cls.model_json_schema(ref_template=reference, mode=mode)
        else:  # pydantic 1
            schema = cls.schema(ref_template=reference)
        definitions = schema.pop("$defs", None) or schema.pop("definitions", None) or {}
        for name, definition in definitions.items():
            if self.definitions.setdefault(name, definition) != definition:
                raise UnsupportedType(f"two different models are named {name}")
        return schema


def media_schema(media_kind: str, for_output: bool) -> dict:
    """A media parameter takes base64, a data URL or a media object; a media result is the object."""
    if for_output:
        return {"x-media-type": media_kind, **copy.deepcopy(MEDIA_OBJECT_SCHEMA)}
    return {"x-media-type": media_kind, "anyOf": [{"type": "string"}, copy.deepcopy(MEDIA_OBJECT_SCHEMA)]}


def add_default(schema: dict, default: Any) -> None:
    """Sets `default` when the value can be written as JSON; other defaults stay implicit."""
    value = default.value if isinstance(default, enum.Enum) else default
    if isinstance(value, (tuple, set, frozenset)):
        value = list(value)
    try:
        schema["default"] = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        pass


def allows_null(schema: dict) -> bool:
    if schema == {} or schema.get("type") == "null":
        return True
    if isinstance(schema.get("type"), list) and "null" in schema["type"]:
        return True
    return any(allows_null(member) for member in schema.get("anyOf", ()))


def _apply_constraints(schema: dict, metadata: Any) -> None:
    if isinstance(metadata, str):
        schema["description"] = metadata
        return
    # A pydantic Field keeps its annotated_types constraints in `.metadata`.
    for item in (metadata, *getattr(metadata, "metadata", ())):
        for attribute, keyword in _CONSTRAINT_KEYWORDS.items():
            value = getattr(item, attribute, None)
            if value is not None and _is_json_scalar(value):
                schema[keyword] = value
        for attribute, (text_keyword, array_keyword) in _LENGTH_KEYWORDS.items():
            value = getattr(item, attribute, None)
            if isinstance(value, int):
                schema[array_keyword if schema.get("type") == "array" else text_keyword] = value


def _field_types(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as error:
        raise UnsupportedType(f"cannot resolve the field types of {cls.__name__}: {error}") from None


def _is_json_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        # The service file's own classes by their name alone: its module is svc's import name for it.
        local = annotation.__module__ in ("builtins", SERVICE_MODULE_NAME)
        return annotation.__qualname__ if local else f"{annotation.__module__}.{annotation.__qualname__}"
    return repr(annotation)
