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
- The live diagnosis (``live_diagnosis.LiveDiagnoser``) is kept current as records arrive
  and rides on the progress events as ``diagnosis`` whenever it changes. With ``fail_fast``
  a fatal cause that has held ends the spawn at once (DESIGN.md contract 7).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from datetime import datetime, timedelta, timezone
from typing import Any

from traitlets import Bool, Dict, Float, Integer, Unicode
from traitlets.config import LoggingConfigurable

from richprogress.model.records import PHASE_NAMES, PHASE_PROGRESS, EventRecord
from richprogress.model.timeline import DEFAULT_MAX_RECORDS, STOPPED_BEFORE_READY, SpawnTimeline
from richprogress.model.times import format_clock, isoformat_z, parse_timestamp, utcnow
from richprogress.story.fail_fast import FailFastPolicy
from richprogress.story.resolved import PROBLEM_SEVERITIES, newly_resolved
from richprogress.stream.broadcast import TimelineBroadcast
from richprogress.stream.inbox import Subscription
from richprogress.stream.live_diagnosis import (
    LiveDiagnoser,
    StoppedEarly,
    stopped_early_facts,
    stopped_early_record,
)
from richprogress.stream.patience import PatiencePlan, with_note
from richprogress.stream.spawn_end import spawn_ended

#: A pump source's clean-up, returned by ``_rp_open_feed``.
Closer = Callable[[], Awaitable[None]]


class RichProgressMixin(LoggingConfigurable):
    """Mix into any JupyterHub Spawner (before it) for spawn timelines and record progress.

    Example::

        from jupyterhub.spawner import LocalProcessSpawner
        from richprogress import RichProgressMixin

        class MySpawner(RichProgressMixin, LocalProcessSpawner):
            pass

        c.JupyterHub.spawner_class = MySpawner

    Wording comes from ``richprogress.wording.formatter.EventFormatter`` (configure it as
    ``c.EventFormatter``); its ``format_hook`` is called with this spawner.
    """

    patience_after = Float(
        30.0,
        config=True,
        help="""
        Seconds after the spawn request before the first "still waiting" message.

        Later messages come at growing intervals (see ``patience_growth``), each one saying
        what the spawn waits for at that moment. 0 disables patience messages. When typical
        times are known for the step (``c.TypicalTimes``), there is no message while it is on
        time, and the first comes when the page says "longer than usual", and says so
        (``richprogress.stream.patience``).
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
        "Still waiting for {waiting_for}",
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
        ``richprogress.model.records.PHASE_NAMES``); used in ``patience_message``.

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

    fail_fast = Bool(
        True,
        config=True,
        help="""
        End a spawn at once when its cause is one that waiting cannot fix.

        A cause is fatal when the rule that worded it says ``fatal`` (an image that does not
        exist, an invalid image name, a request larger than any machine, a missing secret,
        a container that keeps exiting; see the README's list). Once such a cause has held
        (``fail_fast_repeats``, ``fail_fast_hold``), the spawner stops its pod with its own
        ``stop()`` and the spawn fails with the diagnosis as its message, instead of after
        ``start_timeout``. False: only show the cause on the page, and wait as before.
        """,
    )

    fail_fast_repeats = Integer(
        2,
        config=True,
        help="""
        How many times a fatal cause must have happened before fail-fast ends the spawn.

        The default 2 waits for the kubelet's second failed pull of a missing image, so a
        one-off (a registry mirror that does not have a new tag yet) never stops a spawn.
        0: do not count (then only ``fail_fast_hold`` decides).
        """,
    )

    fail_fast_hold = Float(
        60.0,
        config=True,
        help="""
        Seconds a fatal cause must have been the cause before fail-fast ends the spawn,
        even if it did not repeat (some causes are reported once). 0: do not time it.
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
            from richprogress.wording.formatter import EventFormatter

            shared = RichProgressMixin._rp_shared_formatter
            if shared is None or shared[0] is not self.config:
                shared = (self.config, EventFormatter(config=self.config, log=self.log))
                RichProgressMixin._rp_shared_formatter = shared
            self._rp_formatter = shared[1]
        return self._rp_formatter

    # -- timeline lifecycle -------------------------------------------------------------------

    _rp_claimed: SpawnTimeline | None = None
    _rp_timeline_future: Any = None
    _rp_current: tuple[SpawnTimeline, TimelineBroadcast] | None = None
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
        broadcast = TimelineBroadcast()
        broadcast.live = LiveDiagnoser(
            FailFastPolicy(self.fail_fast, self.fail_fast_repeats, self.fail_fast_hold)
        )
        self._rp_current = (timeline, broadcast)
        return timeline

    def _rp_broadcast(self, timeline: SpawnTimeline) -> TimelineBroadcast:
        """The wake-up channel of ``timeline`` (a finished, replaced timeline gets a new,
        silent one: its readers replay it and end)."""
        current = self._rp_current
        if current is not None and current[0] is timeline:
            return current[1]
        return TimelineBroadcast()

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
        self._rp_fail_fast = asyncio.get_running_loop().create_future()
        pump = asyncio.ensure_future(self._rp_pump(timeline, broadcast, sub))
        self._rp_in_start = True
        try:
            starting = asyncio.ensure_future(maybe_future(super().start()))  # type: ignore[misc]
            result = await self._rp_start_or_stop_early(starting, timeline, broadcast)
        except BaseException as exc:
            self._rp_in_start = False
            await self._rp_stop_pump(pump, sub)
            timeline.finish("failed", self._rp_failure_message(exc, timeline))
            broadcast.notify()
            spawn_ended(self, timeline)  # the history and the metrics hear of it
            raise
        self._rp_in_start = False
        await self._rp_stop_pump(pump, sub)
        timeline.finish("ready")
        broadcast.notify()
        spawn_ended(self, timeline)
        return result

    _rp_fail_fast: asyncio.Future[None] | None = None

    async def _rp_start_or_stop_early(
        self, starting: asyncio.Future[Any], timeline: SpawnTimeline, broadcast: TimelineBroadcast
    ) -> Any:
        """The parent's ``start()``, unless fail-fast ends the spawn first: then stop the
        pod with our own ``stop()`` (as the hub does after a timeout) and raise
        ``StoppedEarly`` with the diagnosis summary."""
        signal = self._rp_fail_fast
        assert signal is not None
        try:
            await asyncio.wait((starting, signal), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            starting.cancel()  # the hub's timeout or shutdown: as if we awaited it directly
            raise
        if starting.done():
            return starting.result()
        starting.cancel()
        try:
            await starting
        except BaseException:
            pass
        live = broadcast.live
        diagnosis = live.mark_stopped() if live is not None else None
        timeline.stopped_early = stopped_early_facts(diagnosis, timeline.elapsed())
        timeout = float(getattr(self, "start_timeout", 0) or 0) or None
        self._rp_add_record(timeline, broadcast, stopped_early_record(timeline, timeout))
        broadcast.notify()
        summary = diagnosis["summary"] if diagnosis else "The server cannot start."
        self.log.info("richprogress: stopping %s early: %s", getattr(self, "_log_name", "?"), summary)
        try:
            await self.stop(now=True)
        except Exception:
            self.log.exception("richprogress: stopping the pod after a fatal cause failed")
        raise StoppedEarly(summary)

    def _rp_live_changed(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, changed: bool) -> bool:
        """After the live diagnosis was updated: ask for fail-fast when it is due."""
        live = broadcast.live
        signal = self._rp_fail_fast
        if live is not None and live.stop_due and signal is not None and not signal.done():
            if timeline.outcome == "pending" and self._rp_in_start:
                signal.set_result(None)
        return changed

    async def stop(self, *args: Any, **kwargs: Any) -> Any:
        """Stop as the parent does; a stop while the spawn is pending (and ``start()`` is
        not running, e.g. it never got called) ends the timeline as failed.

        The caller's arguments go to the parent unchanged: spawners' ``stop()`` signatures
        differ (``now=`` is JupyterHub's, not every spawner's)."""
        timeline = self.spawn_timeline
        if timeline is not None and timeline.outcome == "pending" and not self._rp_in_start:
            timeline.finish("failed", STOPPED_BEFORE_READY)
            self._rp_broadcast(timeline).notify()
            spawn_ended(self, timeline)
        return await super().stop(*args, **kwargs)  # type: ignore[misc]

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

    async def _rp_pump(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, sub: Subscription) -> None:
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
                    live = broadcast.live
                    recheck = live.recheck_in(timeline) if live is not None else None
                    held = False
                    if live is not None and recheck is not None and recheck <= 0.01:
                        # a fatal cause's hold time passed: time alone may end the spawn
                        held = self._rp_live_changed(timeline, broadcast, live.refresh(timeline))
                    if self._rp_patience(timeline, broadcast, state) or held:
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

    def _rp_inline_handler(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast) -> Callable[[str, Mapping[str, Any]], bool]:
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

    def _rp_handle_now(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, source: str, obj: Mapping[str, Any]) -> bool | None:
        """Handle one pushed item right away, as ``_rp_handle`` would, when that needs no
        waiting; True/False: handled (timeline changed or not); None: leave it to the pump."""
        return None

    async def _rp_open_feed(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, sub: Subscription) -> Closer | None:
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

    async def _rp_handle(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, source: str, obj: Mapping[str, Any]) -> bool:
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
        if broadcast.progress_floor:
            broadcast.floor_at[record["id"]] = broadcast.progress_floor
        return self._rp_add_record(timeline, broadcast, record)

    def _rp_add_record(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, record: EventRecord) -> bool:
        """Stamp ``since_spawn`` and add the record; True when the timeline changed.

        The record is handed over: the timeline keeps it as it is (no copy), so callers
        pass a record of their own (the formatter returns a new one each time).

        Kubernetes ``lastTimestamp`` has one-second resolution, so an event stamped
        ``12:00:01`` happened in ``[12:00:01, 12:00:02)``: we take the time it reached us,
        kept inside that window (a late arrival or a skewed cluster clock moves it at most
        to the window's edge). Sub-second timestamps (``eventTime``) are taken as they are.
        The clock never runs back from one record to the next, so the timeline reads in
        order. Plain float seconds, not datetimes: this runs once per event shown.
        """
        since = record.get("since_spawn")
        last = broadcast.last_since
        if since is None:
            started = timeline.started_ts
            value = record.get("timestamp")
            # a spawn's events mostly share a few one-second stamps: parse each once
            cached = broadcast.stamp_cache
            if value is not None and value == cached[0]:
                _value, stamp, whole = cached
            else:
                parsed = parse_timestamp(value)
                stamp = parsed.timestamp() if parsed is not None else None
                whole = parsed is not None and parsed.microsecond == 0
                broadcast.stamp_cache = (value, stamp, whole)
            if stamp is None:
                since = time.time() - started
            else:
                since = stamp - started
                if whole:
                    # inside the stamp's second, as close to when it reached us as that allows
                    since = min(max(time.time() - started, since), since + 1.0)
            if since < last:
                since = last
            # milliseconds are enough for a clock shown as +M:SS (and cheaper than round())
            since = int(since * 1000.0 + 0.5) / 1000.0 if since > 0.0 else 0.0
        else:
            since = float(since or 0.0)
            if since < last:
                since = last
        record["since_spawn"] = since
        stored, changed = timeline.add_owned(record)
        if changed:
            since = stored.get("since_spawn") or 0.0
            if since > last:
                broadcast.last_since = since
            live = broadcast.live
            if live is not None and live.note(timeline, stored):
                self._rp_live_changed(timeline, broadcast, True)
            if broadcast.open_problems or stored.get("severity") in PROBLEM_SEVERITIES:
                # problems this record got past are marked "resolved": in the timeline (the
                # failure page, the JSON, a replay) and, for live pages, on this record's event
                newly, broadcast.open_problems = newly_resolved(timeline.records())
                for problem in newly:
                    problem["overcome"] = True
                if newly:
                    broadcast.resolved_by[str(stored["id"])] = [str(problem["id"]) for problem in newly]
        return changed

    async def _rp_tick(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, final: bool) -> bool:
        """Hook run after each batch (``final`` when the spawn ended); True if changed."""
        return False

    # -- patience messages ------------------------------------------------------------------------

    def _rp_next_wakeup(self, timeline: SpawnTimeline, state: dict[str, Any]) -> float | None:
        live = self._rp_broadcast(timeline).live
        recheck = live.recheck_in(timeline) if live is not None else None
        due = self._rp_patience_plan(timeline, state).next_due(timeline.elapsed())
        if due is None:
            return recheck
        patience = max(0.0, due - timeline.elapsed())
        return patience if recheck is None else min(patience, recheck)

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

    def _rp_patience_typical(self) -> Any:
        """The spawn's typical times (``typical.Typical`` or None): the page's, so the
        patience rows and its "longer than usual" tell one story."""
        from richprogress.typical.cache import typical_for_spawner

        return typical_for_spawner(self)

    def _rp_patience_plan(self, timeline: SpawnTimeline, state: dict[str, Any]) -> PatiencePlan:
        """The spawn's patience schedule (``richprogress.stream.patience``), up to date."""
        plan = state.get("plan")
        if plan is None:
            typical = self._rp_patience_typical() if self.patience_after > 0 else None
            plan = state["plan"] = PatiencePlan(self.patience_after, self.patience_growth, typical)
        plan.follow(timeline)
        return plan

    def _rp_patience(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, state: dict[str, Any]) -> bool:
        if timeline.outcome != "pending":
            return False
        elapsed = timeline.elapsed()
        # the page may already say what is wrong and that waiting will not fix it
        hopeless = broadcast.live is not None and broadcast.live.hopeless
        due = self._rp_patience_plan(timeline, state).take(elapsed, hopeless=hopeless)
        if due is None:
            return False
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
                waiting_for=what, elapsed=format_clock(elapsed), seconds=int(elapsed)
            )
        except (KeyError, IndexError, ValueError):
            text = f"Still waiting for {what} ({format_clock(elapsed)})"
        text = with_note(text, due)
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
        """Contract-3 progress events: the timeline so far, then its changes as they happen.

        Reads the timeline's change log from its own position, so each wake-up costs what
        changed since the last one (several changes handled in one batch come together).
        """
        timeline = self._rp_timeline_for_progress()
        broadcast = self._rp_broadcast(timeline)
        progress = 0
        shown: Any = None  # the live diagnosis this reader sent last (None: none shown)
        floor_at = broadcast.floor_at
        batch, seen = timeline.snapshot()
        while True:
            for record in batch:
                phase = record.get("phase")
                # the bar follows the steps reached and never goes back; 100 is the hub's
                # "ready" event, never ours
                progress = max(progress, PHASE_PROGRESS.get(phase or "", 0), floor_at.get(record["id"], 0))
                event = self._rp_event(record, min(progress, 99))
                if broadcast.resolved_by:
                    resolved = broadcast.resolved_by.get(record["id"])
                    if resolved is not None:
                        event["resolved"] = list(resolved)  # the rows this record got past
                live = broadcast.live.current if broadcast.live is not None else None
                if live is not shown:
                    # contract 3: "diagnosis" rides on the event where it changed (null: cleared)
                    event["diagnosis"] = dict(live) if live is not None else None
                    shown = live
                yield event
            if timeline.change_seq == seen:
                if timeline.outcome != "pending":
                    return
                waiter = broadcast.waiter(broadcast.version)
                if waiter is not None:
                    await waiter
            batch, seen = timeline.changes(seen)
