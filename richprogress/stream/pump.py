"""The pump's plumbing: its sources' clean-up type, the inline handler, the ending.

The pump (``RichProgressMixin._rp_pump``) is the one writer of a spawn's timeline: it
drains the inbox (``Subscription``) in batches. These pieces let a watch update be handled
right where it is pushed when that needs no waiting, and end the pump without losing what
already arrived. No JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from richprogress.model.timeline import SpawnTimeline
from richprogress.stream.broadcast import TimelineBroadcast
from richprogress.stream.inbox import Subscription

#: A pump source's clean-up, returned by ``_rp_open_feed``.
Closer = Callable[[], Awaitable[None]]

#: ``_rp_handle_now(timeline, broadcast, source, obj)``: True/False, handled (timeline
#: changed or not); None: leave it to the pump
HandleNow = Callable[[SpawnTimeline, TimelineBroadcast, str, Mapping[str, Any]], "bool | None"]


def inline_handler(
    handle_now: HandleNow,
    timeline: SpawnTimeline,
    broadcast: TimelineBroadcast,
    log: logging.Logger | logging.LoggerAdapter[Any],
) -> Callable[[str, Mapping[str, Any]], bool]:
    """The ``Subscription.handler`` of a pump: ``handle_now`` plus the wake-up of readers,
    never raising into the code that pushed (e.g. a reflector's watch loop)."""

    def handle(source: str, obj: Mapping[str, Any]) -> bool:
        try:
            changed = handle_now(timeline, broadcast, source, obj)
        except Exception:
            log.exception("richprogress: could not handle a progress item; skipped")
            return True
        if changed is None:
            return False
        if changed:
            broadcast.notify()
        return True

    return handle


async def stop_pump(pump: asyncio.Future[None], sub: Subscription) -> None:
    """Let the pump take in what already arrived, then end it.

    Shielded so that a second cancellation (the hub shutting down) cannot leave the pump
    running, and bounded so a stuck hook cannot hold up the hub.
    """
    sub.close()
    try:
        await asyncio.wait_for(asyncio.shield(pump), timeout=5)
    except BaseException:
        pump.cancel()
