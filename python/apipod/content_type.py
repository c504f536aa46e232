"""Guess a file's content type from its first bytes, falling back to its file name."""
from __future__ import annotations

import mimetypes
from typing import Optional

GENERIC_CONTENT_TYPE = "application/octet-stream"

# Each entry: the byte patterns that must all match, as (offset, bytes), and the content type.
# An offset of None means "anywhere in the header". Signatures are those published with each
# format (PNG spec, JFIF, RIFF, ISO base media file format "ftyp" brands, EBML DocType, ...).
# More specific entries come first.
_SIGNATURES: list[tuple[tuple[tuple[Optional[int], bytes], ...], str]] = [
    (((0, b"\x89PNG\r\n\x1a\n"),), "image/png"),
    (((0, b"\xff\xd8\xff"),), "image/jpeg"),
    (((0, b"GIF87a"),), "image/gif"),
    (((0, b"GIF89a"),), "image/gif"),
    (((0, b"RIFF"), (8, b"WEBP")), "image/webp"),
    (((0, b"II*\x00"),), "image/tiff"),
    (((0, b"MM\x00*"),), "image/tiff"),
    (((0, b"BM"),), "image/bmp"),
    (((4, b"ftypavif"),), "image/avif"),
    (((4, b"ftypheic"),), "image/heic"),
    (((0, b"RIFF"), (8, b"WAVE")), "audio/wav"),
    (((0, b"ID3"),), "audio/mpeg"),
    (((0, b"\xff\xfb"),), "audio/mpeg"),
    (((0, b"\xff\xf3"),), "audio/mpeg"),
    (((0, b"\xff\xf2"),), "audio/mpeg"),
    (((0, b"OggS"),), "audio/ogg"),
    (((0, b"fLaC"),), "audio/flac"),
    (((4, b"ftypM4A "),), "audio/mp4"),
    (((4, b"ftypqt  "),), "video/quicktime"),
    (((4, b"ftyp"),), "video/mp4"),
    (((0, b"RIFF"), (8, b"AVI ")), "video/x-msvideo"),
    (((0, b"\x1a\x45\xdf\xa3"), (None, b"webm")), "video/webm"),
    (((0, b"\x1a\x45\xdf\xa3"),), "video/x-matroska"),
    (((0, b"%PDF-"),), "application/pdf"),
    (((0, b"\x93NUMPY"),), "application/x-npy"),
    (((0, b"PK\x03\x04"),), "application/zip"),
]

_HEADER_SIZE = 64


def guess_content_type(content: bytes, file_name: Optional[str] = None) -> str:
    """The content type the bytes announce; else the one the file name suggests; else generic."""
    header = bytes(content[:_HEADER_SIZE])
    for patterns, content_type in _SIGNATURES:
        if all(_matches(header, offset, pattern) for offset, pattern in patterns):
            return content_type
    if file_name:
        guessed, _ = mimetypes.guess_type(file_name, strict=False)
        if guessed:
            return guessed
    return GENERIC_CONTENT_TYPE


def guess_extension(content_type: Optional[str]) -> str:
    """A file extension with its dot (".png"), or "" when the content type has none."""
    if not content_type or content_type == GENERIC_CONTENT_TYPE:
        return ""
    return mimetypes.guess_extension(content_type, strict=False) or ""


def _matches(header: bytes, offset: Optional[int], pattern: bytes) -> bool:
    if offset is None:
        return pattern in header
    return header[offset:offset + len(pattern)] == pattern
