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
import types
from typing import Any, Optional

from ._runtime.content_type import GENERIC_CONTENT_TYPE, extension_for, guess_content_type
from ._runtime.image_arrays import IMAGE_FORMATS, decode_image, encode_image, image_channels, image_size
from ._runtime.media_api_gaps import media_api_gap, missing_media_attribute
from ._runtime.optional_types import is_numpy_array_class, is_pil_image, require
from ._runtime.wav_audio import WAV_CONTENT_TYPE, decode_wav, encode_wav, read_wav_info, resample

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


# file_size() units, as media-toolkit counts them (decimal).
_SIZE_UNITS = {"bytes": 1, "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3}


class MediaFile:
    """Any file: its bytes, its name and its content type."""

    media_kind = "file"  # the `x-media-type` in schemas
    default_file_name = "file"  # media-toolkit's name for a file read without one

    # use_temp_file and temp_dir are media-toolkit's, which can keep large files on disk; svc's
    # toolkit keeps them in memory, which gives the same results.
    def __init__(self, file_name: Optional[str] = None, content_type: Optional[str] = None,
                 use_temp_file: bool = False, temp_dir: Optional[str] = None):
        self.file_name = file_name
        self.content_type = content_type
        self.path: Optional[str] = None  # the path it was read from, if any
        self._content = b""

    @_loader
    def from_bytes(self, data: bytes, file_name: Optional[str] = None, content_type: Optional[str] = None):
        self._content = bytes(data)
        if file_name is not None:
            self.file_name = file_name
        if self.file_name is None:
            self.file_name = self.default_file_name
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
            self.path = source_name
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
        if is_base64:
            data = _decode_base64(payload)
        else:
            from urllib.parse import unquote_to_bytes  # here: urllib.parse costs every worker ~0.4 MiB
            data = unquote_to_bytes(payload)
        return self.from_bytes(data, file_name, content_type or data_url.group("content_type") or None)

    @_loader
    def from_bytesio(self, buffer, copy: bool = True):
        """Read a seekable binary buffer from its start; `copy` is media-toolkit's choice between
        copying and borrowing the buffer, and svc's toolkit always copies."""
        buffer.seek(0)
        data = buffer.read()
        buffer.seek(0)
        return self.from_bytes(data)

    @_loader
    def from_url(self, url: str, headers: Optional[dict] = None):
        """Download an http(s) URL (at most 512 MiB in 5 minutes); its name comes from the
        response's Content-Disposition or the URL's path."""
        from ._runtime.url_download import download  # here: urllib and http.client take longer to import than the rest

        downloaded = download(url, headers)
        self.from_bytes(downloaded.content, downloaded.file_name)
        if self.content_type == GENERIC_CONTENT_TYPE and downloaded.content_type:
            self.content_type = downloaded.content_type
        return self

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
        """Read a media file, bytes, a path, an http(s) URL, base64 or a data URL, a media object,
        a binary file object, or (when numpy / Pillow are installed) an array or an image."""
        if isinstance(data, MediaFile):
            return self.from_bytes(data.to_bytes(), data.file_name, data.content_type)
        if isinstance(data, (bytes, bytearray, memoryview)):
            return self.from_bytes(data)
        if isinstance(data, os.PathLike):
            return self.from_file(data)
        if isinstance(data, str):
            if os.path.isfile(data):
                return self.from_file(data)
            return self.from_url(data) if is_web_url(data) else self.from_base64(data)
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
        numpy = require("numpy", "from_np_array")
        buffer = io.BytesIO()
        numpy.save(buffer, numpy.asarray(array), allow_pickle=False)
        return self.from_bytes(buffer.getvalue(), file_name, "application/x-npy")

    def to_np_array(self, shape=None, dtype=None):
        """A .npy file's array; any other file's bytes as a (1, size) array of `dtype` (uint8),
        or of `shape`, as media-toolkit gives them."""
        numpy = require("numpy", f"{type(self).__name__}.to_np_array")
        if self._content.startswith(b"\x93NUMPY"):
            return numpy.load(io.BytesIO(self._content), allow_pickle=False)
        flat = numpy.frombuffer(self._content, dtype=dtype or numpy.uint8)
        return flat.reshape(shape or (1, flat.size))

    def to_bytes(self) -> bytes:
        return self._content

    def read(self, number_of_bytes: Optional[int] = None) -> bytes:
        """The content from its start: all of it, or its first `number_of_bytes`."""
        return self._content if number_of_bytes is None else self._content[:number_of_bytes]

    def to_bytes_io(self) -> io.BytesIO:
        return io.BytesIO(self._content)

    def to_base64(self) -> str:
        return base64.b64encode(self._content).decode("ascii")

    def to_data_url(self) -> str:
        return f"data:{self.content_type or GENERIC_CONTENT_TYPE};base64,{self.to_base64()}"

    def to_json(self) -> dict:
        return {"file_name": self.file_name, "content_type": self.content_type, "content": self.to_base64()}

    def file_size(self, unit: str = "bytes"):
        """The size in bytes (an int), or in "kb", "mb" or "gb" (a float; 1 kb is 1000 bytes)."""
        multiplier = _SIZE_UNITS.get(unit.lower(), 1)
        return len(self._content) / multiplier if multiplier != 1 else len(self._content)

    @property
    def extension(self) -> Optional[str]:
        """The file's extension without its dot, from its content type, else from its file name."""
        from_content_type = extension_for(self.content_type)
        if from_content_type is not None:
            return from_content_type
        if self.file_name and "." in self.file_name:
            return self.file_name.rsplit(".", 1)[-1].lower()
        return None

    def save(self, path=None) -> str:
        """Write the file to `path`, or into `path` (or the current directory) when it is a
        directory; returns the path written."""
        target = os.fspath(path) if path is not None else os.curdir
        if os.path.isdir(target):
            target = os.path.join(target, self._name_to_save())
        parent = os.path.dirname(target)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(target, "wb") as file:
            file.write(self._content)
        return target

    def _name_to_save(self) -> str:
        """Its own file name; a made-up one (none given, or the default) gets the extension
        of its content type, so the saved file opens."""
        name = base_file_name(self.file_name)
        if name is not None and name != self.default_file_name:
            return name
        extension = extension_for(self.content_type)
        return (name or self.default_file_name) + (f".{extension}" if extension else "")

    def __bytes__(self) -> bytes:
        return self._content

    def __array__(self, dtype=None, copy=None):
        """`numpy.array(media)`: its to_np_array(); `copy` is numpy's, and the array is new anyway."""
        array = self.to_np_array()
        return array if dtype is None else array.astype(dtype)

    def __getattr__(self, name: str):
        raise missing_media_attribute(type(self), name)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(file_name={self.file_name!r}, "
            f"content_type={self.content_type!r}, {len(self._content)} bytes)"
        )


class ImageFile(MediaFile):
    """An image. Its arrays are OpenCV's, as in the apipod toolkit: BGR or BGRA channel order."""

    media_kind = "image"
    default_file_name = "imagefile"

    @_loader
    def from_np_array(self, np_array, img_type: Optional[str] = None):
        """Encode an array as OpenCV's `imencode` would (BGR or BGRA channels, or greyscale) in
        the format `img_type` ("png", "jpg", ...); without one, in the format of its content
        type when that is an image's, else PNG."""
        if img_type is None:
            current = self.content_type or ""
            img_type = current.split("/", 1)[1] if current.startswith("image/") else "png"
        content = encode_image(np_array, img_type)
        return self.from_bytes(content, content_type=IMAGE_FORMATS[img_type.lower().lstrip(".")].content_type)

    @_loader
    def from_pil(self, image, file_name: Optional[str] = None):
        return self.from_bytes(_encode_pil_image(image), file_name, "image/png")

    def to_pil(self):
        image_module = require("PIL.Image", "ImageFile.to_pil")
        image = image_module.open(io.BytesIO(self._content))
        image.load()
        return image

    def to_np_array(self):
        """The pixels as OpenCV's `imdecode(IMREAD_UNCHANGED)` gives them: height x width,
        or height x width x 3 (BGR) or x 4 (BGRA); palettes and GIFs expanded."""
        return decode_image(self._content)

    def to_cv2_img(self):
        return self.to_np_array()

    @property
    def channels(self) -> int:
        """Channels of its array: 1 (greyscale), 3 (BGR) or 4 (BGRA)."""
        return image_channels(self._content)

    @property
    def dimensions(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return image_size(self._content)


class AudioFile(MediaFile):
    """Audio. svc's toolkit reads and writes WAV; its arrays are float32 in [-1, 1], shaped
    (samples, channels), as in the apipod toolkit."""

    media_kind = "audio"
    default_file_name = "audiofile"

    @property
    def sample_rate(self) -> int:
        return read_wav_info(self._content, "AudioFile.sample_rate", self.content_type).sample_rate

    @property
    def channels(self) -> int:
        return read_wav_info(self._content, "AudioFile.channels", self.content_type).channels

    @property
    def duration(self) -> float:
        """Seconds."""
        return read_wav_info(self._content, "AudioFile.duration", self.content_type).duration

    @property
    def is_mono(self) -> bool:
        return self.channels == 1

    @property
    def is_stereo(self) -> bool:
        return self.channels == 2

    def to_np_array(self, sr: Optional[int] = None, return_sample_rate: bool = False):
        """The samples, at `sr` Hz when given (resampled), else at the file's rate; with
        `return_sample_rate`, the tuple (samples, sample rate)."""
        samples, rate = decode_wav(self._content, "AudioFile.to_np_array", self.content_type)
        if sr is not None and sr > 0 and sr != rate:
            samples, rate = resample(samples, rate, sr), sr
        return (samples, rate) if return_sample_rate else samples

    @_loader
    def from_np_array(self, np_array, sample_rate: int = 44100, audio_format: str = "wav",
                      codec: str = "pcm_s16le", array_layout: str = "av"):
        """Write samples as 16-bit PCM WAV. With array_layout "av" the array is (channels,
        samples), a 1-D one mono; with "soundfile" it is (samples,) or (samples, channels).
        A list of arrays is joined in time. Floats are taken as [-1, 1]."""
        numpy = require("numpy", "AudioFile.from_np_array")
        if str(audio_format).lower().lstrip(".") not in ("wav", "wave") or codec != "pcm_s16le":
            raise NotImplementedError(
                f"AudioFile.from_np_array writes WAV (pcm_s16le) only in svc's toolkit, not {audio_format} "
                f"({codec}); encode other formats with PyAV (pip install av), then AudioFile.from_bytes")

        def channels_first(array_like):
            array = numpy.asarray(array_like)
            if array_layout == "soundfile":
                return (array.reshape(-1, 1) if array.ndim == 1 else array).T
            return array.reshape(1, -1) if array.ndim == 1 else array

        if isinstance(np_array, (list, tuple)):
            parts = [channels_first(part) for part in np_array if part is not None and numpy.asarray(part).size > 0]
            if not parts:
                raise ValueError("Input array list is empty")
            if len({part.shape[0] for part in parts}) > 1:
                raise ValueError("All chunks must have the same number of channels")
            samples = numpy.concatenate(parts, axis=1)
        else:
            samples = channels_first(np_array)
        if numpy.issubdtype(samples.dtype, numpy.floating):
            samples = (numpy.clip(samples, -1.0, 1.0) * 32767).astype(numpy.int16)
        else:
            samples = samples.astype(numpy.int16)
        rate = 44100 if sample_rate is None else sample_rate
        return self.from_bytes(encode_wav(samples, rate), content_type=WAV_CONTENT_TYPE)


class VideoFile(MediaFile):
    media_kind = "video"

    def __iter__(self):
        """media-toolkit iterates over a video's frames; svc's toolkit does not decode video."""
        raise NotImplementedError(media_api_gap(type(self), "__iter__"))


def media_from_any(data: Any) -> MediaFile:
    """`data` read as media-toolkit's media_from_any reads it: into the class its content type
    names (ImageFile for an image/..., and so on), else a MediaFile."""
    media = MediaFile.from_any(data)
    media_class = _MEDIA_CLASSES.get((media.content_type or "").split("/", 1)[0], MediaFile)
    if media_class is MediaFile:
        return media
    named = None if media.file_name == MediaFile.default_file_name else media.file_name
    typed = media_class.from_bytes(media.to_bytes(), named, media.content_type)
    typed.path = media.path
    return typed


_MEDIA_CLASSES = {"image": ImageFile, "audio": AudioFile, "video": VideoFile}


# What str.splitlines splits ASCII text at; other text may hold more (\x85, \u2028, ...).
_ASCII_LINE_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")


def _decode_base64(text: str) -> bytes:
    # Line breaks are base64's own (MIME wraps at 76 characters); a space inside is text, not
    # a file ("not base64 at all" would otherwise read as ten bytes of audio), as media-toolkit reads it.
    compact = text.strip()
    if not compact.isascii() or any(separator in compact for separator in _ASCII_LINE_BREAKS):
        compact = "".join(compact.splitlines())  # a 2 MB copy, for text that has a line break
    padded = compact + "=" * (-len(compact) % 4)  # clients often strip the padding
    if ("-" in padded or "_" in padded) and not ("+" in padded or "/" in padded):
        padded = padded.translate(_URL_SAFE_TO_STANDARD)  # RFC 4648 section 5 alphabet
    try:
        return base64.b64decode(padded, validate=True)
    except binascii.Error as error:
        # Looked for only now: a walk over each character costs more than decoding a valid file.
        if any(character.isspace() for character in compact):
            raise ValueError("not valid base64 and not a data URL (it holds spaces: is it text rather than a file?)") from None
        raise ValueError(f"not valid base64 and not a data URL ({error})") from None


def is_web_url(text: str) -> bool:
    """A string from_any downloads (from_url) rather than reads as base64."""
    return text.startswith(("http://", "https://"))


def _encode_pil_image(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
