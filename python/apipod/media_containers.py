"""MediaList and MediaDict: media-toolkit's containers of media files, as a list and a dict.

As a parameter's annotation, `MediaList[ImageFile]` takes a list of images, like
`list[ImageFile]`, and the function gets a MediaList. Items are read into media files as they
are added (media files, paths, URLs, bytes, base64, media objects); what cannot be read stays
as it is, as in media-toolkit 0.2.24.
"""
from __future__ import annotations

import os
import re
from typing import Any, Generic, Optional, TypeVar

from .media import MediaFile, is_web_url, media_from_any

T = TypeVar("T", bound=MediaFile)
# Raw base64 a container reads as a file, as media-toolkit's is_likely_base64 does: at least
# 100 characters, else "a cat" or "test" would be decoded into a few bytes of nonsense.
_LIKELY_BASE64 = re.compile(r"[A-Za-z0-9+/]{100,}={0,2}")


class _MediaContainer:
    """What MediaList and MediaDict share: how an item is read, and media-toolkit's settings.
    use_temp_file and temp_dir are accepted for media-toolkit's signature; svc keeps files in memory."""

    def _settings(self, download_files: bool, read_system_files: bool, file_name: str) -> None:
        self.download_files = download_files
        self.read_system_files = read_system_files
        self.file_name = file_name

    def _read(self, item: Any) -> Any:
        if isinstance(item, (MediaFile, _MediaContainer)) or item is None:
            return item
        if isinstance(item, list):
            return MediaList(item, self.download_files, self.read_system_files)
        if isinstance(item, dict) and "content" not in item:
            return MediaDict(item, self.download_files, self.read_system_files)
        if hasattr(item, "__len__") and len(item) == 0:
            return item
        if isinstance(item, str):
            if is_web_url(item):
                if not self.download_files:
                    return item
            elif os.path.isfile(item):
                if not self.read_system_files:
                    return item
            elif not (item.startswith("data:") or (_LIKELY_BASE64.fullmatch(item) and len(item) % 4 == 0)):
                return item  # text, not a file
        try:
            return media_from_any(item)
        except (TypeError, ValueError, OSError):
            return item


class MediaList(_MediaContainer, Generic[T], list):
    def __init__(self, files: Optional[list] = None, download_files: bool = True, read_system_files: bool = True,
                 file_name: str = "MediaList", use_temp_file: bool = False, temp_dir: Optional[str] = None):
        super().__init__()
        self._settings(download_files, read_system_files, file_name)
        self.extend(files or [])

    def append(self, file: Any) -> None:
        super().append(self._read(file))

    def extend(self, files) -> None:
        for file in files:
            self.append(file)

    def from_any(self, data: Any, allow_reads_from_disk: bool = True) -> "MediaList[T]":
        if data is not None:
            self.extend(data if isinstance(data, list) else [data])
        return self

    @property
    def media_files(self) -> list:
        return [item for item in self if isinstance(item, MediaFile)]

    def to_base64(self) -> list[str]:
        return [file.to_base64() for file in self.media_files]

    def to_bytes(self) -> list[bytes]:
        return [file.to_bytes() for file in self.media_files]

    def to_bytes_io(self) -> list:
        return [file.to_bytes_io() for file in self.media_files]

    def file_size(self, unit: str = "bytes"):
        return sum(file.file_size(unit) for file in self.media_files)

    def to_json(self) -> list:
        return [item.to_json() if isinstance(item, (MediaFile, _MediaContainer)) else item for item in self]

    def to_list(self) -> list:
        return list(self)


class MediaDict(_MediaContainer, Generic[T], dict):
    def __init__(self, files: Optional[dict] = None, download_files: bool = True, read_system_files: bool = True,
                 file_name: str = "MediaDict", use_temp_file: bool = False, temp_dir: Optional[str] = None):
        super().__init__()
        self._settings(download_files, read_system_files, file_name)
        self.update(files or {})

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, self._read(value))

    def update(self, files=(), **more) -> None:
        for key, value in {**dict(files), **more}.items():
            self[key] = value

    def from_any(self, data: Optional[dict], allow_reads_from_disk: bool = True) -> "MediaDict[T]":
        self.update(data or {})
        return self

    def to_base64(self) -> dict:
        return {key: value.to_base64() for key, value in self.items() if isinstance(value, MediaFile)}

    def to_bytes(self) -> dict:
        return {key: value.to_bytes() for key, value in self.items() if isinstance(value, MediaFile)}

    def file_size(self, unit: str = "bytes"):
        return sum(value.file_size(unit) for value in self.values() if isinstance(value, (MediaFile, _MediaContainer)))

    def to_json(self) -> dict:
        return {key: value.to_json() if isinstance(value, (MediaFile, _MediaContainer)) else value
                for key, value in self.items()}

    def to_dict(self) -> dict:
        return dict(self)
