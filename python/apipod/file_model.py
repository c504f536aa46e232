"""FileModel: the upstream apipod toolkit's wire form of a file (from socaity-schemas).

As a parameter's annotation it takes what a MediaFile parameter takes (an upload, base64, a
data URL, a media object), and the function gets a MediaFile, as upstream's does. Returned, it
is sent as a media file.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union


@dataclass
class FileModel:
    file_name: str
    content_type: str
    content: Union[str, bytes]  # base64, or a URL
    max_size_mb: Optional[float] = 4000
