"""A call's JSON `arguments` -> the Python values the endpoint function is called with."""
from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import inspect
import re
import typing
from typing import Any, Callable, Optional

from ..chat import ChatCompletionRequest
from .content_type import GENERIC_CONTENT_TYPE
from .file_reference import is_file_reference, read_file_reference
from ..file_model import FileModel
from ..media import AudioFile, ImageFile, MediaFile, VideoFile, base_file_name
from ..media_containers import MediaList
from .media_kinds import CHECKED_KINDS, content_type_of_kind
from .optional_types import is_pydantic_model_class, is_upload_file_class, loaded_uuid_class, media_toolkit_kind, upload_annotation_kind
from ..progress import JobProgress
from .signature import EndpointParameter, strip_annotated, union_members
from ..upload_file import UploadedFile

class ArgumentError(ValueError):
    """An argument that cannot become its parameter's type (bad base64, a value outside an
    Enum, a pydantic model's validation): the caller's input is wrong, not the function."""

    def __init__(self, argument: str, problem: str):
        super().__init__(f"argument '{argument}': {problem}")
        self.argument = argument


_SEQUENCE_ORIGINS = {list, collections.abc.Sequence, collections.abc.MutableSequence, collections.abc.Collection}
_SET_ORIGINS = {set, frozenset, collections.abc.Set, collections.abc.MutableSet}
_MAPPING_ORIGINS = {dict, collections.abc.Mapping, collections.abc.MutableMapping}
_PLAIN_JSON_TYPES = frozenset((str, int, float, bool))


def bind_arguments(parameters: list[EndpointParameter], arguments: dict,
                   job_progress: JobProgress) -> tuple[list, dict]:
    """Positional and keyword arguments for the call; names left out take their defaults."""
    values = {}  # parameter name -> converted value, for those given or injected
    star_items = []
    var_keyword = None
    remaining = dict(arguments)
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            var_keyword = parameter
        elif parameter.is_injected:
            values[parameter.name] = job_progress
        elif parameter.name not in remaining:
            if parameter.is_none_when_left_out:
                values[parameter.name] = None
            elif parameter.passes_default and parameter.has_default:
                values[parameter.name] = parameter.default  # what the FastAPI marker stands for
        elif parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            items = remaining.pop(parameter.name)
            if not isinstance(items, list):
                raise ArgumentError(parameter.name, f"expected a list, got {type(items).__name__}")
            star_items = [_convert_named(parameter.name, item, parameter.annotation) for item in items]
        else:
            values[parameter.name] = _convert_named(parameter.name, remaining.pop(parameter.name),
                                                    parameter.annotation)
    extra_keywords = {}
    if var_keyword is not None:
        extra_keywords = {name: _convert_named(name, value, var_keyword.annotation)
                          for name, value in remaining.items()}
    elif remaining:
        raise TypeError(f"unexpected arguments: {', '.join(sorted(remaining))}")

    positional, keywords = [], {}
    for parameter in parameters:
        # With *items given, every parameter before them must be passed by position too.
        by_position = parameter.kind is inspect.Parameter.POSITIONAL_ONLY or (
            star_items and parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(star_items)
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            keywords.update(extra_keywords)
        elif by_position:
            if parameter.name in values:
                positional.append(values[parameter.name])
            elif parameter.has_default:
                positional.append(parameter.default)
            else:
                raise TypeError(f"missing argument '{parameter.name}'")
        elif parameter.name in values:
            keywords[parameter.name] = values[parameter.name]
    return positional, keywords


def convert(value: Any, annotation: Any) -> Any:
    """Turns a JSON value into the annotated type; values of plain JSON types pass as they are."""
    if annotation in _PLAIN_JSON_TYPES and type(value) is annotation:
        # What every check below would end with: the commonest parameter, for a fifth of a
        # trivial call's CPU in the worker.
        return value
    base, _ = strip_annotated(annotation)
    members = union_members(base)
    if members:
        return _convert_union(value, members)
    if base in (Any, object) and is_file_reference(value):
        return _read_media(value, MediaFile)
    origin = typing.get_origin(base)
    if origin is not None:
        return _convert_generic(value, origin, typing.get_args(base))
    if not isinstance(base, type) or value is None:
        return value
    if issubclass(base, MediaFile):
        return _read_media(value, base)
    if issubclass(base, FileModel):
        return _read_media(value, MediaFile)  # the function gets a MediaFile, as upstream's does
    if media_toolkit_kind(base) is not None:
        return _as_media_toolkit_file(_read_media(value, MediaFile, media_toolkit_kind(base)), base)
    if upload_annotation_kind(base) is not None:
        # As the apipod toolkit does: a media file, never the upload class itself.
        media_class = UploadedFile if is_upload_file_class(base) else _MEDIA_CLASS_OF_KIND[upload_annotation_kind(base)]
        return _read_media(value, media_class)
    if issubclass(base, MediaList) and isinstance(value, list):
        return MediaList([_read_media(item, MediaFile) for item in value])
    if base in (bytes, bytearray):
        return base(_read_media(value, MediaFile).to_bytes())
    if issubclass(base, enum.Enum):
        return base(value)
    if base in _FROM_TEXT and isinstance(value, str):
        return _FROM_TEXT[base](value)
    if base is loaded_uuid_class() and isinstance(value, str):
        return base(value)
    if issubclass(base, ChatCompletionRequest):
        return value if isinstance(value, base) else base.from_dict(value)
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)  # JSON has one number type: 3 is a fine float
    if is_pydantic_model_class(base):
        return base.model_validate(value) if hasattr(base, "model_validate") else base.parse_obj(value)
    if dataclasses.is_dataclass(base) and isinstance(value, dict):
        return _convert_dataclass(value, base)
    if typing.is_typeddict(base) and isinstance(value, dict):
        hints = typing.get_type_hints(base, include_extras=True)
        return {key: convert(item, hints.get(key, Any)) for key, item in value.items()}
    return value


_MEDIA_CLASS_OF_KIND = {"file": MediaFile, "image": ImageFile, "audio": AudioFile, "video": VideoFile}

_FRACTION = re.compile(r"(\d{2}:\d{2}:\d{2})[.,](\d+)")


def _from_iso_text(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` (a fromisoformat) made to read what clients send on every supported Python:
    before 3.11 it takes neither the "Z" of JavaScript's toISOString() nor fractions of
    other than 3 or 6 digits."""
    def parse_text(text: str) -> Any:
        normal = _FRACTION.sub(lambda match: f"{match.group(1)}.{(match.group(2) + '000000')[:6]}", text.strip())
        try:
            return parse(normal[:-1] + "+00:00" if normal.endswith(("Z", "z")) else normal)
        except ValueError:
            raise ValueError(f"Invalid isoformat string: {text!r}") from None
    return parse_text


_FROM_TEXT = {
    datetime.datetime: _from_iso_text(datetime.datetime.fromisoformat),
    datetime.date: _from_iso_text(datetime.date.fromisoformat),
    datetime.time: _from_iso_text(datetime.time.fromisoformat),
}


def _convert_named(name: str, value: Any, annotation: Any) -> Any:
    try:
        return convert(value, annotation)
    except (TypeError, ValueError) as error:
        raise ArgumentError(name, _describe(error)) from error


def _describe(error: Exception) -> str:
    """One line: a pydantic ValidationError's own text spans lines and links to its docs;
    its errors() name each field (`prompt: Value error, must not be blank`)."""
    errors = getattr(error, "errors", None)
    if not callable(errors):
        return str(error)
    return "; ".join(_field_path(problem.get("loc", ())) + problem.get("msg", "is invalid") for problem in errors())


def _field_path(location: tuple) -> str:
    path = ""
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return f"{path}: " if path else ""


def _convert_generic(value: Any, origin: Any, arguments: tuple) -> Any:
    item_type = arguments[0] if arguments else Any
    if origin is MediaList and isinstance(value, list):
        return MediaList([convert(item, item_type) for item in value])
    if origin in _SEQUENCE_ORIGINS and isinstance(value, list):
        if item_type in _PLAIN_JSON_TYPES:
            # What converting each item would give, with map and set running in C, where a
            # call per item cost ~15 ms for a list of 200,000 floats. JSON writes 1.0 as 1.
            kinds = set(map(type, value))
            if kinds <= {item_type}:
                return list(value)
            if item_type is float and kinds <= {float, int}:
                return list(map(float, value))
        return [convert(item, item_type) for item in value]
    if origin in _SET_ORIGINS and isinstance(value, list):
        items = [convert(item, item_type) for item in value]
        return frozenset(items) if origin is frozenset else set(items)
    if origin is tuple and isinstance(value, list):
        if len(arguments) == 2 and arguments[1] is Ellipsis:
            return tuple(convert(item, item_type) for item in value)
        if len(arguments) == len(value):
            return tuple(convert(item, each_type) for item, each_type in zip(value, arguments))
        return tuple(value)
    if origin in _MAPPING_ORIGINS and isinstance(value, dict):
        value_type = arguments[1] if len(arguments) == 2 else Any
        return {key: convert(item, value_type) for key, item in value.items()}
    return value


def _convert_union(value: Any, members: tuple) -> Any:
    if value is None and type(None) in members:
        return None
    # Prefer the member the value already is (a plain string for `ImageFile | str`), unless
    # the value is plainly media; then try the members in the order written.
    ranked = sorted(members, key=lambda member: 0 if _fits_as_is(value, member) else 1)
    failures = []
    for member in ranked:
        if member is type(None):
            continue
        try:
            return convert(value, member)
        except (TypeError, ValueError) as error:
            failures.append(str(error))
    raise ValueError("matches none of the accepted types: " + "; ".join(failures))


def _fits_as_is(value: Any, member: Any) -> bool:
    base, _ = strip_annotated(member)
    is_media_type = isinstance(base, type) and (
        issubclass(base, (MediaFile, FileModel)) or base in (bytes, bytearray) or media_toolkit_kind(base) is not None
        or upload_annotation_kind(base) is not None)
    if _looks_like_media(value):
        return is_media_type
    if is_media_type or not isinstance(base, type):
        return False
    return type(value) is base or (base is float and type(value) is int)


def _looks_like_media(value: Any) -> bool:
    if isinstance(value, str):
        return value.startswith("data:")
    return is_file_reference(value) or (isinstance(value, dict) and set(value) >= {"content"}
                                        and set(value) <= {"file_name", "content_type", "content"})


def _read_media(value: Any, media_class: type, kind: Optional[str] = None) -> MediaFile:
    """The file a client sent, in `media_class`; one for a parameter of a checked kind (an
    image, audio, a video: `kind`, else the class's own) must be of it. Checked here, where
    every way of sending a file (base64, a data URL, a media object, an upload, a URL the
    gateway fetched) has become bytes, so each gets the same verdict, in either compute."""
    media = _media_of(value, media_class)
    kind = kind or media_class.media_kind
    if kind in CHECKED_KINDS:
        media.content_type = content_type_of_kind(media.to_bytes(), media.content_type, kind)
    return media


def _media_of(value: Any, media_class: type) -> MediaFile:
    # The file names come from a client: only their last part is kept, as for an upload.
    if is_file_reference(value):
        content, file_name, content_type = read_file_reference(value)
        return media_class.from_bytes(content, base_file_name(file_name), content_type)
    if value == "":
        raise ValueError("is empty: send the file's base64, a data URL or a media object")
    if isinstance(value, str):
        return media_class.from_base64(value)  # never a path: the string came from a client
    if isinstance(value, dict):
        return media_class.from_dict({**value, "file_name": base_file_name(value.get("file_name"))})
    if isinstance(value, MediaFile):
        return media_class.from_any(value)
    raise TypeError(f"expected base64, a data URL or a media object, got {type(value).__name__}")


def _as_media_toolkit_file(media: MediaFile, media_class: type) -> Any:
    """The file as the media-toolkit class the parameter names: it detects the content type
    itself, as it does for upstream's uploads; the client's file name is kept."""
    converted = media_class().from_bytes(media.to_bytes())
    if media.file_name != MediaFile.default_file_name:
        converted.file_name = media.file_name
    if converted.content_type in (None, GENERIC_CONTENT_TYPE):
        converted.content_type = media.content_type
    return converted


def _convert_dataclass(value: dict, cls: type) -> Any:
    hints = typing.get_type_hints(cls, include_extras=True)
    init_fields = {field.name for field in dataclasses.fields(cls) if field.init}
    unknown = set(value) - init_fields
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
    return cls(**{name: convert(item, hints.get(name, Any)) for name, item in value.items()})

