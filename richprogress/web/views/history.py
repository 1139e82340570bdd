"""What the pages show from the spawn history: the stored failure page, the one-line
notice on the home page and the spawn form, the admin's failures page.

Stored spawns become plain data for the templates (``richprogress.history`` there, see
``template_vars.HistoryHelpers``) and for the handlers. Jinja autoescapes it; no HTML is
built here, and stored text (names, causes, summaries) is shown through
``model.display.display_text``, as on the failure page: controls and bidi marks escaped,
long text cut.

The reads are awaited (``SpawnHistory.read_*``: threads of their own, a deadline); when
the database cannot answer, the page shows what memory holds with ``UNAVAILABLE_NOTE``.

Whose spawns a page shows (``account_for``): the account's own, made by it, not by a
deleted account of the same name; an admin (JupyterHub's admin flag) sees every spawn
stored under the name, and the failure page tells them when the one shown is not the
account's (``OTHER_ACCOUNT_NOTE``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from jupyterhub.scopes import Scope

from richprogress.history import history_for_user, timeline_of
from richprogress.history.facts import shown_facts_of
from richprogress.history.read_pool import Read
from richprogress.history.rows import Account, account_of, owned
from richprogress.model.display import display_text
from richprogress.model.records import PHASE_LABELS
from richprogress.model.timeline import SpawnTimeline
from richprogress.model.times import parse_timestamp, time_ago, utc_text, utcnow
from richprogress.stream.spawn_facts import Facts
from richprogress.typical.start_stats import start_stats
from richprogress.web.urls import failure_page_url
from richprogress.web.views.failure import FailureView, failure_view
from richprogress.web.views.rows import breakable_parts, for_viewer

#: what a page says when the spawn history's database did not answer (down, stalled, too
#: slow) and the page shows only the last spawns the hub holds in memory
UNAVAILABLE_NOTE = "Spawn history is unavailable right now; showing what the hub remembers."

#: what the failure page tells an admin whose page shows a spawn another account made: a
#: deleted account of the same name, or a spawn stored before the store kept accounts
OTHER_ACCOUNT_NOTE = (
    "This start was made by an earlier account with this name, or stored before the spawn "
    "history kept accounts: only admins see it, not the user."
)

#: the longest name or cause a page shows whole (the failure page cuts names alike)
NAME_LIMIT = 300


def note_of(found: Read[Any]) -> str | None:
    """``UNAVAILABLE_NOTE`` when the database did not answer ``found``, else None."""
    return None if found.available else UNAVAILABLE_NOTE


def account_for(user: Any, viewer: Any) -> Account | None:
    """Whose stored spawns ``viewer`` reads of ``user``: an admin's view (None) every
    spawn stored under the name; anyone else's (the owner, a shared-access user) only
    those ``user``'s account made."""
    if getattr(viewer, "admin", False) is True:
        return None
    return account_of(user)


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


def stored_spawn(spawn: dict[str, Any]) -> StoredSpawn:
    """A stored spawn as the timeline endpoints serve it."""
    slug = spawn.get("profile_slug")
    return StoredSpawn(timeline_of(spawn), shown_facts_of(spawn), slug if isinstance(slug, str) else None)


@dataclass(frozen=True)
class StoredFailure:
    """The stored failure page: its view (None: the stock page), and ``note`` when the
    database could not be read (``UNAVAILABLE_NOTE``)."""

    view: FailureView | None
    note: str | None = None


async def stored_failure(
    user: Any,
    server_name: str,
    hub_base_url: str,
    viewer_name: str | None,
    hub_url: str | None = None,
    show_log: bool = False,
    viewer: Any = None,
) -> StoredFailure:
    """The failure page from the store, when the server's last spawn failed and it is
    neither running nor starting now; of the spawns ``viewer`` may see (``account_for``)."""
    server_name = server_name or ""
    if _busy(user, server_name):
        return StoredFailure(None)
    account = account_for(user, viewer)
    try:
        found = await history_for_user(user).read_last_spawn(user.name, server_name, account=account)
    except Exception:  # the page must render even if the store misbehaves
        return StoredFailure(None)
    spawn = found.value
    if spawn is None or spawn.get("outcome") != "failed":
        return StoredFailure(None, note_of(found))
    notes = [note_of(found)]
    if not owned(spawn, account_of(user)):  # an admin's look at another account's spawn
        notes.append(OTHER_ACCOUNT_NOTE)
    return StoredFailure(failure_view(
        user.name,
        server_name,
        timeline_of(spawn),
        spawn.get("failure_message"),
        hub_base_url=hub_base_url,
        hub_url=hub_url,
        viewer_name=viewer_name,
        facts=shown_facts_of(spawn),
        own_pod=(spawn.get("facts") or {}).get("pod"),
        show_log=show_log,
    ), " ".join(note for note in notes if note) or None)


def notice_for(spawn: dict[str, Any], hub_base_url: str, user_name: str) -> dict[str, Any]:
    """One line: "The last start of your server failed 2 hours ago: <cause>. [Show details]"."""
    finished = parse_timestamp(spawn.get("finished_at"))
    server = spawn.get("server_name") or ""
    return {
        "spawn_id": spawn.get("id"),
        "server_name": display_text(server, NAME_LIMIT),
        "ago": time_ago(finished, utcnow()),
        "finished_iso": spawn.get("finished_at"),
        "finished_utc": utc_text(finished) if finished else "",
        "summary": display_text(spawn.get("summary") or "The server could not start."),
        "url": failure_page_url(hub_base_url, user_name, server),
    }


@dataclass(frozen=True)
class Notices:
    """The home page's and spawn form's notices, and ``note`` when the database could
    not be read (``UNAVAILABLE_NOTE``)."""

    items: list[dict[str, Any]]
    note: str | None = None
    #: the owner's name as the notices show it (to an admin on someone's spawn form)
    owner: str = ""


async def failure_notices(user: Any, hub_base_url: str, viewer: Any = None) -> Notices:
    """One notice per server of ``user`` whose last start failed (and that is not running
    or starting now), newest first; of the spawns ``viewer`` may see (``account_for``)."""
    try:
        found = await history_for_user(user).read_last_by_server(
            user.name, account=account_for(user, viewer)
        )
    except Exception:
        return Notices([])
    owner = display_text(user.name, NAME_LIMIT)
    failed = [
        spawn
        for server, spawn in found.value.items()
        if spawn.get("outcome") == "failed" and not _busy(user, server)
    ]
    failed.sort(key=lambda s: s.get("finished_at") or "", reverse=True)
    items = [notice_for(spawn, hub_base_url, user.name) for spawn in failed[:5]]
    return Notices(items, note_of(found), owner)


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
    causes = [
        {"cause": name, "shown": display_text(name, NAME_LIMIT), "week": week, "day": day}
        for name, (week, day) in counts.items()
    ]
    failures = []
    for spawn in rows:
        finished = parse_timestamp(spawn.get("finished_at"))
        said = display_text(for_viewer(spawn.get("summary"), spawn.get("user_name") == viewer_name) or "")
        failures.append(
            {
                **spawn,
                # names and causes are whoever's text: shown as the failure page shows them
                **{
                    key: display_text(spawn.get(key), NAME_LIMIT) if spawn.get(key) else spawn.get(key)
                    for key in ("user_name", "server_name", "profile_name", "profile_slug", "cause")
                },
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
        "stats": start_stats(store, now, shown_counts(counts)),
        "cause": cause,
        "cause_shown": display_text(cause, NAME_LIMIT) if cause else None,
        "next_before": rows[-1]["id"] if more and rows else None,
        "available": store.available,
    }


def shown_counts(counts: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """Counts by cause with each cause as a page shows it (``display_text``; two causes
    shown alike are counted together)."""
    shown: dict[str, tuple[int, ...]] = {}
    for cause, numbers in counts.items():
        key = display_text(cause, NAME_LIMIT)
        before = shown.get(key)
        shown[key] = numbers if before is None else tuple(a + b for a, b in zip(before, numbers, strict=True))
    return shown


def unavailable_page_data(cause: str | None, why: str) -> dict[str, Any]:
    """The admin's failures page when the database did not answer: nothing stored, and
    why (``read_pool.REASONS``)."""
    return {
        "failures": [],
        "causes": [],
        "stats": [],
        "cause": cause,
        "cause_shown": display_text(cause, NAME_LIMIT) if cause else None,
        "next_before": None,
        "available": False,
        "why": why,
    }
