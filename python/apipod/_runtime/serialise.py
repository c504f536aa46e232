"""Endpoint results (and chunks) -> the JSON VALUE of docs/worker-protocol.md."""
from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import operator
import struct
import sys
from typing import Any, Optional

from ..file_model import FileModel
from .doubles import DOUBLES_MIN, Doubles
from .file_reference import INLINE_LIMIT, write_file_reference
from ..media import ImageFile, MediaFile
from .value_depth import ResultTooDeep
from .optional_types import is_media_toolkit_file, is_numpy_value, is_pil_image, is_pydantic_model, is_uuid


_LARGEST_EXACT_INTEGER = 2**53 - 1
_noted_large_integer = False


def _note_large_integer(value: int) -> None:
    """Says once per worker that results hold integers JSON readers round (an id, a seed)."""
    global _noted_large_integer
    if not _noted_large_integer:
        _noted_large_integer = True
        print(f"apipod: a result holds {value}, beyond 2**53 - 1: svc sends it with every digit, but many JSON "
              "readers (JavaScript's among them) round such integers; return them as str to keep every digit for them",
              file=sys.stderr)


def to_json_value(value: Any, max_depth: Optional[int] = None, doubles: bool = False) -> Any:
    """Plain JSON for `value`. Media above 64 KiB become `$file` references; values without a
    JSON form raise TypeError naming their type, and lists and dicts nested more than
    `max_depth` levels deep raise ResultTooDeep. With `doubles`, a long list of floats (or a
    numpy array of them) may be a Doubles instead of a list."""
    return _json_value(value, max_depth if max_depth is not None else math.inf, max_depth, doubles)


def _json_value(value: Any, levels_left: float, max_depth: Optional[int], doubles: bool = False) -> Any:
    """`levels_left`: how many more lists and dicts may nest from here."""
    if type(value) is dict:  # the commonest result: no media, enum or model check can match it
        return _dict_value(value, levels_left, max_depth, doubles)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _LARGEST_EXACT_INTEGER:
        _note_large_integer(value)  # sent as is; many JSON readers read it rounded
        return value
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, MediaFile):
        return _media_value(value)
    if is_media_toolkit_file(value):  # media-toolkit's own, as services written for apipod return
        return _media_value(MediaFile.from_bytes(value.to_bytes(), value.file_name, value.content_type))
    if isinstance(value, enum.Enum):
        return _json_value(value.value, levels_left, max_depth, doubles)
    if is_pydantic_model(value):
        # Before `to_json`: the openai SDK's models (ChatCompletion, ...) and LangChain's
        # messages have one, returning a JSON text or LangChain's own envelope, not their fields.
        return _json_value(value.model_dump() if hasattr(value, "model_dump") else value.dict(), levels_left, max_depth, doubles)
    # Containers go item by item, MediaList and MediaDict too (before their to_json), so their
    # large media travel as files.
    if isinstance(value, dict):
        return _dict_value(value, levels_left, max_depth, doubles)
    if isinstance(value, (list, tuple, set, frozenset)):
        below = _level_below(levels_left, max_depth)
        if doubles and isinstance(value, (list, tuple)):
            as_doubles = _float_list_doubles(value)
            if as_doubles is not None:
                return as_doubles
        return [_json_value(item, below, max_depth, doubles) for item in value]
    if callable(getattr(value, "to_json", None)) and not isinstance(value, type):
        return _json_value(value.to_json(), levels_left, max_depth, doubles)
    if isinstance(value, FileModel):
        return _file_model_value(value)
    if isinstance(value, (bytes, bytearray, memoryview)):  # a file, as its schema says (and large ones by reference)
        return _media_value(MediaFile.from_bytes(bytes(value)))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        below = _level_below(levels_left, max_depth)
        return {field.name: _json_value(getattr(value, field.name), below, max_depth, doubles) for field in dataclasses.fields(value)}
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if is_uuid(value):
        return str(value)
    if is_numpy_value(value):
        if doubles and getattr(value, "ndim", 0) >= 1:
            return _numpy_array_value(value, levels_left, max_depth)
        return _json_value(value.tolist(), levels_left, max_depth)  # arrays to nested lists, numpy scalars to Python numbers
    if is_pil_image(value):
        return _media_value(ImageFile.from_pil(value))
    raise TypeError(f"cannot send a {_type_name(value)} as JSON; return JSON data, a dataclass, "
                    "a pydantic model, bytes or a media file (ImageFile, ...)")


def _dict_value(value: dict, levels_left: float, max_depth: Optional[int], doubles: bool = False) -> dict:
    below = _level_below(levels_left, max_depth)
    return {_json_key(key): _json_value(item, below, max_depth, doubles) for key, item in value.items()}


def _float_list_doubles(items: list | tuple) -> Optional[Doubles]:
    """A long list of finite floats (exactly float: an int, a bool or a float subclass stays
    as JSON writes it) as Doubles. Each check runs in C, ~40 ns an item for an embedding's
    1,536; a list of other things (token ids) is most often told by its first item."""
    count = len(items)
    if count < DOUBLES_MIN or type(items[0]) is not float or operator.countOf(map(type, items), float) != count:
        return None
    # A sum of finite floats may overflow; a non-finite one (sent as null) makes it non-finite.
    if not math.isfinite(sum(items)) and not all(map(math.isfinite, items)):
        return None
    # struct packs a list's floats in half the time array("d", ...) takes, little-endian as asked.
    return Doubles(struct.pack(f"<{count}d", *items))


def _numpy_array_value(value: Any, levels_left: float, max_depth: Optional[int]) -> Any:
    """A numpy array as nested lists, as `tolist()` makes them, but each long row of finite
    floats as Doubles, made from its memory without a Python float for each item."""
    below = _level_below(levels_left, max_depth)
    if value.ndim > 1:
        return [_numpy_array_value(row, below, max_depth) for row in value]
    if value.dtype.kind == "f" and len(value) >= DOUBLES_MIN:
        data = value.astype("<f8")
        if bool(sys.modules["numpy"].isfinite(data).all()):  # a NaN or infinity is sent as null
            return Doubles(data.tobytes())
    return _json_value(value.tolist(), levels_left, max_depth)


def _level_below(levels_left: float, max_depth: Optional[int]) -> float:
    """The levels left inside a list or dict that starts here, which needs one."""
    if levels_left < 1:
        raise ResultTooDeep(max_depth)
    return levels_left - 1


def _file_model_value(model: FileModel) -> dict:
    """A FileModel with its content (bytes, base64 or a data URL) as a media file; one whose
    content is a URL as its fields."""
    try:
        if isinstance(model.content, (bytes, bytearray)):
            media = MediaFile.from_bytes(model.content, model.file_name, model.content_type)
        else:
            media = MediaFile.from_base64(model.content, model.file_name, model.content_type)
    except ValueError:
        return {field.name: to_json_value(getattr(model, field.name)) for field in dataclasses.fields(model)}
    return _media_value(media)


def _media_value(media: MediaFile) -> dict:
    if media.file_size() > INLINE_LIMIT:
        return write_file_reference(media.to_bytes(), media.file_name, media.content_type)
    return media.to_json()


def _json_key(key: Any) -> str:
    """Object keys the way json.dumps writes them (1 -> "1", True -> "true")."""
    if isinstance(key, str):
        return key
    if isinstance(key, enum.Enum):
        return _json_key(key.value)
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    raise TypeError(f"cannot send a dict with {_type_name(key)} keys as JSON; keys must be strings")


def _type_name(value: Any) -> str:
    cls = type(value)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
