"""The pump: the one writer of a spawn's timeline, and its plumbing.

``run_pump`` drains the spawn's inbox (``Subscription``) in batches through the spawner's
hooks (``PumpHooks``, which ``RichProgressMixin`` implements and ``RichKubeSpawner``
overrides), wakes the readers once per batch, and wakes by itself when a patience row or a
fatal cause's hold is due. ``inline_handler`` lets a watch update be handled right where it
is pushed when that needs no waiting; ``stop_pump`` ends the pump without losing what
already arrived. No JupyterHub or Kubernetes import here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from richprogress.model.timeline import SpawnTimeline
from richprogress.stream.broadcast import TimelineBroadcast
from richprogress.stream.inbox import Subscription

#: A pump source's clean-up, returned by ``_rp_open_feed``.
Closer = Callable[[], Awaitable[None]]

#: ``_rp_handle_now(timeline, broadcast, source, obj)``: True/False, handled (timeline
#: changed or not); None: leave it to the pump
HandleNow = Callable[[SpawnTimeline, TimelineBroadcast, str, Mapping[str, Any]], "bool | None"]


class PumpHooks(Protocol):
    """What the pump calls on its spawner (see ``RichProgressMixin`` for each)."""

    log: Any

    @property
    def event_formatter(self) -> Any: ...

    async def _rp_open_feed(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, sub: Subscription) -> Closer | None: ...

    def _rp_handle_now(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, source: str, obj: Mapping[str, Any]) -> bool | None: ...

    async def _rp_handle(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, source: str, obj: Mapping[str, Any]) -> bool: ...

    async def _rp_tick(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, final: bool) -> bool: ...

    def _rp_next_wakeup(self, timeline: SpawnTimeline, state: dict[str, Any]) -> float | None: ...

    def _rp_patience(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, state: dict[str, Any]) -> bool: ...

    def _rp_live_changed(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, changed: bool) -> bool: ...


async def run_pump(spawner: PumpHooks, timeline: SpawnTimeline, broadcast: TimelineBroadcast, sub: Subscription) -> None:
    """Fill ``timeline`` from ``sub`` until the spawn ends (``sub`` closed and drained).

    A failing hook is logged and skipped: the spawn goes on, with less progress shown.
    """
    log = spawner.log
    closer: Closer | None = None
    state: dict[str, Any] = {"patience_n": 0, "patience_count": {}}
    try:
        # compile the rules now (once per hub), not when the spawn's first event arrives
        spawner.event_formatter.ruleset  # noqa: B018
        closer = await spawner._rp_open_feed(timeline, broadcast, sub)
        sub.handler = inline_handler(spawner._rp_handle_now, timeline, broadcast, log)
        while True:
            changed = False
            for source, obj in sub.drain():
                try:
                    changed |= await spawner._rp_handle(timeline, broadcast, source, obj)
                except Exception:
                    log.exception("richprogress: could not handle a progress item; skipped")
            changed |= await spawner._rp_tick(timeline, broadcast, final=sub.closed)
            if changed:
                broadcast.notify()
            if sub.closed and not len(sub):
                break
            if not await sub.wait(spawner._rp_next_wakeup(timeline, state)):
                # woken by time alone: a fatal cause's hold may have passed, a patience
                # row may be due
                held = _hold_passed(spawner, timeline, broadcast)
                if spawner._rp_patience(timeline, broadcast, state) or held:
                    broadcast.notify()
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("richprogress: the progress pump failed; the spawn goes on without it")
    finally:
        if closer is not None:
            try:
                await closer()
            except Exception:
                log.exception("richprogress: closing a progress source failed")


def _hold_passed(spawner: PumpHooks, timeline: SpawnTimeline, broadcast: TimelineBroadcast) -> bool:
    """Refresh the live diagnosis when a fatal cause's hold time has passed (time alone
    may then end the spawn); True when it changed."""
    live = broadcast.live
    recheck = live.recheck_in(timeline) if live is not None else None
    if live is None or recheck is None or recheck > 0.01:
        return False
    return spawner._rp_live_changed(timeline, broadcast, live.refresh(timeline))


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
