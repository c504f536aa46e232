"""`{"$file": {...}}` references: payloads above 64 KiB travel as temporary files, not inline.

Both sides use one directory, `APIPOD_FILE_DIR` (default: the system temp directory). The
worker only reads, and deletes, references inside it, so a path smuggled into a call can
never make it read or delete another file.
"""
from __future__ import annotations

import os
from typing import Any, Optional

INLINE_LIMIT = 64 * 1024
FILE_KEY = "$file"


def file_directory() -> str:
    directory = os.environ.get("APIPOD_FILE_DIR")  # svc sets it for its workers
    if not directory:
        import tempfile  # with shutil and random, ~1 MiB a worker need not hold

        directory = tempfile.gettempdir()
    return os.path.realpath(directory)


def is_file_reference(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get(FILE_KEY), dict)


def read_file_reference(reference: dict) -> tuple[bytes, Optional[str], Optional[str]]:
    """The content, file name and content type a reference points at; deletes the file."""
    details = reference[FILE_KEY]
    path = _checked_path(details.get("path"))
    try:
        with open(path, "rb") as file:
            content = file.read()
    finally:
        _delete(path)
    return content, details.get("file_name"), details.get("content_type")


def write_file_reference(content: bytes, file_name: Optional[str], content_type: Optional[str]) -> dict:
    """Writes the content to a new file in the file directory; the gateway deletes it."""
    import tempfile

    descriptor, path = tempfile.mkstemp(prefix="apipod-", dir=file_directory())
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(content)
    except BaseException:  # a cancel landing mid-write leaves no half file behind
        _delete(path)
        raise
    return {FILE_KEY: {"path": path, "file_name": file_name, "content_type": content_type}}


def delete_referenced_files(value: Any) -> None:
    """Deletes every file referenced anywhere in `value` that is still there, so an upload
    never outlives its call, even when the call fails before reading it."""
    if is_file_reference(value):
        path = value[FILE_KEY].get("path")
        if _is_in_file_directory(path):
            _delete(path)
        return
    if isinstance(value, dict):
        items = value.values()
    elif isinstance(value, list):
        items = value
    else:
        return
    # Only a dict or a list can hold a reference. The kinds of a long list of numbers are
    # found in C (map, set), where a call per item cost ~25 ms for 200,000 of them.
    if not any(issubclass(kind, (dict, list)) for kind in set(map(type, items))):
        return
    for item in items:
        delete_referenced_files(item)


def _checked_path(path: Any) -> str:
    if not _is_in_file_directory(path):
        raise ValueError(f"refusing a $file reference outside {file_directory()}: {path!r}")
    return path


def _is_in_file_directory(path: Any) -> bool:
    if not isinstance(path, str) or not path:
        return False
    directory = file_directory()
    return os.path.commonpath([directory, os.path.realpath(path)]) == directory


def _delete(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
