"""Media values (files, images, audio, video) as endpoints receive and return them.

The interface mirrors SocAIty's media-toolkit, so services written for it run unchanged:
`ImageFile.from_bytes(data, "out.png")` builds a new file, `ImageFile().from_bytes(data)`
fills an existing one, and `to_json()` gives the `{"file_name", "content_type", "content"}`
shape the gateway sends over HTTP.
"""
from __future__ import annotations

import base64
import binascii
import io
import os
import re
import sys
import types
from typing import Any, Optional
from urllib.parse import unquote_to_bytes

from .content_type import GENERIC_CONTENT_TYPE, guess_content_type, guess_extension
from .optional_types import is_numpy_array_class, is_pil_image

# RFC 2397: data:[<mediatype>][;base64],<data>
_DATA_URL = re.compile(r"^data:(?P<content_type>[^;,]*)(?P<parameters>(?:;[^;,]*)*),", re.IGNORECASE)


_URL_SAFE_TO_STANDARD = str.maketrans("-_", "+/")


class _loader:
    """Makes a `from_*` method work on the class (a new file) and on an instance (fills it)."""

    def __init__(self, function):
        self._function = function
        self.__doc__ = function.__doc__
        self.__name__ = function.__name__

    def __get__(self, instance, owner):
        return types.MethodType(self._function, instance if instance is not None else owner())


def base_file_name(file_name: Optional[str]) -> Optional[str]:
    """The last part of a file name, or None when nothing usable is left: a client's name
    such as `../../x` or `/etc/x` names a file, never where one is written."""
    if not isinstance(file_name, str):
        return None
    name = file_name.replace("\\", "/").rsplit("/", 1)[-1].replace("\0", "")
    return None if name in ("", ".", "..") else name


class MediaFile:
    """Any file: its bytes, its name and its content type."""

    media_kind = "file"  # the `x-media-type` in schemas

    def __init__(self, file_name: Optional[str] = None, content_type: Optional[str] = None):
        self.file_name = file_name
        self.content_type = content_type
        self._content = b""

    @_loader
    def from_bytes(self, data: bytes, file_name: Optional[str] = None, content_type: Optional[str] = None):
        self._content = bytes(data)
        if file_name is not None:
            self.file_name = file_name
        self.content_type = content_type or self.content_type
        if self.content_type in (None, "", GENERIC_CONTENT_TYPE):
            self.content_type = guess_content_type(self._content, self.file_name)
        return self

    @_loader
    def from_file(self, path_or_fileobj, file_name: Optional[str] = None):
        """Read a path (str or os.PathLike) or an open binary file object."""
        if hasattr(path_or_fileobj, "read"):
            data = path_or_fileobj.read()
            source_name = getattr(path_or_fileobj, "name", None)
        else:
            source_name = os.fspath(path_or_fileobj)
            with open(source_name, "rb") as file:
                data = file.read()
        if isinstance(data, str):
            data = data.encode("utf-8")
        if file_name is None and isinstance(source_name, str):
            file_name = os.path.basename(source_name)
        return self.from_bytes(data, file_name)

    @_loader
    def from_base64(self, text: str, file_name: Optional[str] = None, content_type: Optional[str] = None):
        """Read plain base64 or a data URL (`data:image/png;base64,...`)."""
        data_url = _DATA_URL.match(text)
        if data_url is None:
            return self.from_bytes(_decode_base64(text), file_name, content_type)
        payload = text[data_url.end():]
        is_base64 = ";base64" in data_url.group("parameters").lower()
        data = _decode_base64(payload) if is_base64 else unquote_to_bytes(payload)
        return self.from_bytes(data, file_name, content_type or data_url.group("content_type") or None)

    @_loader
    def from_dict(self, media_object: dict):
        """Read the `{"file_name", "content_type", "content"}` shape that `to_json()` writes."""
        if not isinstance(media_object.get("content"), str):
            raise ValueError("a media object needs a base64 string in 'content'")
        return self.from_base64(
            media_object["content"], media_object.get("file_name"), media_object.get("content_type")
        )

    @_loader
    def from_any(self, data: Any):
        """Read a media file, bytes, a path, base64 or a data URL, a media object, a binary file
        object, or (when numpy / Pillow are installed) an array or an image."""
        if isinstance(data, MediaFile):
            return self.from_bytes(data.to_bytes(), data.file_name, data.content_type)
        if isinstance(data, (bytes, bytearray, memoryview)):
            return self.from_bytes(data)
        if isinstance(data, os.PathLike):
            return self.from_file(data)
        if isinstance(data, str):
            return self.from_file(data) if os.path.isfile(data) else self.from_base64(data)
        if isinstance(data, dict):
            return self.from_dict(data)
        if hasattr(data, "read"):
            return self.from_file(data)
        if is_numpy_array_class(type(data)):
            return self.from_np_array(data)
        if is_pil_image(data):
            return self.from_bytes(_encode_pil_image(data), content_type="image/png")
        raise TypeError(f"{type(self).__name__}.from_any cannot read a {type(data).__name__}")

    @_loader
    def from_np_array(self, array, file_name: Optional[str] = None):
        """Store an array in numpy's own .npy format."""
        numpy = _require("numpy", "from_np_array")
        buffer = io.BytesIO()
        numpy.save(buffer, numpy.asarray(array), allow_pickle=False)
        return self.from_bytes(buffer.getvalue(), file_name, "application/x-npy")

    def to_np_array(self):
        numpy = _require("numpy", "to_np_array")
        return numpy.load(io.BytesIO(self._content), allow_pickle=False)

    def to_bytes(self) -> bytes:
        return self._content

    def to_base64(self) -> str:
        return base64.b64encode(self._content).decode("ascii")

    def to_data_url(self) -> str:
        return f"data:{self.content_type or GENERIC_CONTENT_TYPE};base64,{self.to_base64()}"

    def to_json(self) -> dict:
        return {"file_name": self.file_name, "content_type": self.content_type, "content": self.to_base64()}

    def file_size(self) -> int:
        return len(self._content)

    def save(self, path=None) -> str:
        """Write the file to `path`, or into `path` (or the current directory) when it is a
        directory; returns the path written."""
        target = os.fspath(path) if path is not None else os.curdir
        if os.path.isdir(target):
            name = base_file_name(self.file_name) or self.media_kind + guess_extension(self.content_type)
            target = os.path.join(target, name)
        parent = os.path.dirname(target)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(target, "wb") as file:
            file.write(self._content)
        return target

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(file_name={self.file_name!r}, "
            f"content_type={self.content_type!r}, {len(self._content)} bytes)"
        )


class ImageFile(MediaFile):
    media_kind = "image"

    @_loader
    def from_np_array(self, array, file_name: Optional[str] = None):
        """Encode an image array (height x width [x channels]) as PNG."""
        image_module = _require("PIL.Image", "ImageFile.from_np_array")
        numpy = _require("numpy", "ImageFile.from_np_array")
        image = image_module.fromarray(numpy.asarray(array))
        return self.from_bytes(_encode_pil_image(image), file_name, "image/png")

    @_loader
    def from_pil(self, image, file_name: Optional[str] = None):
        return self.from_bytes(_encode_pil_image(image), file_name, "image/png")

    def to_pil(self):
        image_module = _require("PIL.Image", "ImageFile.to_pil")
        image = image_module.open(io.BytesIO(self._content))
        image.load()
        return image

    def to_np_array(self):
        numpy = _require("numpy", "ImageFile.to_np_array")
        return numpy.asarray(self.to_pil())


class AudioFile(MediaFile):
    media_kind = "audio"


class VideoFile(MediaFile):
    media_kind = "video"


def _decode_base64(text: str) -> bytes:
    compact = "".join(text.split())
    compact += "=" * (-len(compact) % 4)  # clients often strip the padding
    if ("-" in compact or "_" in compact) and not ("+" in compact or "/" in compact):
        compact = compact.translate(_URL_SAFE_TO_STANDARD)  # RFC 4648 section 5 alphabet
    try:
        return base64.b64decode(compact, validate=True)
    except binascii.Error as error:
        raise ValueError(f"not valid base64 and not a data URL ({error})") from None


def _require(module_name: str, purpose: str):
    try:
        __import__(module_name)
    except ImportError:
        package = "Pillow" if module_name.startswith("PIL") else module_name
        raise ImportError(f"{purpose} needs {package}: pip install {package}") from None
    return sys.modules[module_name]


def _encode_pil_image(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
