"""RichProgressMixin: spawn timelines and record-carrying progress events for any spawner.

A spawn becomes a ``SpawnTimeline`` (kept on the spawner as ``spawner.spawn_timeline``
until the next spawn starts), served through ``progress()`` as events
``{"progress", "message", "record"}`` (``progress_events``), which the pages read.

- ``start()`` is wrapped: it begins a new timeline (timed from the spawn request), starts
  a *pump* task that fills the timeline while the spawn runs, and records the outcome
  (``ready``, or ``failed`` with the reason, also when the hub's own start timeout cancels
  ``start()``, whose ``TimeoutError`` carries no message).
- The pump is the only writer. For a plain spawner it turns each message of the parent
  class's ``progress()`` into a record (``parent_progress``); ``RichKubeSpawner`` replaces
  the source with indexed Kubernetes events. Each record gets its since-spawn reading
  (``since_spawn``) on the way in (``intake``). The pump also adds "Still waiting for ..."
  rows at growing intervals counted from the spawn request (``patience``,
  ``still_waiting``).
- Every ``progress()`` call is a reader: it first replays the records the timeline already
  holds (same ids, so a reconnecting page can drop what it has), then waits for changes and
  yields new or updated records (an update keeps its ``id`` and carries the new ``count``).
  Several pages on the same spawn share the pump's work.
- The live diagnosis (``live_diagnosis.LiveDiagnoser``) is kept current as records arrive
  and rides on the progress events as ``diagnosis`` whenever it changes. With ``fail_fast``
  a fatal cause that has held ends the spawn at once: the pod is stopped and the spawn
  fails with the diagnosis as its message.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from traitlets import Bool, Dict, Float, Integer, Unicode, validate
from traitlets.config import LoggingConfigurable

from richprogress.model.display import display_line
from richprogress.model.records import EventRecord
from richprogress.model.settings import check_number, refusal
from richprogress.model.timeline import DEFAULT_MAX_RECORDS, STOPPED_BEFORE_READY, SpawnTimeline
from richprogress.model.times import utcnow
from richprogress.story.container_log import DEFAULT_SHOW, SHOW_SETTINGS
from richprogress.story.fail_fast import FailFastPolicy
from richprogress.stream.broadcast import TimelineBroadcast
from richprogress.stream.inbox import Subscription
from richprogress.stream.intake import add_record
from richprogress.stream.live_diagnosis import (
    LiveDiagnoser,
    StoppedEarly,
    quiet_tornado_after_timeout,
    stop_early,
)
from richprogress.stream.notes import run_guarded
from richprogress.stream.parent_progress import MESSAGE, message_record, open_parent_feed
from richprogress.stream.patience import PatiencePlan
from richprogress.stream.patience_check import message_problem, waiting_for_problem
from richprogress.stream.progress_events import progress_events
from richprogress.stream.pump import Closer, run_pump, stop_pump
from richprogress.stream.since_spawn import spawn_requested_at
from richprogress.stream.spawn_end import failure_message, no_answer_message, spawn_ended
from richprogress.stream.spawn_facts import keep_facts
from richprogress.stream.still_waiting import DEFAULT_WAITING_FOR, still_waiting_record

__all__ = ["Closer", "RichProgressMixin"]

#: seconds the failed server's last words (its container's log) may take to read
DEFAULT_LAST_WORDS_TIMEOUT = 2.0


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

    show_container_log = Unicode(
        DEFAULT_SHOW,
        config=True,
        help="""
        Who sees the last lines of the failing container's log on the failure page.

        When a spawn fails after a container ran (it exited, was killed, crash-loops or
        never answered), ``RichKubeSpawner`` reads the last lines of that container's log
        (at most 40 lines, 8 KiB, within ``container_log_timeout``), redacts what looks like
        a secret (tokens, passwords, keys: ``richprogress.wording.redaction``) and keeps
        them with the spawn. ``"owner"`` (the default): the server's owner and admins
        see them on the failure page, in "Copy details" and the timeline endpoints;
        ``"admins"``: admins only; ``"nobody"``: the log is not read at all.

        Redaction is pattern-based and can miss a secret, so no one else sees the lines,
        whatever scopes they hold.
        """,
    )
    show_container_log.tag(allowed="'owner' (owner and admins), 'admins' or 'nobody'")

    container_log_timeout = Float(
        DEFAULT_LAST_WORDS_TIMEOUT,
        config=True,
        help="""
        Seconds the failing container's log may take to read before the failure goes on
        without it (``show_container_log``). 0: never read it.
        """,
    )
    container_log_timeout.tag(allowed="seconds, 0 (do not read) to 30")

    @validate("show_container_log")
    def _check_show_log(self, proposal: Any) -> Any:
        if proposal["value"] not in SHOW_SETTINGS:
            raise refusal(self, "show_container_log", proposal["value"])
        return proposal["value"]

    @validate("container_log_timeout")
    def _check_log_timeout(self, proposal: Any) -> Any:
        return check_number(self, proposal, least=0, most=30)

    # what each setting accepts (refusals and docs/configuration.md say the same)
    patience_after.tag(allowed="seconds, 0 (no still-waiting rows) or more")
    patience_growth.tag(allowed="a number greater than 1, at most 100")
    patience_message.tag(allowed="a str.format template naming only {waiting_for}, {elapsed}, {seconds} (plain names: no `.attribute` or `[index]`)")
    patience_waiting_for.tag(allowed="a dict: step (or 'step:severity') -> non-empty text")
    fail_fast.tag(allowed="True or False")
    fail_fast_repeats.tag(allowed="a whole number, 0 (do not count) or more")
    fail_fast_hold.tag(allowed="seconds, 0 (do not time) or more")
    spawn_timeline_max_records.tag(allowed="a whole number, at least 1")

    @validate("patience_after", "fail_fast_hold")
    def _check_seconds(self, proposal: Any) -> Any:
        return check_number(self, proposal, least=0)

    @validate("patience_growth")
    def _check_growth(self, proposal: Any) -> Any:
        return check_number(self, proposal, above=1, most=100)

    @validate("fail_fast_repeats")
    def _check_repeats(self, proposal: Any) -> Any:
        return check_number(self, proposal, least=0)

    @validate("spawn_timeline_max_records")
    def _check_max_records(self, proposal: Any) -> Any:
        return check_number(self, proposal, least=1)

    @validate("patience_message")
    def _check_message(self, proposal: Any) -> Any:
        problem = message_problem(proposal["value"])
        if problem:
            raise refusal(self, "patience_message", proposal["value"], problem)
        return proposal["value"]

    @validate("patience_waiting_for")
    def _check_waiting_for(self, proposal: Any) -> Any:
        problem = waiting_for_problem(proposal["value"])
        if problem:
            raise refusal(self, "patience_waiting_for", proposal["value"], problem)
        return proposal["value"]

    #: The current or last spawn's timeline (None before the first spawn of this object).
    #: Read by pages and handlers through ``user.spawners[server_name]``.
    spawn_timeline: SpawnTimeline | None = None

    def _default_waiting_for(self) -> dict[str, str]:
        """Default ``patience_waiting_for``; subclasses that know their steps say more."""
        return {"requested": DEFAULT_WAITING_FOR}

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
    #: the loop's time when start() returned (the hub's HTTP check begins then)
    _rp_started_at = 0.0
    _rp_fail_fast: asyncio.Future[None] | None = None
    #: a timeline that start() ended "ready" while JupyterHub's HTTP check of the server is
    #: still to come: its end is told when that check is over (it may yet fail the spawn)
    _rp_end_untold: SpawnTimeline | None = None

    # JupyterHub sets ``_start_pending`` before start() and clears it once its HTTP check of
    # the new server is over (``User.spawn`` and ``_wait_up``, 5.x and 6.x): after clearing
    # ``_waiting_for_response`` when the server answered; while that is still set when the
    # check gave up (``User.stop`` clears it, then calls our stop(), which tells the failure).
    # Clearing it is the one sign that the check passed, so it is a property here.
    @property
    def _start_pending(self) -> bool:
        return bool(self.__dict__.get("_rp_start_pending", False))

    @_start_pending.setter
    def _start_pending(self, pending: bool) -> None:
        self.__dict__["_rp_start_pending"] = pending
        if not pending and not getattr(self, "_waiting_for_response", False):
            self._rp_tell_end()

    def _rp_tell_end(self, only: SpawnTimeline | None = None) -> None:
        """Tell the spawn's end that start() held back (``_rp_end_untold``), once; with
        ``only``, just when that is the one still held back."""
        timeline = self._rp_end_untold
        if timeline is None or (only is not None and timeline is not only):
            return
        self._rp_end_untold = None
        spawn_ended(self, timeline)

    def _rp_new_timeline(self) -> SpawnTimeline:
        started = getattr(getattr(self, "orm_spawner", None), "started", None)
        timeout = float(getattr(self, "start_timeout", 0) or 0)
        timeline = SpawnTimeline(
            server_name=getattr(self, "name", "") or "",
            started_at=spawn_requested_at(started, timeout, utcnow()),
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

    def timeline_for_reader(self) -> SpawnTimeline:
        """The timeline a reader of this spawn sees now: the pending page as well as the
        progress stream. A page may be rendered before ``start()`` ran (the hub awaits its
        pre-spawn hooks first): it then reads the pending spawn's new timeline, not the last
        spawn's, so its clock starts at the request."""
        return self._rp_timeline_for_progress()

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

    async def start(self) -> Any:
        """Start the server as the parent class does, recording the spawn's timeline."""
        from jupyterhub.utils import maybe_future

        quiet_tornado_after_timeout()
        timeline = self._rp_claim_timeline()
        # the spawn's facts, as its options are now (JupyterHub applied the user's)
        keep_facts(self, timeline)
        broadcast = self._rp_broadcast(timeline)
        sub = Subscription()
        self._rp_fail_fast = asyncio.get_running_loop().create_future()
        pump = asyncio.ensure_future(self._rp_pump(timeline, broadcast, sub))
        self._rp_in_start = True
        try:
            starting = asyncio.ensure_future(maybe_future(super().start()))  # type: ignore[misc]
            result = await self._rp_start_or_stop_early(starting, timeline, broadcast)
        except BaseException as exc:
            # before the hub's stop() can remove the pod (and its log), still "in start"
            await self._rp_before_failure(timeline)
            self._rp_in_start = False
            await stop_pump(pump, sub)
            timeout = float(getattr(self, "start_timeout", 0) or 0)
            timeline.finish("failed", failure_message(exc, timeout, timeline.elapsed()))
            broadcast.notify()
            spawn_ended(self, timeline)  # the history and the metrics hear of it
            raise
        self._rp_in_start = False
        await stop_pump(pump, sub)
        timeline.finish("ready")
        self._rp_started_at = asyncio.get_running_loop().time()
        broadcast.notify()
        if self._start_pending:
            # in JupyterHub's spawn: the history and the metrics hear of it after the HTTP
            # check, which may still find that the server never answers (stop() then)
            self._rp_end_untold = timeline
            # the check lasts at most http_timeout; should the hub never say it is over (an
            # error in its own flow), the end is still told, as a start
            http_timeout = float(getattr(self, "http_timeout", 0) or 30)
            asyncio.get_running_loop().call_later(http_timeout + 5, self._rp_tell_end, timeline)
        else:
            spawn_ended(self, timeline)
        return result

    async def run_pre_spawn_hook(self) -> Any:
        """Run ``pre_spawn_hook`` as the parent does; if it raises, the spawn's timeline gets
        the failure as its cause and ends (``start()`` will not run), then the exception
        goes on to JupyterHub (``richprogress.stream.notes``)."""
        return await run_guarded(self, "pre_spawn_hook", super().run_pre_spawn_hook, end=True)  # type: ignore[misc]

    async def run_auth_state_hook(self, auth_state: Any) -> Any:
        """Run ``auth_state_hook`` as the parent does, its failure shown as ``run_pre_spawn_hook``
        shows one."""
        parent = super().run_auth_state_hook  # type: ignore[misc]
        return await run_guarded(self, "auth_state_hook", lambda: parent(auth_state), end=True)

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
        # what the spawner can still read (the container's log, and the cause it names)
        # comes first: the reason the hub gives for the failure is then the page's reason
        await self._rp_before_failure(timeline)  # stopping removes the pod and its log
        timeout = float(getattr(self, "start_timeout", 0) or 0) or None
        summary, record = stop_early(timeline, broadcast.live, timeout)
        self._rp_add_record(timeline, broadcast, record)
        broadcast.notify()
        # the summary may quote an image name someone typed: the hub log gets it escaped as
        # the command line shows it (a terminal escape must not drive an admin's terminal),
        # and so does JupyterHub's own log line of the failure, which is this exception's text
        summary = display_line(summary)
        self.log.info("richprogress: stopping %s early: %s", display_line(getattr(self, "_log_name", "?")), summary)
        try:
            await self.stop(now=True)
        except Exception:
            self.log.exception("richprogress: stopping the pod after a fatal cause failed")
        raise StoppedEarly(summary)

    #: the timeline whose failure ``_rp_last_words`` was already asked about
    _rp_last_words_for: SpawnTimeline | None = None

    async def _rp_before_failure(self, timeline: SpawnTimeline) -> None:
        """Once per failed spawn, before its end is told: let the spawner add what it
        can still read (``_rp_last_words``). Bounded by the spawner; never raises, and a
        cancellation meanwhile (the hub shutting down) does not keep the end untold."""
        if self._rp_last_words_for is timeline:
            return
        self._rp_last_words_for = timeline
        try:
            await self._rp_last_words(timeline)
        except BaseException:  # noqa: BLE001 - the failure itself is raised by the caller
            self.log.debug("richprogress: reading the failed server's last words failed", exc_info=True)

    async def _rp_last_words(self, timeline: SpawnTimeline) -> None:
        """What a failed spawn's spawner can add before the pod goes (``RichKubeSpawner``:
        the container's last log lines, ``timeline.container_log``); must be bounded in
        time. The default adds nothing."""

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
        elif timeline is not None and timeline.outcome == "ready" and getattr(self, "_waiting_for_response", False):
            # start() returned, but the hub's HTTP check never got an answer and it gives up:
            # the spawn failed after all, and the pages should say why
            server = getattr(self, "server", None)
            waited = asyncio.get_running_loop().time() - self._rp_started_at
            message = no_answer_message(getattr(server, "url", None), float(getattr(self, "http_timeout", 0) or 0), waited)
            if message is not None:
                # the server's own log may say why it never answered: read before the pod goes
                await self._rp_before_failure(timeline)
                timeline.finish("failed", message)
                self._rp_broadcast(timeline).notify()
        self._rp_tell_end()
        return await super().stop(*args, **kwargs)  # type: ignore[misc]

    # -- the pump (the timeline's only writer) ---------------------------------------------------

    async def _rp_pump(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, sub: Subscription) -> None:
        await run_pump(self, timeline, broadcast, sub)

    def _rp_handle_now(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, source: str, obj: Mapping[str, Any]) -> bool | None:
        """Handle one pushed item right away, as ``_rp_handle`` would, when that needs no
        waiting; True/False: handled (timeline changed or not); None: leave it to the pump."""
        return None

    async def _rp_open_feed(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, sub: Subscription) -> Closer | None:
        """Start what pushes items into ``sub``; return its clean-up.

        The default reads the parent class's ``progress()`` (each item becomes a record).
        """
        return open_parent_feed(super().progress, sub, self.log)  # type: ignore[misc]

    async def _rp_handle(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, source: str, obj: Mapping[str, Any]) -> bool:
        """Turn one pushed item into timeline records; True when the timeline changed."""
        if source != MESSAGE:
            return False
        record = message_record(self.event_formatter, broadcast, obj)
        if isinstance(record, bool):
            return record
        return self._rp_add_record(timeline, broadcast, record)

    def _rp_add_record(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, record: EventRecord) -> bool:
        """Add a record of the caller's own (kept without a copy; ``intake.add_record``);
        True when the timeline changed. Fail-fast is asked for when it became due."""
        changed, live_changed = add_record(timeline, broadcast, record)
        if live_changed:
            self._rp_live_changed(timeline, broadcast, True)
        return changed

    async def _rp_tick(self, timeline: SpawnTimeline, broadcast: TimelineBroadcast, final: bool) -> bool:
        """Hook run after each batch (``final`` when the spawn ended); True if changed."""
        return False

    # -- patience rows ----------------------------------------------------------------------------

    def _rp_next_wakeup(self, timeline: SpawnTimeline, state: dict[str, Any]) -> float | None:
        """Seconds until the pump must look again by itself (None: only when woken)."""
        live = self._rp_broadcast(timeline).live
        recheck = live.recheck_in(timeline) if live is not None else None
        due = self._rp_patience_plan(timeline, state).next_due(timeline.elapsed())
        if due is None:
            return recheck
        patience = max(0.0, due - timeline.elapsed())
        return patience if recheck is None else min(patience, recheck)

    def _rp_patience_typical(self) -> Any:
        """The spawn's typical times (``richprogress.typical.statistics.Typical`` or None):
        the page's, so the patience rows and its "longer than usual" tell one story."""
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
        """Add the "still waiting" row when one is due; True when the timeline changed."""
        if timeline.outcome != "pending":
            return False
        elapsed = timeline.elapsed()
        plan = self._rp_patience_plan(timeline, state)
        live = broadcast.live
        late_changed = live is not None and live.note_late(timeline, plan.is_late(elapsed))
        if late_changed:
            self._rp_live_changed(timeline, broadcast, True)
        # the page may already say what is wrong: a "still waiting" row would only repeat
        # it (or, with a made-up step, contradict it)
        shows_cause = live is not None and live.shows_cause
        due = plan.take(elapsed, hopeless=shows_cause)
        if due is None:
            return late_changed
        record = still_waiting_record(
            self.event_formatter,
            timeline,
            due,
            elapsed,
            template=self.patience_message,
            waiting_for={**self._default_waiting_for(), **self.patience_waiting_for},
            counts=state["patience_count"],
        )
        return self._rp_add_record(timeline, broadcast, record)

    # -- readers ------------------------------------------------------------------------------

    def progress(self) -> AsyncGenerator[dict[str, Any], None]:
        """Progress events: the timeline so far, then its changes as they happen
        (``progress_events``); the timeline is chosen when reading starts."""
        return progress_events(self._rp_reading)

    def _rp_reading(self) -> tuple[SpawnTimeline, TimelineBroadcast]:
        timeline = self._rp_timeline_for_progress()
        return timeline, self._rp_broadcast(timeline)
