"""Downloading a media file for `MediaFile.from_url`, with the standard library and within bounds.

A URL can point at a server that never answers or at a file without end; a service's worker
must not hang or run out of memory on one, so a download has a time and a size limit.
"""
from __future__ import annotations

import http.client
import os
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote, urlparse

# How long one read may wait (media-toolkit's own timeout), how long the whole download may
# take, and how large it may be.
READ_TIMEOUT_SECONDS = 30
MAX_DOWNLOAD_SECONDS = 300
MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024
_CHUNK_BYTES = 1024 * 1024
# RFC 6266 filename="..." (media-toolkit reads the same form).
_CONTENT_DISPOSITION_NAME = re.compile(r'filename="([^"]+)"')


@dataclass(frozen=True)
class Download:
    content: bytes
    file_name: Optional[str]  # from Content-Disposition, else the URL's last path segment
    content_type: Optional[str]  # what the server says, without parameters


def download(url: str, headers: Optional[dict] = None) -> Download:
    """GET `url` (http or https); an OSError saying why when it fails or exceeds a limit."""
    if urlparse(url).scheme.lower() not in ("http", "https"):
        raise ValueError(f"from_url takes an http or https URL, not {url!r}")
    request = urllib.request.Request(url, headers={"User-Agent": "apipod (svc)", **(headers or {})})
    deadline = time.monotonic() + MAX_DOWNLOAD_SECONDS
    try:
        with urllib.request.urlopen(request, timeout=READ_TIMEOUT_SECONDS) as response:
            declared = response.headers.get("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > MAX_DOWNLOAD_BYTES:
                raise OSError(f"cannot download {url}: it is {int(declared)} bytes, over the limit of {MAX_DOWNLOAD_BYTES}")
            chunks, size = [], 0
            while True:
                # read1 returns what one receive brings, so the time limit is checked however
                # slowly the server sends; read() would wait for a whole chunk.
                chunk = response.read1(_CHUNK_BYTES)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_DOWNLOAD_BYTES:
                    raise OSError(f"cannot download {url}: it is over the limit of {MAX_DOWNLOAD_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise OSError(f"cannot download {url}: it took over {MAX_DOWNLOAD_SECONDS} s")
                chunks.append(chunk)
            if declared is not None and declared.isdigit() and not response.chunked and size < int(declared):
                # http.client returns a short body without complaint when the server closes early.
                raise OSError(f"cannot download {url}: the server closed the connection after {size} of its "
                              f"{int(declared)} bytes")
            content_type = response.headers.get_content_type() if response.headers.get("Content-Type") else None
            return Download(b"".join(chunks), _file_name(response.headers.get("Content-Disposition"), url), content_type)
    except urllib.error.HTTPError as error:
        raise OSError(f"cannot download {url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise OSError(f"cannot download {url}: {error.reason}") from None
    except TimeoutError:
        raise OSError(f"cannot download {url}: no answer within {READ_TIMEOUT_SECONDS} s") from None
    except http.client.InvalidURL as error:
        raise ValueError(f"cannot download {url}: {error}") from None
    except http.client.HTTPException as error:  # a reply that is not HTTP, a broken chunked body, ...
        raise OSError(f"cannot download {url}: a broken HTTP reply ({type(error).__name__}: "
                      f"{str(error).strip()})") from None


def _file_name(content_disposition: Optional[str], url: str) -> Optional[str]:
    named = _CONTENT_DISPOSITION_NAME.search(content_disposition or "")
    if named:
        return named.group(1)
    return os.path.basename(unquote(urlparse(url).path)) or None
