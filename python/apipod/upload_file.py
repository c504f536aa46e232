"""What a parameter annotated with FastAPI's (Starlette's) UploadFile gets.

The apipod toolkit reads such an upload into a media-toolkit MediaFile (apipod 1.0.33, a service
run under it: `file_name`, `content_type`, `to_bytes()`, and `read()` that returns the bytes,
not a coroutine as FastAPI's does). svc gives its own MediaFile, which has the same, and that
also answers UploadFile's names, so code written for FastAPI reads it as well: `filename`,
`file` (a binary file object) and `size`.
"""
from __future__ import annotations

import io
from typing import Optional

from .media import MediaFile


class UploadedFile(MediaFile):
    @property
    def filename(self) -> Optional[str]:
        return self.file_name

    @property
    def file(self) -> io.BytesIO:
        """One file object per upload, as UploadFile's, so reads and seeks carry on from each other."""
        opened = self.__dict__.get("_file_object")
        if opened is None:
            opened = self.__dict__["_file_object"] = io.BytesIO(self._content)
        return opened

    @property
    def size(self) -> int:
        return len(self._content)
