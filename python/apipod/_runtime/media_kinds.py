"""Whether a file's bytes are of the kind a typed media parameter takes (ImageFile: an image,
AudioFile: audio, VideoFile: video), told by their signature as the apipod toolkit's
media-toolkit tells a file's type: by its first bytes, whatever name or type it was sent with.
"""
from __future__ import annotations

from typing import Optional

from .content_type import GENERIC_CONTENT_TYPE, extension_for, sniff_content_type, sniffed_content_types

CHECKED_KINDS = ("image", "audio", "video")

# Containers that hold sound, pictures or both: their signature cannot say which (an .m4a
# and an .mp4 differ by their tracks, a WebM may be a song). Any other type is of the kind
# its top-level type names.
_CONTAINER_KINDS = {
    "video/mp4": ("audio", "video"),
    "video/quicktime": ("audio", "video"),
    "video/3gpp": ("audio", "video"),
    "video/webm": ("audio", "video"),
    "video/x-matroska": ("audio", "video"),
    "video/x-ms-asf": ("audio", "video"),
    "audio/ogg": ("audio", "video"),
}

_KIND_NAMES = {"image": "an image", "audio": "audio", "video": "a video"}


def kinds_of(content_type: str) -> tuple[str, ...]:
    return _CONTAINER_KINDS.get(content_type, (content_type.split("/", 1)[0],))


def content_type_of_kind(content: bytes, declared: Optional[str], kind: str) -> str:
    """The content type of a file a parameter of `kind` takes: the declared one when it names
    that kind, else the one its bytes announce (a PNG sent as text/html is image/png). Raises
    ValueError saying what was expected and what was found when the bytes are of no format of
    that kind: a text/html page sent as an image, or bytes of no known format at all."""
    sniffed = sniff_content_type(content)
    if sniffed is not None and kind in kinds_of(sniffed):
        return declared if declared and kind in kinds_of(declared.split(";", 1)[0].strip().lower()) else sniffed
    expected = f"expected {_KIND_NAMES[kind]} ({', '.join(_formats_of(kind))})"
    if not content:
        raise ValueError(f"{expected}, got an empty file")
    if sniffed is not None:
        raise ValueError(f"{expected}, got {sniffed} content")
    labelled = f" (labelled {declared})" if declared and declared != GENERIC_CONTENT_TYPE else ""
    raise ValueError(f"{expected}, got bytes of no {kind} format{labelled}")


def _formats_of(kind: str) -> list[str]:
    """The file extensions of the formats told apart for `kind`, for a message."""
    return [extension_for(content_type) or content_type for content_type in sniffed_content_types()
            if kind in kinds_of(content_type)]
