"""The worker's one event loop, for its life (lifespan resources may be bound to it).

Made on demand: asyncio costs a worker ~20 ms to import and ~6 MiB of memory, which a service
of plain `def` endpoints never needs. A service that imported asyncio itself gets its loop as
soon as it is ready, as code that calls `asyncio.get_event_loop()` outside a coroutine expects.
"""
from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    import asyncio


class WorkerLoop:
    def __init__(self, loop: Optional[asyncio.AbstractEventLoop] = None):
        self._loop = loop

    def make_if_asyncio_is_loaded(self) -> None:
        if "asyncio" in sys.modules:
            self.get()

    def get(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = event_loop()
        return self._loop

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()


def event_loop() -> asyncio.AbstractEventLoop:
    """The loop the service took at its import (`asyncio.get_event_loop()` made it then), or a
    new one, set as the thread's current loop."""
    import asyncio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+ warn where get_event_loop makes a loop
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:  # none set (asyncio.run ends so), and 3.14+ make none
            loop = None
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop
