"""media-toolkit API that svc's media classes do not have, and what to do instead.

Services written for the apipod toolkit use media-toolkit's classes; where svc's lack a name,
the error says so and what to use, rather than a bare "object has no attribute". Source: the
public attributes of media-toolkit 0.2.24's classes that svc's toolkit does not implement.
"""
from __future__ import annotations

from typing import Optional

_BYTES_INSTEAD = "use to_bytes(), read(n) or to_bytes_io()"
_PYAV = ("it decodes or encodes video with PyAV; decode video.to_bytes_io() yourself with PyAV "
         "(pip install av) or OpenCV")
_PYAV_AUDIO = ("it decodes or encodes audio with PyAV; svc's toolkit reads and writes WAV with to_np_array() "
               "and from_np_array(), and PyAV (pip install av) reads other formats from to_bytes_io()")

# Class name -> attribute -> what to do instead. A class's entries hold for its subclasses too.
GAPS: dict[str, dict[str, str]] = {
    "MediaFile": {
        "chunks": _BYTES_INSTEAD,
        "peek": _BYTES_INSTEAD,
        "fileobj": _BYTES_INSTEAD,
        "materialize": "svc's media files always hold their bytes",
        "is_lazy": "svc's media files always hold their bytes",
        "is_decoded": "svc's media files decode on each to_np_array()",
        "detection": "read content_type, sniffed from the bytes",
        "from_byte_chunks": "join the chunks, then from_bytes(data)",
        "from_bytesio_or_handle": "use from_bytesio(buffer) or from_file(handle)",
        "from_starlette_upload_file": "svc's gateway reads uploads; the endpoint gets a media file",
        "from_url_async": "use from_url(url)",
        "stream_to": _BYTES_INSTEAD,
        "stream_to_async": _BYTES_INSTEAD,
        "to_httpx_send_able_tuple": "use (file_name, to_bytes(), content_type)",
    },
    "ImageFile": {
        "detect_image_type_and_channels": "read channels, dimensions and content_type",
    },
    "AudioFile": {name: _PYAV_AUDIO for name in (
        "audio_info", "to_stream", "from_stream", "from_audio_generator", "from_av_audio_frames",
        "from_av_packages")},
    "VideoFile": {name: _PYAV for name in (
        "__iter__", "video_info", "to_stream", "from_stream", "add_audio", "extract_audio", "from_dir",
        "from_files", "from_generators", "from_image_files", "from_image_generator")},
}


def media_api_gap(cls: type, name: str) -> Optional[str]:
    """Why `cls` lacks `name` and what to use instead, or None when media-toolkit has no such name."""
    for klass in cls.__mro__:
        reason = GAPS.get(klass.__name__, {}).get(name)
        if reason is not None:
            return f"{cls.__name__}.{name} is media-toolkit API that svc's toolkit does not provide: {reason}"
    return None


def missing_media_attribute(cls: type, name: str) -> AttributeError:
    return AttributeError(media_api_gap(cls, name) or f"'{cls.__name__}' object has no attribute '{name}'")
