"""What the pages show from the spawn history: the stored failure page, the one-line
notice on the home page and the spawn form, the admin's failures page.

Stored spawns become plain data for the templates (``richprogress.history`` there, see
``template_vars.HistoryHelpers``) and for the handlers. Jinja autoescapes it; no HTML is
built here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from jupyterhub.scopes import Scope

from richprogress.history import history_for_user, timeline_of
from richprogress.history.facts import shown_facts_of
from richprogress.model.display import display_text
from richprogress.model.records import PHASE_LABELS
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import parse_timestamp, time_ago, utc_text, utcnow
from richprogress.stream.spawn_facts import Facts
from richprogress.typical.start_stats import start_stats
from richprogress.web.urls import failure_page_url
from richprogress.web.views.failure import FailureView, failure_view
from richprogress.web.views.rows import breakable_parts, for_viewer

#: seconds a page (rendered on the hub's event loop) waits for a database that is not yet
#: connected; past it the page shows what memory holds
PAGE_WAIT = 1.0


def _busy(user: Any, server_name: str) -> bool:
    """Whether the server runs or is starting now (then its last failure is old news)."""
    spawners = getattr(user, "spawners", None)
    # .get: JupyterHub's spawner dict makes a spawner on a missing key
    spawner = spawners.get(server_name) if spawners is not None else None
    if spawner is None:
        return False
    return bool(getattr(spawner, "active", False) or getattr(spawner, "pending", None))


@dataclass(frozen=True)
class StoredSpawn:
    """A server's last finished spawn as the endpoints serve it: its timeline, its own
    facts (never the current spawner's) and its profile."""

    timeline: SpawnTimeline
    facts: Facts
    profile_slug: str | None


def stored_timeline(user: Any, server_name: str) -> StoredSpawn | None:
    """The server's last finished spawn from the store (None without one)."""
    spawn = history_for_user(user).last_spawn(user.name, server_name or "")
    if spawn is None:
        return None
    slug = spawn.get("profile_slug")
    return StoredSpawn(timeline_of(spawn), shown_facts_of(spawn), slug if isinstance(slug, str) else None)


def stored_failure_view(
    user: Any,
    server_name: str,
    hub_base_url: str,
    viewer_name: str | None,
    hub_url: str | None = None,
) -> FailureView | None:
    """The failure page from the store, when the server's last spawn failed and it is
    neither running nor starting now."""
    server_name = server_name or ""
    if _busy(user, server_name):
        return None
    try:
        spawn = history_for_user(user).last_spawn(user.name, server_name, wait=PAGE_WAIT)
    except Exception:  # the page must render even if the store misbehaves
        return None
    if spawn is None or spawn.get("outcome") != "failed":
        return None
    return failure_view(
        user.name,
        server_name,
        timeline_of(spawn),
        spawn.get("failure_message"),
        hub_base_url=hub_base_url,
        hub_url=hub_url,
        viewer_name=viewer_name,
        facts=shown_facts_of(spawn),
        own_pod=(spawn.get("facts") or {}).get("pod"),
    )


def notice_for(spawn: dict[str, Any], hub_base_url: str, user_name: str) -> dict[str, Any]:
    """One line: "The last start of your server failed 2 hours ago: <cause>. [Show details]"."""
    finished = parse_timestamp(spawn.get("finished_at"))
    server = spawn.get("server_name") or ""
    return {
        "spawn_id": spawn.get("id"),
        "server_name": server,
        "ago": time_ago(finished, utcnow()),
        "finished_iso": spawn.get("finished_at"),
        "finished_utc": utc_text(finished) if finished else "",
        "summary": spawn.get("summary") or "The server could not start.",
        "url": failure_page_url(hub_base_url, user_name, server),
    }


def failure_notices(user: Any, hub_base_url: str) -> list[dict[str, Any]]:
    """One notice per server of ``user`` whose last start failed (and that is not running
    or starting now), newest first."""
    try:
        last = history_for_user(user).last_by_server(user.name, wait=PAGE_WAIT)
    except Exception:
        return []
    failed = [
        spawn
        for server, spawn in last.items()
        if spawn.get("outcome") == "failed" and not _busy(user, server)
    ]
    failed.sort(key=lambda s: s.get("finished_at") or "", reverse=True)
    return [notice_for(spawn, hub_base_url, user.name) for spawn in failed[:5]]


def sees_all_failures(parsed_scopes: Any) -> bool:
    """Whether the person asking may open the admin's failures page: ``read:servers`` on
    every user (admins have it). The page and the navbar's link ask the same."""
    return isinstance(parsed_scopes, dict) and parsed_scopes.get("read:servers") == Scope.ALL


def when_parts(moment: datetime | None, now: datetime) -> tuple[str, str, str]:
    """``("2026-12-01", "07:46 UTC", "2 hours ago")``: the moment itself, with its zone,
    for a screenshot read tomorrow, and how long ago, for today. The page keeps the date
    and the time each whole (a narrow window breaks between them, never in a date).
    Empty strings when unknown."""
    if moment is None:
        return "", "", ""
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%d"), utc.strftime("%H:%M UTC"), time_ago(moment, now)


def failures_page_data(
    store: Any,
    *,
    cause: str | None,
    before: int | None,
    limit: int,
    hub_base_url: str,
    viewer_name: str | None = None,
) -> dict[str, Any]:
    """The admin's failures page: recent failures (filtered by cause), counts by cause
    over the last day and week, and the next page's ``before``. Runs on a reader thread.

    Admins read it: a summary says "the server", not "your server", except on a row of
    the viewer's own (``viewer_name``)."""
    now = utcnow()
    rows = store.recent_failures(cause=cause, limit=limit + 1, before=before)
    more = len(rows) > limit
    rows = rows[:limit]
    counts = store.cause_counts_since(now - timedelta(days=7), now - timedelta(days=1))
    causes = [{"cause": name, "week": week, "day": day} for name, (week, day) in counts.items()]
    failures = []
    for spawn in rows:
        finished = parse_timestamp(spawn.get("finished_at"))
        said = display_text(for_viewer(spawn.get("summary"), spawn.get("user_name") == viewer_name) or "")
        failures.append(
            {
                **spawn,
                "summary": said,
                # long names (an image) break only after "/", ":" and ".", not at a hyphen
                "summary_parts": breakable_parts(said),
                "ago": time_ago(finished, now),
                "when": when_parts(finished, now),
                "finished_utc": utc_text(finished) if finished else "",
                "url": failure_page_url(hub_base_url, spawn["user_name"], spawn["server_name"] or ""),
                "step": PHASE_LABELS.get(spawn.get("phase") or "", "Unknown"),
            }
        )
    return {
        "failures": failures,
        "causes": causes,
        # the last day and week in words (starts, share failed, usual time, causes)
        "stats": start_stats(store, now, counts),
        "cause": cause,
        "next_before": rows[-1]["id"] if more and rows else None,
        "available": store.available,
    }
