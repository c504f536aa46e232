"""Endpoints exercising every way a call can go, for the worker tests."""
import asyncio
import dataclasses
import enum
import sys
import time
from typing import AsyncIterator, Iterator

from apipod import APIPod, ImageFile, JobProgress, MediaFile

app = APIPod(title="calls")


class Colour(enum.Enum):
    red = "red"


@dataclasses.dataclass
class Report:
    colour: Colour
    pair: tuple
    ratio: float
    raw: bytes


@app.endpoint("/echo")
def echo(text: str) -> str:
    """Returns its input."""
    return text


@app.endpoint("/fail")
def fail():
    raise ValueError("broken on purpose")


@app.endpoint("/noisy")
def noisy() -> str:
    print('{"type": "result", "call": "fake", "value": "printed, not sent"}')
    print("to stderr", file=sys.stderr)
    return "quiet result"


@app.endpoint("/steps")
def steps(job_progress: JobProgress) -> str:
    job_progress.set_status(0.25, "quarter")
    job_progress.set_status(2.0, "past the end")
    return "done"


@app.endpoint("/tokens")
def tokens(prompt: str) -> Iterator[str]:
    for word in prompt.split():
        yield word


@app.endpoint("/async-tokens")
async def async_tokens(prompt: str) -> AsyncIterator[str]:
    for word in prompt.split():
        await asyncio.sleep(0)
        yield word.upper()


@app.endpoint("/returned-iterator")
def returned_iterator(prompt: str) -> Iterator[str]:
    return iter(prompt.split())


@app.endpoint("/double")
async def double(number: int) -> int:
    await asyncio.sleep(0.01)
    return number * 2


@app.endpoint("/sleep")
def sleep(seconds: float = 30) -> str:
    time.sleep(seconds)
    return "woke up"


@app.endpoint("/async-sleep")
async def async_sleep(seconds: float = 30) -> str:
    await asyncio.sleep(seconds)
    return "woke up"


@app.endpoint("/stubborn")
def stubborn() -> str:
    try:
        time.sleep(30)
    except Exception:  # a cancel is not an Exception, so it still gets through
        return "swallowed"
    return "woke up"


@app.endpoint("/big-image")
def big_image(size: int = 100_000) -> ImageFile:
    return ImageFile.from_bytes(b"\x89PNG\r\n\x1a\n" + bytes(size), "big.png")


@app.endpoint("/describe-file")
def describe_file(file: MediaFile) -> dict:
    return {"size": file.file_size(), "file_name": file.file_name, "content_type": file.content_type}


@app.endpoint("/report")
def report() -> Report:
    return Report(Colour.red, (1, 2), float("nan"), b"\x00\x01")


@app.endpoint("/unserialisable")
def unserialisable():
    return object()


@app.endpoint("/exit")
def leave():
    sys.exit(3)
