"""The pending page's data: what ``static/pages/pending.js`` needs to follow a spawn live
(its URLs, the hub's clock, the user's pod, the typical start times in words)."""

from __future__ import annotations

from typing import Any

from jupyterhub.utils import url_escape_path, url_path_join

from richprogress.model.timeline import SpawnTimeline
from richprogress.typical.cache import typical_for_spawner
from richprogress.typical.words import PageView, page_view
from richprogress.web.urls import server_api_path, timeline_api_path
from richprogress.web.views.rows import hint_label
from richprogress.web.views.vocabulary import vocabulary


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
    """The pending page's data for ``static/pages/pending.js`` (rendered with ``|tojson``).

    ``viewer_name`` is the logged-in user: the page says "your server" only to the owner.
    """
    server_name = getattr(spawner, "name", "") or ""
    # the timeline the page's stream will read (RichProgressMixin.timeline_for_reader), so
    # a page rendered before start() ran still has this spawn's clock; a spawner without
    # the mixin has no timeline
    for_reader = getattr(spawner, "timeline_for_reader", None)
    timeline: SpawnTimeline | None = (
        for_reader() if callable(for_reader) else getattr(spawner, "spawn_timeline", None)
    )
    pending = timeline is not None and timeline.outcome == "pending"
    return {
        "page": "pending",
        "userName": user_name,
        "serverName": server_name,
        "viewerIsOwner": viewer_name is not None and viewer_name == user_name,
        # the words before the banner's hint, as the failure page says them to this viewer
        "hintLabel": hint_label(viewer_name is not None and viewer_name == user_name),
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
        # named once, not on every row (see views.rows.shown_pills)
        "ownPod": own_pod_name(spawner),
        # typical start times in words (a dict lookup; null: the page reads as before)
        "typical": typical_page_view(spawner) if pending else None,
        # the names and words of steps and states, which static/ would otherwise copy
        "vocabulary": vocabulary(),
    }
