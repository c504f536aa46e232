"""Running the app's `lifespan`: startup before the first call, shutdown after the last.

Accepted, as in FastAPI/Starlette: a factory taking the app (or nothing) that returns an async
or a plain context manager, e.g. an `@asynccontextmanager` function; or an undecorated
generator or async generator function that yields once.
"""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Callable, Optional

if TYPE_CHECKING:  # the worker imports asyncio only when a service needs a loop
    import asyncio


class Lifespan:
    def __init__(self, factory: Optional[Callable], app: Any, loop: Optional[asyncio.AbstractEventLoop]):
        self._factory = factory
        self._app = app
        self._loop = loop
        self._finish: Optional[Callable[[], None]] = None

    def start(self) -> None:
        if self._factory is None:
            return
        manager = self._factory(self._app) if _takes_arguments(self._factory) else self._factory()
        if hasattr(manager, "__aenter__"):
            self._loop.run_until_complete(manager.__aenter__())
            self._finish = lambda: self._loop.run_until_complete(manager.__aexit__(None, None, None))
        elif hasattr(manager, "__enter__"):
            manager.__enter__()
            self._finish = lambda: manager.__exit__(None, None, None)
        elif inspect.isasyncgen(manager):
            self._loop.run_until_complete(manager.__anext__())
            self._finish = lambda: self._loop.run_until_complete(_finish_async_generator(manager))
        elif inspect.isgenerator(manager):
            next(manager)
            self._finish = lambda: _finish_generator(manager)
        else:
            raise TypeError(
                f"lifespan returned a {type(manager).__name__}; it must be an async context manager "
                "factory (@asynccontextmanager) or a generator function that yields once"
            )

    def stop(self) -> None:
        finish, self._finish = self._finish, None
        if finish is not None:
            finish()


def _takes_arguments(factory: Callable) -> bool:
    try:
        return bool(inspect.signature(factory).parameters)
    except (TypeError, ValueError):  # no signature to read (some builtins): pass the app
        return True


def _finish_generator(generator) -> None:
    try:
        next(generator)
    except StopIteration:
        return
    raise RuntimeError("the lifespan generator yielded more than once")


async def _finish_async_generator(generator) -> None:
    try:
        await generator.__anext__()
    except StopAsyncIteration:
        return
    raise RuntimeError("the lifespan generator yielded more than once")
