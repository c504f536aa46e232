"""A result's long lists of floats, carried as doubles rather than JSON (docs/worker-protocol.md)."""
from __future__ import annotations

import array
import sys

DOUBLES_MIN = 64  # a list of at least this many floats (an embedding) may be sent as Doubles


class Doubles:
    """A list of finite floats as their little-endian IEEE 754 doubles, which a result's line
    carries as base64 (EventWriter): Python writes a float as JSON in ~0.5 us, the gateway
    in half that, and an embedding's 1,536 of them were most of its call's time."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data

    def tolist(self) -> list[float]:
        doubles = array.array("d", self.data)
        if sys.byteorder == "big":
            doubles.byteswap()
        return doubles.tolist()
