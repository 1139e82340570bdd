"""One object per asyncio event loop, made on first use and forgotten with its loop.

The batching of watch updates and the inbox's patience clock each keep one helper per
event loop. Tests close a loop per test while reflectors live on, so the helpers are kept
in a ``WeakKeyDictionary``: a closed loop is not kept alive by them.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerLoop(weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T], Generic[T]):
    """A weak dict by loop; ``of(loop)`` is the loop's helper, made by ``make(loop)`` the
    first time."""

    def __init__(self, make: Callable[[asyncio.AbstractEventLoop], T]) -> None:
        super().__init__()
        self._make = make

    def of(self, loop: asyncio.AbstractEventLoop) -> T:
        item = self.get(loop)
        if item is None:
            item = self[loop] = self._make(loop)
        return item
