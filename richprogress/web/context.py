"""View models for the pages: turn a SpawnTimeline into the plain data templates render.

Templates reach these through one Jinja variable, ``richprogress`` (a ``TemplateHelpers``,
added to ``c.JupyterHub.template_vars`` by ``richprogress.setup``). Everything here returns
data (strings, numbers, dicts); Jinja autoescapes it and the browser code uses
``textContent``, so no HTML is ever built from event or user text.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from jupyterhub.utils import url_escape_path, url_path_join

from richprogress.model.display import DISPLAY_LIMIT, display_text, format_count
from richprogress.model.records import PHASE_LABELS, SEVERITIES
from richprogress.model.timeline import STOPPED_BEFORE_READY, SpawnTimeline
from richprogress.model.times import (
    format_clock,
    format_duration,
    format_utc,
    parse_timestamp,
    time_ago,
    utc_text,
    utcnow,
)
from richprogress.story.diagnosis import diagnose, fold_records, is_fold, step_durations
from richprogress.story.report import render_report_text
from richprogress.story.resolved import PROBLEM_SEVERITIES
from richprogress.stream.spawn_facts import Facts, spawn_facts
from richprogress.typical.cache import typical_for_spawner
from richprogress.typical.words import PageView, page_view
from richprogress.web import paths
from richprogress.web.row_text import breakable_parts, headline_parts, main_pod, shown_pills
from richprogress.web.vocabulary import vocabulary

#: rows of the folded timeline on the failure page: with the summary, the facts and the
#: buttons this fits a 1280x800 screenshot
FAILURE_PAGE_ROWS = 12


#: the route prefix of our static files, below the hub prefix
STATIC_PREFIX = "richprogress/static/"

_hash_cache: dict[tuple[str, float], str] = {}


def static_file_hash(name: str) -> str:
    """A short digest of a static file's content, for cache-busting URLs."""
    full = os.path.join(paths.static_dir(), name)
    key = (full, os.path.getmtime(full))
    digest = _hash_cache.get(key)
    if digest is None:
        with open(full, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:12]
        _hash_cache[key] = digest
    return digest


def static_url(hub_base_url: str, name: str) -> str:
    """URL of one of our static files, e.g. ``/prefix/hub/richprogress/static/x.js?v=ab12``.

    ``hub_base_url`` is the hub's own prefix (the ``base_url`` templates receive), so the URL
    is right under any ``c.JupyterHub.base_url``.
    """
    return url_path_join(hub_base_url, STATIC_PREFIX, name) + "?v=" + static_file_hash(name)


def server_api_path(hub_base_url: str, user_name: str, server_name: str, *rest: str) -> str:
    """``{hub}api/users/{user}/server[s/{name}]/...``, escaped, for the default or a named server."""
    user_part = url_path_join(hub_base_url, "api/users", url_escape_path(user_name))
    if server_name:
        base = url_path_join(user_part, "servers", url_escape_path(server_name))
    else:
        base = url_path_join(user_part, "server")
    return url_path_join(base, *rest) if rest else base


def timeline_api_path(hub_base_url: str, user_name: str, server_name: str) -> str:
    """Our JSON timeline endpoint for a server (see ``richprogress.web.handlers``)."""
    user_part = url_path_join(hub_base_url, "api/richprogress/users", url_escape_path(user_name))
    if server_name:
        user_part = url_path_join(user_part, "servers", url_escape_path(server_name))
    return url_path_join(user_part, "timeline")


def timeline_payload(timeline: SpawnTimeline, facts: Facts | None = None) -> dict[str, Any]:
    """What the JSON endpoint serves: ``to_dict()`` plus ``diagnosis`` (null unless failed)
    and ``facts`` (``admin_facts.spawn_facts`` pairs; [] when not given)."""
    data = timeline.to_dict()
    data["diagnosis"] = (
        dict(diagnose(data["records"], timeline.failure_message))
        if timeline.outcome == "failed"
        else None
    )
    data["facts"] = [list(pair) for pair in facts or []]
    return data


def timeline_report_text(
    timeline: SpawnTimeline,
    *,
    user: str,
    server_name: str,
    hub_url: str | None,
    facts: Facts | None = None,
) -> str:
    """The plain-text report "Copy details" puts on the clipboard."""
    return render_report_text(
        timeline_payload(timeline, facts), user=user, server_name=server_name, hub_url=hub_url
    )


def spawner_facts(spawner: Any, timeline: SpawnTimeline | None) -> Facts:
    """The facts an admin needs about the spawner's last spawn (see ``admin_facts``)."""
    return spawn_facts(spawner, timeline.records() if timeline is not None else ())


def object_label(obj: dict[str, Any] | None) -> str:
    """``Pod jupyter-alice`` from a record's involved object; "" when it names nothing."""
    if not obj:
        return ""
    return " ".join(part for part in (obj.get("kind"), obj.get("name")) if part)


def row_moment(record: dict[str, Any], started: datetime | None) -> tuple[float | None, str | None]:
    """The since-spawn seconds and timestamp a row shows: its first occurrence.

    A row stays where its event first arrived while its count grows, so it shows when it
    began (the list then reads in order); the badge says when it last happened. A record
    seen once keeps the spawner's ``since_spawn``, which is finer than Kubernetes' seconds.
    """
    first, last = record.get("first_timestamp"), record.get("timestamp")
    since = record.get("since_spawn")
    first_at = parse_timestamp(first)
    if int(record.get("count") or 1) > 1 and first_at is not None and started is not None:
        return max(0.0, (first_at - started).total_seconds()), first
    return since, last or first


def record_row(
    record: dict[str, Any],
    decisive_id: str | None,
    started: datetime | None = None,
    *,
    floor: float | None = None,
    own_pod: str | None = None,
) -> dict[str, Any]:
    """One timeline row of the failure page.

    ``floor`` is the clock of the row above: a row never reads earlier than it (Kubernetes
    mixes whole-second and microsecond stamps, so a later event can truncate lower).
    ``own_pod`` is the user's pod, named once in the facts rather than on every row.
    """
    moment_since, stamp = row_moment(record, started)
    since = (
        max(moment_since, floor) if moment_since is not None and floor is not None else moment_since
    )
    moment = parse_timestamp(stamp)
    last = parse_timestamp(record.get("timestamp"))
    severity = record.get("severity")
    count = int(record.get("count") or 1)
    pills = shown_pills(record, own_pod)
    latest = record.get("since_spawn")
    message = display_text(record.get("message") or record.get("raw_message") or "")
    return {
        "kind": "record",
        "id": record.get("id"),
        "since": since,
        "clock": format_clock(since),
        "time_iso": moment.isoformat().replace("+00:00", "Z") if moment else None,
        "time_utc": moment.strftime("%H:%M:%S") if moment else "",
        "type": display_text(pills["type"], 200),
        "severity": severity if severity in SEVERITIES else "info",
        # a problem the spawn got past (resolved.py): a quiet row with OVERCOME_PILL
        "overcome": record.get("overcome") is True and severity in PROBLEM_SEVERITIES,
        "reason": display_text(record.get("reason") or "", 200),
        "object": display_text(pills["object"], 300),
        "container": display_text(pills["container"], 200),
        "message": message,
        "message_parts": breakable_parts(message),
        "count": count,
        "count_text": format_count(count),
        "details": detail_pairs(record),
        # a repeat that went on: when it last happened (the clock shows when it began)
        "last_clock": (
            format_clock(latest)
            if since is not None
            and isinstance(latest, (int, float))
            and latest > since
            and format_clock(latest) != format_clock(since)
            else ""
        ),
        "count_title": (
            f"happened {count} times, last at {format_clock(latest)}"
            + (f" ({last.strftime('%H:%M:%S')} UTC)" if last else "")
        ),
        "decisive": decisive_id is not None and record.get("id") == decisive_id,
    }


def detail_pairs(record: dict[str, Any]) -> list[tuple[str, str]]:
    """What a row shows when opened (static/row-details.js ``detailPairs`` builds the same on
    the live page): the event's own message, reason, object, component, count, first and
    last time. Values are display text (controls escaped, long text shortened)."""
    if not record.get("reason") and not record.get("component"):
        return []  # no Kubernetes event (the hub's own message): nothing more to show
    obj = record.get("object") or {}
    object_text = "/".join(str(part) for part in (obj.get("kind"), obj.get("name")) if part)
    if obj.get("field_path"):
        object_text += f" ({obj['field_path']})"
    pairs = [
        ("Kubernetes message", record.get("raw_message")),
        ("Reason", record.get("reason")),
        ("Object", object_text),
        ("Component", record.get("component")),
        ("Count", format_count(record.get("count") or 1)),
        ("First", format_utc(record.get("first_timestamp"))),
        ("Last", format_utc(record.get("timestamp"))),
    ]
    return [(label, display_text(value, DISPLAY_LIMIT)) for label, value in pairs if value]


#: JupyterHub's first progress message; both pages show it as the spawn's first row
SERVER_REQUESTED = "Server requested"


def requested_row(started: datetime) -> dict[str, Any]:
    """The "Server requested" row at +0:00, as the live page shows the hub's first message."""
    stamp = started.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    record = {
        "id": f"message:{SERVER_REQUESTED}",
        "timestamp": stamp,
        "type": "",
        "severity": "info",
        "count": 1,
        "message": SERVER_REQUESTED,
        "since_spawn": 0.0,
    }
    return record_row(record, None, started)


def for_viewer(text: str | None, viewer_is_owner: bool) -> str | None:
    """The diagnosis as the viewer reads it: an admin looking at someone else's failure is
    not told about "your server"."""
    if text is None or viewer_is_owner:
        return text
    return text.replace("Your server", "The server").replace("your server", "the server")


def fold_row(fold: dict[str, Any]) -> dict[str, Any]:
    """A row standing for records folded out of view."""
    n = fold["folded"]
    what = f"{n} similar events" if fold.get("reason") else f"{n} more events"
    if fold.get("reason"):
        what += f" ({fold['reason']})"
    clocks = [format_clock(fold.get("first")), format_clock(fold.get("last"))]
    return {
        "kind": "fold",
        "text": what + " folded; the plain-text report has them all",
        "clock": " to ".join(c for c in clocks if c) if any(clocks) else "",
        "count": int(fold.get("count") or n),
    }


@dataclass
class FailureView:
    """Everything the failure page shows, as plain data."""

    summary: str
    hint: str | None
    phase_label: str
    user_name: str
    server_name: str
    started_iso: str
    started_utc: str
    ran_for: str
    #: the summary without its long name (an image), which ``reference`` holds; the page
    #: shows the name on its own line in monospace with a copy button
    headline: str = ""
    reference: str = ""
    reference_parts: list[tuple[str, bool]] = field(default_factory=list)
    #: "Gave up after" (the spawn failed) or "Stopped after" (someone stopped it)
    ran_for_label: str = "Gave up after"
    #: the user's pod, named here once instead of on every row
    pod: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    total_records: int = 0
    report_text: str = ""
    timeline_url: str = ""
    #: the person looking is the server's owner ("Your server ..."); else an admin or a
    #: shared-access user is looking, and the page names the owner instead
    viewer_is_owner: bool = False
    #: the facts an admin needs (label, value), shown in the facts box
    facts: list[tuple[str, str]] = field(default_factory=list)
    #: "at +0:14, as waiting could not fix it" when fail-fast ended the spawn, else ""
    stopped_early: str = ""
    #: when the spawn ended (ISO 8601) and how long ago that was ("2 hours ago")
    ended_iso: str | None = None
    ended_ago: str = ""


def failure_view(
    user_name: str,
    server_name: str,
    timeline: SpawnTimeline | None,
    failed_message: str | None = None,
    *,
    hub_base_url: str = "/hub/",
    hub_url: str | None = None,
    viewer_name: str | None = None,
    facts: Facts | None = None,
    own_pod: str | None = None,
) -> FailureView | None:
    """The failure page's data, or None when there is no timeline to tell from.

    ``viewer_name`` is the logged-in user's name: the page says "Your server" only to the
    owner (None, unknown, gives the neutral wording). ``own_pod`` is the user's pod name.
    """
    if timeline is None:
        return None
    # Arrival order, as the live page showed them: Kubernetes stamps first occurrences to the
    # second, so sorting by them would put a repeat before the sub-second event before it.
    records: list[dict[str, Any]] = list(timeline.records())  # type: ignore[arg-type]
    message = timeline.failure_message if timeline.failure_message else failed_message
    diagnosis = diagnose(records, message)  # type: ignore[arg-type]
    finished = timeline.finished_at
    steps = [
        {
            "label": step["label"],
            "clock": format_clock(step.get("start")),
            "duration": format_duration(step.get("duration")) or "?",
        }
        for step in step_durations(records, timeline.started_at, finished)  # type: ignore[arg-type]
    ]
    own_pod = own_pod or main_pod(records)
    rows = [requested_row(timeline.started_at)]
    floor: float | None = 0.0
    for item in fold_records(
        records,  # type: ignore[arg-type]
        FAILURE_PAGE_ROWS,
        decisive_id=diagnosis["record_id"],
    ):
        if is_fold(item):
            rows.append(fold_row(item))  # type: ignore[arg-type]
            continue
        row = record_row(
            item,  # type: ignore[arg-type]
            diagnosis["record_id"],
            timeline.started_at,
            floor=floor,
            own_pod=own_pod,
        )
        floor = row["since"] if row["since"] is not None else floor
        rows.append(row)
    phase = diagnosis["phase"]
    owner = viewer_name is not None and viewer_name == user_name
    summary = for_viewer(diagnosis["summary"], owner) or ""
    headline, reference = headline_parts(summary)
    return FailureView(
        summary=display_text(summary),
        headline=display_text(headline),
        reference=display_text(reference),
        reference_parts=breakable_parts(display_text(reference)),
        hint=display_text(for_viewer(diagnosis["hint"], owner)) if diagnosis["hint"] else None,
        phase_label=PHASE_LABELS.get(phase or "", "Unknown"),
        user_name=display_text(user_name, 300),
        server_name=display_text(server_name, 300),
        started_iso=timeline.to_dict()["started"],
        started_utc=utc_text(timeline.started_at),
        ran_for=format_duration(timeline.elapsed()) or "unknown",
        ran_for_label=(
            "Stopped after" if timeline.failure_message == STOPPED_BEFORE_READY else "Gave up after"
        ),
        pod=display_text(own_pod or "", 300),
        steps=steps,
        rows=rows,
        total_records=len(records),
        report_text=timeline_report_text(
            timeline, user=user_name, server_name=server_name, hub_url=hub_url, facts=facts
        ),
        # the pod has its own line above the admin facts: not twice
        facts=[
            (label, display_text(value, 300))
            for label, value in facts or []
            if not (label == "Pod" and own_pod)
        ],
        timeline_url=timeline_api_path(hub_base_url, user_name, server_name),
        viewer_is_owner=owner,
        stopped_early=(
            f"at {format_clock(timeline.stopped_early.get('at'))}, as waiting could not fix it"
            if timeline.stopped_early
            else ""
        ),
        ended_iso=timeline.to_dict()["finished"],
        ended_ago=time_ago(finished, utcnow()) if finished else "",
    )


def own_pod_name(spawner: Any) -> str | None:
    """The user's pod (KubeSpawner's ``pod_name``); None for spawners without pods."""
    name = getattr(spawner, "pod_name", None)
    return name if isinstance(name, str) and name else None


def typical_page_view(spawner: Any) -> PageView | None:
    """The spawner's typical start times in words, from the hub's cache (a dict lookup)."""
    return page_view(typical_for_spawner(spawner))


def pending_data(
    spawner: Any,
    user_name: str,
    *,
    hub_base_url: str,
    progress_url: str,
    viewer_name: str | None = None,
) -> dict[str, Any]:
    """The pending page's data for ``static/richprogress.js`` (rendered with ``|tojson``).

    ``viewer_name`` is the logged-in user: the page says "your server" only to the owner.
    """
    server_name = getattr(spawner, "name", "") or ""
    timeline: SpawnTimeline | None = getattr(spawner, "spawn_timeline", None)
    pending = timeline is not None and timeline.outcome == "pending"
    return {
        "page": "pending",
        "userName": user_name,
        "serverName": server_name,
        "viewerIsOwner": viewer_name is not None and viewer_name == user_name,
        "progressUrl": progress_url,
        "stopUrl": server_api_path(hub_base_url, user_name, server_name),
        "timelineUrl": timeline_api_path(hub_base_url, user_name, server_name),
        "pageUrl": url_path_join(
            hub_base_url, "spawn-pending", url_escape_path(user_name), url_escape_path(server_name)
        ),
        # "Stop and change options" (live-diagnosis.js) ends on the spawn form
        "spawnUrl": url_path_join(
            hub_base_url, "spawn", url_escape_path(user_name), url_escape_path(server_name)
        ),
        # Seconds since the spawn request, by the hub's clock, when the page was rendered;
        # the browser adds its monotonic clock to it (its wall clock may be off).
        "serverElapsed": round(timeline.elapsed(), 3) if pending and timeline else None,
        # The spawn's start by the hub's clock, to place repeated events at their first time.
        "started": timeline.to_dict()["started"] if pending and timeline else None,
        "progress": timeline.progress if pending and timeline else 0,
        # named once, not on every row (see row_text.shown_pills)
        "ownPod": own_pod_name(spawner),
        # issue 12: typical start times in words (a dict lookup; null: the page reads as before)
        "typical": typical_page_view(spawner) if pending else None,
        "vocabulary": vocabulary(),  # the names and words static/ would otherwise copy
    }


class TemplateHelpers:
    """The ``richprogress`` variable of our templates (see ``richprogress.setup``).

    ``viewer_name`` is the logged-in user (JupyterHub's ``current_user``), who is not the
    page's ``user`` when an admin looks at someone else's server.
    """

    def __init__(self, viewer_name: str | None = None) -> None:
        self.viewer_name = viewer_name

    def static_url(self, hub_base_url: str, name: str) -> str:
        return static_url(hub_base_url, name)

    @property
    def history(self) -> Any:
        """The spawn history's page helpers (``richprogress.web.history_pages``)."""
        from richprogress.web.history_pages import HistoryHelpers  # it imports this module

        return HistoryHelpers(self.viewer_name)

    def pending_data(
        self, spawner: Any, user: Any, hub_base_url: str, progress_url: str
    ) -> dict[str, Any]:
        return pending_data(
            spawner,
            user.name,
            hub_base_url=hub_base_url,
            progress_url=progress_url,
            viewer_name=self.viewer_name,
        )

    def failure_view(
        self, user: Any, server_name: str, failed_message: str | None, hub_base_url: str
    ) -> FailureView | None:
        # .get, not [...]: JupyterHub's spawner dict creates a spawner on a missing key.
        spawner = user.spawners.get(server_name or "")
        timeline = getattr(spawner, "spawn_timeline", None)
        return failure_view(
            user.name,
            server_name or "",
            timeline,
            failed_message,
            hub_base_url=hub_base_url,
            viewer_name=self.viewer_name,
            facts=spawner_facts(spawner, timeline) if spawner is not None else None,
            own_pod=own_pod_name(spawner),
        )


def template_helpers(current_user: Any = None) -> TemplateHelpers:
    """``template_vars`` value. JupyterHub calls it per page with the logged-in user, while
    the page's own ``user`` variable is the user whose server it shows."""
    name = getattr(current_user, "name", None)
    return TemplateHelpers(name if isinstance(name, str) else None)
