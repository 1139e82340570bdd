"""What the pages show from the spawn history: the stored failure page, the one-line
notice on the home page and the spawn form, the admin's failures page.

One and only purpose: turn stored spawns into plain data for templates (as
``richprogress.history`` in templates, see ``web_context.TemplateHelpers``) and handlers.
Jinja autoescapes it; no HTML is built here.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from jupyterhub.utils import url_escape_path, url_path_join

from richprogress.history import history_for_user, timeline_of
from richprogress.model.records import PHASE_LABELS
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import parse_timestamp, time_ago, utc_text, utcnow
from richprogress.typical.start_stats import start_stats
from richprogress.web.context import FailureView, failure_view


def failure_page_url(hub_base_url: str, user_name: str, server_name: str) -> str:
    """The page that shows a server's stored failure (``FailurePageHandler``).

    Not JupyterHub's ``spawn-pending`` URL: that one is 404 for a named server once the
    spawn form replaced its failed spawner."""
    parts = [url_escape_path(user_name)] + ([url_escape_path(server_name)] if server_name else [])
    return url_path_join(hub_base_url, "richprogress/failed", *parts)


def _busy(user: Any, server_name: str) -> bool:
    """Whether the server runs or is starting now (then its last failure is old news)."""
    spawners = getattr(user, "spawners", None)
    # .get: JupyterHub's spawner dict makes a spawner on a missing key
    spawner = spawners.get(server_name) if spawners is not None else None
    if spawner is None:
        return False
    return bool(getattr(spawner, "active", False) or getattr(spawner, "pending", None))


def stored_timeline(user: Any, server_name: str) -> SpawnTimeline | None:
    """The server's last finished spawn from the store, as a timeline (None without one)."""
    spawn = history_for_user(user).last_spawn(user.name, server_name or "")
    return timeline_of(spawn) if spawn is not None else None


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


#: seconds a page (rendered on the hub's event loop) waits for a database that is not yet
#: connected; past it the page shows what memory holds
PAGE_WAIT = 1.0


class HistoryHelpers:
    """``richprogress.history`` in our templates."""

    def __init__(self, viewer_name: str | None = None) -> None:
        self.viewer_name = viewer_name

    def failure_view(self, user: Any, server_name: str, hub_base_url: str) -> FailureView | None:
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
            viewer_name=self.viewer_name,
            facts=[(str(label), str(value)) for label, value in spawn.get("shown_facts") or []],
            own_pod=(spawn.get("facts") or {}).get("pod"),
        )

    def notices(self, user: Any, hub_base_url: str) -> list[dict[str, Any]]:
        """One notice per server of ``user`` whose last start failed (and that is not
        running or starting now), newest first."""
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


def failures_page_data(
    store: Any, *, cause: str | None, before: int | None, limit: int, hub_base_url: str
) -> dict[str, Any]:
    """The admin's failures page: recent failures (filtered by cause), counts by cause
    over the last day and week, and the next page's ``before``. Runs on a reader thread."""
    now = utcnow()
    rows = store.recent_failures(cause=cause, limit=limit + 1, before=before)
    more = len(rows) > limit
    rows = rows[:limit]
    counts = store.cause_counts_since(now - timedelta(days=7), now - timedelta(days=1))
    causes = [{"cause": name, "week": week, "day": day} for name, (week, day) in counts.items()]
    failures = []
    for spawn in rows:
        finished = parse_timestamp(spawn.get("finished_at"))
        failures.append(
            {
                **spawn,
                "ago": time_ago(finished, now),
                "finished_utc": utc_text(finished) if finished else "",
                "url": failure_page_url(hub_base_url, spawn["user_name"], spawn["server_name"] or ""),
                "step": PHASE_LABELS.get(spawn.get("phase") or "", "Unknown"),
            }
        )
    return {
        "failures": failures,
        "causes": causes,
        # issue 12: the last day and week in words (starts, share failed, usual time, causes)
        "stats": start_stats(store, now, counts),
        "cause": cause,
        "next_before": rows[-1]["id"] if more and rows else None,
        "available": store.available,
    }
