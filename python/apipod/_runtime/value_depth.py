"""How deeply nested a value the worker carries (APIPOD_MAX_VALUE_DEPTH, the gateway's limit).

Python counts nesting against its recursion limit, 1,000 by default: its json module takes a
frame's worth per level to decode and encode, svc's result encoding two (a function and its
comprehension), and a function that walks its input recursively its own. At the gateway's
512 levels those together overflowed the default, so the worker raises the limit to leave
every level room for FRAMES_PER_LEVEL frames.
"""
from __future__ import annotations

import sys

# svc's own walks take at most two frames a level; the rest is the function's.
FRAMES_PER_LEVEL = 8
# The frames beneath the first level: the worker's loop, the call, the user's own helpers.
BASE_FRAMES = 1000


class ResultTooDeep(ValueError):
    """A result nested deeper than the gateway takes input: it could not read it back."""

    def __init__(self, max_depth: int):
        super().__init__(
            f"the result nests lists or dicts more than {max_depth} levels deep, the most svc carries; "
            "return it flatter, or as a JSON string")


def make_room_for(max_depth: int) -> None:
    """Raises the recursion limit (never lowers it) so a value `max_depth` levels deep fits.
    The 5,096 frames of 512 levels fit the main thread's 8 MiB stack (the function runs
    there) with room to spare: a recursion through C code 10,000 frames deep does on 3.11,
    and from 3.12 C has a limit of its own. So this trades no RecursionError for a crash."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), BASE_FRAMES + FRAMES_PER_LEVEL * max_depth))
