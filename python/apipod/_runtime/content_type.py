"""Guess a file's content type from its first bytes, falling back to its file name."""
from __future__ import annotations

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
    (((0, b"BM"), (6, b"\x00\x00\x00\x00")), "image/bmp"),  # its reserved fields: "BM" alone is text too
    (((0, b"\x00\x00\x01\x00"),), "image/x-icon"),
    (((0, b"\x00\x00\x00\x0cjP  \r\n\x87\n"),), "image/jp2"),
    (((0, b"\xff\x0a"),), "image/jxl"),
    (((0, b"\x00\x00\x00\x0cJXL \r\n\x87\n"),), "image/jxl"),
    (((4, b"ftypavif"),), "image/avif"),
    (((4, b"ftypavis"),), "image/avif"),
    (((4, b"ftypheic"),), "image/heic"),
    (((4, b"ftypheix"),), "image/heic"),
    (((4, b"ftypmif1"),), "image/heif"),
    (((4, b"ftypmsf1"),), "image/heif"),
    (((0, b"RIFF"), (8, b"WAVE")), "audio/wav"),
    (((0, b"FORM"), (8, b"AIFF")), "audio/aiff"),
    (((0, b"FORM"), (8, b"AIFC")), "audio/aiff"),
    *((((0, b"ID3" + bytes((version,))),), "audio/mpeg") for version in (2, 3, 4)),  # ID3v2.2 to 2.4
    # MPEG audio frames without a tag: an 11-bit sync, then version and layer (ISO 11172-3);
    # layer bits 00 are AAC's ADTS framing instead (ISO 13818-7).
    *((((0, bytes((0xFF, second))),), "audio/mpeg") for second in (0xFB, 0xFA, 0xF3, 0xF2, 0xE3, 0xE2,
                                                                    0xFD, 0xFC, 0xF5, 0xF4, 0xE5, 0xE4)),
    (((0, b"\xff\xf1"),), "audio/aac"),
    (((0, b"\xff\xf9"),), "audio/aac"),
    (((0, b"#!AMR"),), "audio/amr"),
    (((0, b"OggS"),), "audio/ogg"),
    (((0, b"fLaC"),), "audio/flac"),
    (((4, b"ftypM4A "),), "audio/mp4"),
    (((4, b"ftypqt  "),), "video/quicktime"),
    (((4, b"ftyp3g"),), "video/3gpp"),
    (((4, b"ftyp"),), "video/mp4"),
    # QuickTime files older than the ISO format open with another atom than `ftyp`.
    *((((4, atom),), "video/quicktime") for atom in (b"moov", b"mdat", b"wide", b"pnot", b"free", b"skip")),
    (((0, b"RIFF"), (8, b"AVI ")), "video/x-msvideo"),
    (((0, b"\x1a\x45\xdf\xa3"), (None, b"webm")), "video/webm"),
    (((0, b"\x1a\x45\xdf\xa3"),), "video/x-matroska"),
    (((0, b"\x30\x26\xb2\x75\x8e\x66\xcf\x11"),), "video/x-ms-asf"),
    (((0, b"FLV\x01"),), "video/x-flv"),
    (((0, b"\x00\x00\x01\xba"),), "video/mpeg"),
    (((0, b"%PDF-"),), "application/pdf"),
    (((0, b"\x93NUMPY"),), "application/x-npy"),
    (((0, b"PK\x03\x04"),), "application/zip"),
]

_HEADER_SIZE = 64

# Content type -> extension, as media-toolkit names them (media-toolkit 0.2.24,
# core/file_types.py EXTENSION_TO_MIME, the first extension listed for each type: "jpg", where
# its reversed lookup ends on "jfif"), with WAV's other names; mimetypes answers for the rest.
_EXTENSIONS = {
    "image/jpeg": "jpg", "image/png": "png", "image/gif": "gif", "image/bmp": "bmp", "image/tiff": "tiff",
    "image/x-icon": "ico", "image/svg+xml": "svg", "image/webp": "webp", "image/avif": "avif",
    "image/heic": "heic", "image/heif": "heif",
    "audio/wav": "wav", "audio/wave": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/ogg": "ogg",
    "audio/flac": "flac", "audio/aac": "aac", "audio/mp4": "m4a", "audio/x-ms-wma": "wma", "audio/opus": "opus",
    "audio/aiff": "aiff", "audio/amr": "amr",
    "video/mp4": "mp4", "video/x-msvideo": "avi", "video/quicktime": "mov", "video/x-matroska": "mkv",
    "video/webm": "webm", "video/x-flv": "flv", "video/x-ms-wmv": "wmv", "video/3gpp": "3gp", "video/ogg": "ogv",
    "video/x-m4v": "m4v", "video/x-ms-asf": "asf", "video/mpeg": "mpg",
    "image/jp2": "jp2", "image/jxl": "jxl",
    "model/obj": "obj", "model/gltf-binary": "glb", "model/gltf+json": "gltf", "model/stl": "stl",
    "application/x-npy": "npy", "application/x-npz": "npz", "application/x-pickle": "pkl",
    "application/pdf": "pdf", "text/plain": "txt", "text/html": "html", "application/json": "json",
    "text/csv": "csv", "application/xml": "xml", "application/zip": "zip", "application/gzip": "gz",
}


def guess_content_type(content: bytes, file_name: Optional[str] = None) -> str:
    """The content type the bytes announce; else the one the file name suggests; else generic."""
    sniffed = sniff_content_type(content)
    if sniffed is not None:
        return sniffed
    if file_name:
        import mimetypes  # here: it brings urllib.parse and ipaddress, ~0.4 MiB a worker would hold for good
        guessed, _ = mimetypes.guess_type(file_name, strict=False)
        if guessed:
            return guessed
    return GENERIC_CONTENT_TYPE


def sniff_content_type(content: bytes) -> Optional[str]:
    """The content type the bytes' signature announces; None when they match none."""
    header = bytes(content[:_HEADER_SIZE])
    for patterns, content_type in _SIGNATURES:
        if all(_matches(header, offset, pattern) for offset, pattern in patterns):
            return content_type
    return None


def sniffed_content_types() -> list[str]:
    """Every content type sniff_content_type may answer, each once, in the table's order."""
    return list(dict.fromkeys(content_type for _, content_type in _SIGNATURES))


def extension_for(content_type: Optional[str]) -> Optional[str]:
    """The usual extension for a content type, without its dot ("jpg"); None when there is none."""
    if not content_type or content_type == GENERIC_CONTENT_TYPE:
        return None
    known = _EXTENSIONS.get(content_type.split(";", 1)[0].strip().lower())
    if known is not None:
        return known
    import mimetypes  # here, as in guess_content_type
    guessed = mimetypes.guess_extension(content_type, strict=False)
    return guessed[1:] if guessed else None


def _matches(header: bytes, offset: Optional[int], pattern: bytes) -> bool:
    if offset is None:
        return pattern in header
    return header[offset:offset + len(pattern)] == pattern
