"""The pump's source for a plain spawner: the parent class's own ``progress()`` messages.

``open_parent_feed`` reads them into the pump's inbox (source ``"message"``);
``message_record`` turns one into a timeline record, keeping the parent's progress
percentage as the floor of the bar. ``RichKubeSpawner`` replaces this source with indexed
Kubernetes events. No JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from typing import Any

from richprogress.model.records import EventRecord
from richprogress.model.times import isoformat_z, utcnow
from richprogress.stream.broadcast import TimelineBroadcast
from richprogress.stream.inbox import Subscription
from richprogress.stream.pump import Closer

#: the inbox source name of the parent's messages
MESSAGE = "message"


def open_parent_feed(progress: Callable[[], AsyncGenerator[Any, None]], sub: Subscription, log: logging.Logger | logging.LoggerAdapter[Any]) -> Closer:
    """Push each mapping ``progress()`` yields into ``sub`` (numbered ``"1"``, ``"2"``, ...)
    from a task of its own; return what ends that task."""
    counter = 0

    async def pull() -> None:
        nonlocal counter
        async with aclosing(progress()) as items:
            async for item in items:
                if isinstance(item, Mapping):
                    counter += 1
                    sub.push(MESSAGE, str(counter), item)

    task = asyncio.ensure_future(pull())

    def done(task: asyncio.Future[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("richprogress: the spawner's own progress() failed: %r", task.exception())

    task.add_done_callback(done)

    async def close() -> None:
        task.cancel()
        try:
            await task
        except BaseException:
            pass

    return close


def message_record(formatter: Any, broadcast: TimelineBroadcast, item: Mapping[str, Any]) -> EventRecord | bool:
    """The record of one parent progress item, or whether the item changed the bar alone
    (a percentage without a message)."""
    progress = item.get("progress")
    if isinstance(progress, (int, float)) and not isinstance(progress, bool):
        # 100 is the hub's "ready" event, never the parent's
        broadcast.progress_floor = max(broadcast.progress_floor, min(int(progress), 99))
    message = item.get("message")
    if not isinstance(message, str) or not message.strip():
        return progress is not None
    record: EventRecord = formatter.format_message(message, timestamp=isoformat_z(utcnow()))
    if broadcast.progress_floor:
        broadcast.floor_at[record["id"]] = broadcast.progress_floor
    return record
