"""RichProgressMixin: spawn timelines and record-carrying progress events for any spawner.

One and only purpose: turn a spawn into a ``SpawnTimeline`` (kept on the spawner as
``spawner.spawn_timeline`` until the next spawn starts) and serve it through ``progress()``
as DESIGN.md contract 3 dicts ``{"progress", "message", "record"}``.

How it works:

- ``start()`` is wrapped: it begins a new timeline (timed from the spawn request), starts
  a *pump* task that fills the timeline while the spawn runs, and records the outcome
  (``ready``, or ``failed`` with the reason, also when the hub's own start timeout cancels
  ``start()``, whose ``TimeoutError`` carries no message).
- The pump is the only writer. For a plain spawner it turns each message of the parent
  class's ``progress()`` into a record; ``RichKubeSpawner`` replaces the source with
  indexed Kubernetes events. The pump also adds patience records ("Still waiting for ...")
  at growing intervals counted from the spawn request.
- Every ``progress()`` call is a reader: it first replays the records the timeline already
  holds (same ids, so a reconnecting page can drop what it has), then waits for changes and
  yields new or updated records (an update keeps its ``id`` and carries the new ``count``).
  Several pages on the same spawn share the pump's work.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from datetime import datetime, timedelta, timezone
from typing import Any

from traitlets import Dict, Float, Integer, Unicode
from traitlets.config import LoggingConfigurable

from .event_index import Subscription
from .records import PHASE_NAMES, PHASE_PROGRESS, EventRecord
from .report import format_clock
from .spawn_events import spawn_ended
from .timeline import DEFAULT_MAX_RECORDS, SpawnTimeline, isoformat_z, parse_timestamp, utcnow

#: A pump source's clean-up, returned by ``_rp_open_feed``.
Closer = Callable[[], Awaitable[None]]


def format_elapsed(seconds: float) -> str:
    """``+M:SS`` (or ``+H:MM:SS``), the "since spawn" clock used in patience messages.

    The same clock the pages and the text report show (``report.format_clock``).
    """
    return format_clock(seconds)


class _Broadcast:
    """Wakes every reader of one timeline when the pump changed it (no polling).

    A reader notes ``version`` before it reads the timeline and then asks
    ``waiter(version)`` for a future: None when the timeline changed meanwhile (read
    again), else one that ``notify`` resolves. One plain future per waiting reader, made
    only when it waits (cheaper than an ``asyncio.Event`` per change).
    """

    def __init__(self) -> None:
        self.version = 0
        self._waiters: list[asyncio.Future[None]] = []
        #: progress reported by the parent spawner's own progress() (plain spawners only)
        self.progress_floor = 0
        #: the largest since_spawn given so far: the clock shown in the timeline never runs back
        self.last_since = 0.0
        #: the last record timestamp parsed for this timeline, and its value
        self.stamp_cache: tuple[Any, datetime | None] = (None, None)

    def waiter(self, version: int) -> asyncio.Future[None] | None:
        if version != self.version:
            return None
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        return future

    def notify(self) -> None:
        self.version += 1
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():  # a reader cancelled while waiting
                future.set_result(None)


class RichProgressMixin(LoggingConfigurable):
    """Mix into any JupyterHub Spawner (before it) for spawn timelines and record progress.

    Example::

        from jupyterhub.spawner import LocalProcessSpawner
        from richprogress import RichProgressMixin

        class MySpawner(RichProgressMixin, LocalProcessSpawner):
            pass

        c.JupyterHub.spawner_class = MySpawner

    Wording comes from ``richprogress.formatter.EventFormatter`` (configure it as
    ``c.EventFormatter``); its ``format_hook`` is called with this spawner.
    """

    patience_after = Float(
        30.0,
        config=True,
        help="""
        Seconds after the spawn request before the first "still waiting" message.

        Later messages come at growing intervals (see ``patience_growth``), each one saying
        what the spawn waits for at that moment. 0 disables patience messages.
        """,
    )

    patience_growth = Float(
        2.0,
        config=True,
        help="""
        Factor between the times of successive "still waiting" messages.

        With ``patience_after = 30`` and the default 2, messages come at +0:30, +1:00,
        +2:00, +4:00, ... from the spawn request. Must be greater than 1.
        """,
    )

    patience_message = Unicode(
        "Still waiting for {waiting_for} ({elapsed})",
        config=True,
        help="""
        Text of the "still waiting" record (plain text).

        ``{waiting_for}`` is taken from ``patience_waiting_for`` for the step the spawn is
        in, ``{elapsed}`` is the time since the spawn request (``+1:30``), ``{seconds}`` the
        same as a whole number of seconds.
        """,
    )

    patience_waiting_for = Dict(
        config=True,
        help="""
        What a spawn waits for, by the step it has reached (a name in
        ``richprogress.records.PHASE_NAMES``); used in ``patience_message``.

        A key ``"<step>:<severity>"`` (e.g. ``"scaling:warning"``) is used instead when the
        latest record of that step has that severity: a warning there usually means the
        spawn is stuck, and waits for something else. Steps not listed use the entry for
        ``requested``.

        Example::

            c.RichProgressMixin.patience_waiting_for = {
                "requested": "a free GPU",
                "image": "the 8 GB course image to download",
            }
        """,
    )

    spawn_timeline_max_records = Integer(
        DEFAULT_MAX_RECORDS,
        config=True,
        help="""
        Most records kept per spawn timeline; past it the oldest are dropped.

        Bounds the memory a failed spawn keeps until the next spawn of that server.
        """,
    )

    #: The current or last spawn's timeline (None before the first spawn of this object).
    #: Read by pages and handlers through ``user.spawners[server_name]``.
    spawn_timeline: SpawnTimeline | None = None

    def _default_waiting_for(self) -> dict[str, str]:
        """Default ``patience_waiting_for``; subclasses that know their steps say more."""
        return {"requested": "your server to start"}

    # -- formatter --------------------------------------------------------------------------

    _rp_formatter: Any = None
    #: the formatter of the hub's configuration (one slot: a hub has one config object),
    #: so its rules are compiled once, not per spawner
    _rp_shared_formatter: tuple[Any, Any] | None = None

    @property
    def event_formatter(self) -> Any:
        """The ``EventFormatter`` this spawner uses (configured from ``c.EventFormatter``).

        Shared by every spawner with the same config object (a hub's spawners), so the
        rules are compiled once and a failing hook is logged once, not once per user.
        """
        if self._rp_formatter is None:
            from .formatter import EventFormatter

            shared = RichProgressMixin._rp_shared_formatter
            if shared is None or shared[0] is not self.config:
                shared = (self.config, EventFormatter(config=self.config, log=self.log))
                RichProgressMixin._rp_shared_formatter = shared
            self._rp_formatter = shared[1]
        return self._rp_formatter

    # -- timeline lifecycle -------------------------------------------------------------------

    _rp_claimed: SpawnTimeline | None = None
    _rp_timeline_future: Any = None
    _rp_current: tuple[SpawnTimeline, _Broadcast] | None = None
    _rp_in_start = False

    def _rp_spawn_requested_at(self) -> datetime:
        """When this spawn was requested: JupyterHub's ``orm_spawner.started`` when it is
        this spawn's (set before pre-spawn hooks run), else now."""
        now = utcnow()
        started = getattr(getattr(self, "orm_spawner", None), "started", None)
        if isinstance(started, datetime):
            if started.tzinfo is None:
                started = started.replace(tzinfo=timezone.utc)
            limit = float(getattr(self, "start_timeout", 60) or 60) + 60
            if timedelta(0) <= now - started <= timedelta(seconds=limit):
                return started
        return now

    def _rp_new_timeline(self) -> SpawnTimeline:
        timeline = SpawnTimeline(
            server_name=getattr(self, "name", "") or "",
            started_at=self._rp_spawn_requested_at(),
            max_records=self.spawn_timeline_max_records,
        )
        self.spawn_timeline = timeline
        self._rp_timeline_future = getattr(self, "_spawn_future", None)
        self._rp_current = (timeline, _Broadcast())
        return timeline

    def _rp_broadcast(self, timeline: SpawnTimeline) -> _Broadcast:
        """The wake-up channel of ``timeline`` (a finished, replaced timeline gets a new,
        silent one: its readers replay it and end)."""
        current = self._rp_current
        if current is not None and current[0] is timeline:
            return current[1]
        return _Broadcast()

    def _rp_claim_timeline(self) -> SpawnTimeline:
        """The timeline of the spawn ``start()`` is beginning.

        Adopts a timeline that ``progress()`` created for this same request before
        ``start()`` was called (the page can connect while pre-spawn hooks run); otherwise
        begins a new one, which replaces the last spawn's.
        """
        timeline = self.spawn_timeline
        if not (
            timeline is not None
            and timeline.outcome == "pending"
            and timeline is not self._rp_claimed
            and self._rp_timeline_future is getattr(self, "_spawn_future", None)
        ):
            timeline = self._rp_new_timeline()
        self._rp_claimed = timeline
        return timeline

    def _rp_timeline_for_progress(self) -> SpawnTimeline:
        """The timeline a ``progress()`` call reads."""
        timeline = self.spawn_timeline
        if timeline is None:
            return self._rp_new_timeline()
        spawn_future = getattr(self, "_spawn_future", None)
        belongs_to_current = timeline is self._rp_claimed and timeline.outcome == "pending"
        if spawn_future is not None and self._rp_timeline_future is spawn_future:
            belongs_to_current = True
        if not belongs_to_current and getattr(self, "_spawn_pending", False):
            # the hub has a spawn pending whose start() has not run yet
            return self._rp_new_timeline()
        return timeline

    def _rp_failure_message(self, exc: BaseException | None, timeline: SpawnTimeline) -> str:
        if exc is not None and str(exc):
            return str(exc)
        timeout = float(getattr(self, "start_timeout", 0) or 0)
        elapsed = timeline.elapsed()
        if isinstance(exc, (TimeoutError, asyncio.CancelledError)) and timeout and elapsed >= 0.9 * timeout:
            # the hub's own start timeout: its TimeoutError() has no message
            return f"The server did not start within {timeout:g} seconds."
        if isinstance(exc, asyncio.CancelledError):
            return "The spawn was cancelled."
        return f"The spawn failed ({type(exc).__name__})." if exc is not None else ""

    async def start(self) -> Any:
        """Start the server as the parent class does, recording the spawn's timeline."""
        from jupyterhub.utils import maybe_future

        timeline = self._rp_claim_timeline()
        broadcast = self._rp_broadcast(timeline)
        sub = Subscription()
        pump = asyncio.ensure_future(self._rp_pump(timeline, broadcast, sub))
        self._rp_in_start = True
        try:
            result = await maybe_future(super().start())  # type: ignore[misc]
        except BaseException as exc:
            self._rp_in_start = False
            await self._rp_stop_pump(pump, sub)
            timeline.finish("failed", self._rp_failure_message(exc, timeline))
            broadcast.notify()
            spawn_ended(self, timeline)  # the history (and later metrics) hear of it
            raise
        self._rp_in_start = False
        await self._rp_stop_pump(pump, sub)
        timeline.finish("ready")
        broadcast.notify()
        spawn_ended(self, timeline)
        return result

    async def stop(self, now: bool = False) -> Any:
        """Stop as the parent does; a stop while the spawn is pending (and ``start()`` is
        not running, e.g. it never got called) ends the timeline as failed."""
        timeline = self.spawn_timeline
        if timeline is not None and timeline.outcome == "pending" and not self._rp_in_start:
            timeline.finish("failed", "The server was stopped before it was ready.")
            self._rp_broadcast(timeline).notify()
            spawn_ended(self, timeline)
        return await super().stop(now=now)  # type: ignore[misc]

    # -- the pump (the timeline's only writer) ---------------------------------------------------

    async def _rp_stop_pump(self, pump: asyncio.Future[None], sub: Subscription) -> None:
        """Let the pump take in what already arrived, then end it.

        Shielded so that a second cancellation (the hub shutting down) cannot leave the
        pump running, and bounded so a stuck hook cannot hold up the hub.
        """
        sub.close()
        try:
            await asyncio.wait_for(asyncio.shield(pump), timeout=5)
        except BaseException:
            pump.cancel()

    async def _rp_pump(self, timeline: SpawnTimeline, broadcast: _Broadcast, sub: Subscription) -> None:
        closer: Closer | None = None
        state: dict[str, Any] = {"patience_n": 0, "patience_count": {}}
        try:
            # compile the rules now (once per hub), not when the spawn's first event arrives
            self.event_formatter.ruleset  # noqa: B018
            closer = await self._rp_open_feed(timeline, broadcast, sub)
            sub.handler = self._rp_inline_handler(timeline, broadcast)
            while True:
                changed = False
                for source, obj in sub.drain():
                    try:
                        changed |= await self._rp_handle(timeline, broadcast, source, obj)
                    except Exception:
                        self.log.exception("richprogress: could not handle a progress item; skipped")
                changed |= await self._rp_tick(timeline, broadcast, final=sub.closed)
                if changed:
                    broadcast.notify()
                if sub.closed and not len(sub):
                    break
                timeout = self._rp_next_wakeup(timeline, state)
                if not await sub.wait(timeout):
                    if self._rp_patience(timeline, broadcast, state):
                        broadcast.notify()
        except asyncio.CancelledError:
            raise
        except Exception:
            self.log.exception("richprogress: the progress pump failed; the spawn goes on without it")
        finally:
            if closer is not None:
                try:
                    await closer()
                except Exception:
                    self.log.exception("richprogress: closing a progress source failed")

    def _rp_inline_handler(self, timeline: SpawnTimeline, broadcast: _Broadcast) -> Callable[[str, Mapping[str, Any]], bool]:
        """The ``Subscription.handler`` of a pump: ``_rp_handle_now`` plus the wake-up of
        readers, never raising into the code that pushed (e.g. a reflector's watch loop)."""

        def handle(source: str, obj: Mapping[str, Any]) -> bool:
            try:
                changed = self._rp_handle_now(timeline, broadcast, source, obj)
            except Exception:
                self.log.exception("richprogress: could not handle a progress item; skipped")
                return True
            if changed is None:
                return False
            if changed:
                broadcast.notify()
            return True

        return handle

    def _rp_handle_now(self, timeline: SpawnTimeline, broadcast: _Broadcast, source: str, obj: Mapping[str, Any]) -> bool | None:
        """Handle one pushed item right away, as ``_rp_handle`` would, when that needs no
        waiting; True/False: handled (timeline changed or not); None: leave it to the pump."""
        return None

    async def _rp_open_feed(self, timeline: SpawnTimeline, broadcast: _Broadcast, sub: Subscription) -> Closer | None:
        """Start what pushes items into ``sub``; return its clean-up.

        The default reads the parent class's ``progress()`` (each item becomes a record).
        """
        counter = 0

        async def pull() -> None:
            nonlocal counter
            parent_progress = super(RichProgressMixin, self).progress  # type: ignore[misc]
            async with aclosing(parent_progress()) as items:
                async for item in items:
                    if isinstance(item, Mapping):
                        counter += 1
                        sub.push("message", str(counter), item)

        task = asyncio.ensure_future(pull())

        def done(task: asyncio.Future[None]) -> None:
            if not task.cancelled() and task.exception() is not None:
                self.log.error("richprogress: the spawner's own progress() failed: %r", task.exception())

        task.add_done_callback(done)

        async def close() -> None:
            task.cancel()
            try:
                await task
            except BaseException:
                pass

        return close

    async def _rp_handle(self, timeline: SpawnTimeline, broadcast: _Broadcast, source: str, obj: Mapping[str, Any]) -> bool:
        """Turn one pushed item into timeline records; True when the timeline changed."""
        if source != "message":
            return False
        progress = obj.get("progress")
        if isinstance(progress, (int, float)) and not isinstance(progress, bool):
            broadcast.progress_floor = max(broadcast.progress_floor, min(int(progress), 99))
        message = obj.get("message")
        if not isinstance(message, str) or not message.strip():
            return progress is not None
        record = self.event_formatter.format_message(message, timestamp=isoformat_z(utcnow()))
        return self._rp_add_record(timeline, broadcast, record)

    def _rp_add_record(self, timeline: SpawnTimeline, broadcast: _Broadcast, record: EventRecord) -> bool:
        """Stamp ``since_spawn`` and add the record; True when the timeline changed.

        Kubernetes ``lastTimestamp`` has one-second resolution, so an event stamped
        ``12:00:01`` happened in ``[12:00:01, 12:00:02)``: we take the time it reached us,
        kept inside that window (a late arrival or a skewed cluster clock moves it at most
        to the window's edge). Sub-second timestamps (``eventTime``) are taken as they are.
        The clock never runs back from one record to the next, so the timeline reads in
        order.
        """
        if record.get("since_spawn") is None:
            received = (utcnow() - timeline.started_at).total_seconds()
            value = record.get("timestamp")
            # a spawn's events mostly share a few one-second stamps: parse each once
            if value is not None and value == broadcast.stamp_cache[0]:
                stamp = broadcast.stamp_cache[1]
            else:
                stamp = parse_timestamp(value)
                broadcast.stamp_cache = (value, stamp)
            if stamp is None:
                since = received
            else:
                at = (stamp - timeline.started_at).total_seconds()
                since = min(max(received, at), at + 1.0) if stamp.microsecond == 0 else at
            record["since_spawn"] = round(max(since, broadcast.last_since, 0.0), 3)
        else:
            record["since_spawn"] = max(float(record["since_spawn"] or 0.0), broadcast.last_since)
        stored, changed = timeline.add(record)
        if changed:
            broadcast.last_since = max(broadcast.last_since, float(stored.get("since_spawn") or 0.0))
        return changed

    async def _rp_tick(self, timeline: SpawnTimeline, broadcast: _Broadcast, final: bool) -> bool:
        """Hook run after each batch (``final`` when the spawn ended); True if changed."""
        return False

    # -- patience messages ------------------------------------------------------------------------

    def _rp_patience_due(self, n: int) -> float | None:
        """Seconds after the spawn request of patience message number ``n`` (0-based)."""
        if self.patience_after <= 0:
            return None
        return self.patience_after * max(self.patience_growth, 1.01) ** n

    def _rp_next_wakeup(self, timeline: SpawnTimeline, state: dict[str, Any]) -> float | None:
        due = self._rp_patience_due(state["patience_n"])
        if due is None:
            return None
        return max(0.0, due - timeline.elapsed())

    def _rp_current_phase(self, timeline: SpawnTimeline) -> str:
        progress = timeline.progress
        for name in reversed(PHASE_NAMES):
            if PHASE_PROGRESS[name] <= progress:
                return name
        return PHASE_NAMES[0]

    def _rp_phase_severity(self, timeline: SpawnTimeline, phase: str) -> str:
        """Severity of the latest record of ``phase`` (a warning there means we are stuck)."""
        for record in reversed(timeline.records()):
            if record.get("phase") == phase and not str(record.get("id", "")).startswith("patience-"):
                return str(record.get("severity") or "info")
        return "info"

    def _rp_patience(self, timeline: SpawnTimeline, broadcast: _Broadcast, state: dict[str, Any]) -> bool:
        due = self._rp_patience_due(state["patience_n"])
        elapsed = timeline.elapsed()
        if due is None or elapsed < due or timeline.outcome != "pending":
            return False
        while True:  # skip messages that are all overdue (e.g. after a long hook)
            state["patience_n"] += 1
            nxt = self._rp_patience_due(state["patience_n"])
            if nxt is None or nxt > elapsed:
                break
        phase = self._rp_current_phase(timeline)
        waiting_for = {**self._default_waiting_for(), **self.patience_waiting_for}
        severity = self._rp_phase_severity(timeline, phase)
        what = (
            waiting_for.get(f"{phase}:{severity}")
            or waiting_for.get(phase)
            or waiting_for.get("requested")
            or "your server to start"
        )
        try:
            text = self.patience_message.format(
                waiting_for=what, elapsed=format_elapsed(elapsed), seconds=int(elapsed)
            )
        except (KeyError, IndexError, ValueError):
            text = f"Still waiting for {what} ({format_elapsed(elapsed)})"
        counts: dict[str, int] = state["patience_count"]
        counts[phase] = counts.get(phase, 0) + 1
        record = self.event_formatter.format_message(
            text, id=f"patience-{phase}", timestamp=isoformat_z(utcnow())
        )
        record["phase"] = phase
        record["count"] = counts[phase]
        record["since_spawn"] = round(elapsed, 3)
        return self._rp_add_record(timeline, broadcast, record)

    # -- readers ------------------------------------------------------------------------------

    def _rp_event(self, record: EventRecord, progress: int) -> dict[str, Any]:
        return {"progress": progress, "message": record.get("message") or "", "record": dict(record)}

    async def progress(self) -> AsyncIterator[dict[str, Any]]:
        """Contract-3 progress events: the timeline so far, then its changes as they happen."""
        timeline = self._rp_timeline_for_progress()
        broadcast = self._rp_broadcast(timeline)
        sent: dict[str, EventRecord] = {}
        progress = 0
        while True:
            version = broadcast.version
            for record in timeline.records():
                if sent.get(record["id"]) is record:
                    continue
                sent[record["id"]] = record
                phase = record.get("phase")
                # the bar follows the steps reached and never goes back; 100 is the hub's
                # "ready" event, never ours
                progress = max(progress, PHASE_PROGRESS.get(phase or "", 0), broadcast.progress_floor)
                yield self._rp_event(record, min(progress, 99))
            if timeline.outcome != "pending":
                return
            waiter = broadcast.waiter(version)
            if waiter is not None:
                await waiter
