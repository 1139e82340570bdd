"""The ``richprogress`` variable of our templates: ``template_helpers`` goes into
``c.JupyterHub.template_vars`` (``richprogress.setup`` puts it there).

Templates call ``richprogress.static_url``, ``richprogress.pending_data``,
``richprogress.failure_view``, ``richprogress.viewer_name``,
``richprogress.failures_url`` (the navbar's link for admins) and, for the spawn history,
``richprogress.history.stored_failure`` and ``richprogress.history.notices``. Everything
returns data (strings, numbers, dicts); Jinja autoescapes it and the browser code uses
``textContent``, so no HTML is ever built from event or user text.

The two spawn-history helpers are coroutines: JupyterHub renders its pages with an async
Jinja environment, which awaits them, so the page waits on a reader thread (within
``SpawnHistory.read_timeout``) while the hub's event loop goes on serving everyone else.
They are meant for the pages JupyterHub renders that way (home, spawn, the failure page);
its sync environment (error pages) must not call them.

The failure views take the page's ``static_url`` too: JupyterHub gives templates no
request, and that bound method is the one way to its handler, whose request gives the
report its "Hub:" line (``urls.page_hub_url``), as the text endpoint's has.
"""

from __future__ import annotations

from typing import Any

from richprogress.web import urls
from richprogress.web.views import pending
from richprogress.web.views.failure import FailureView, failure_view
from richprogress.web.views.history import (
    Notices,
    StoredFailure,
    failure_notices,
    sees_all_failures,
    stored_failure,
)
from richprogress.web.views.payloads import container_log_shown, spawner_facts


class HistoryHelpers:
    """``richprogress.history`` in our templates."""

    def __init__(self, viewer_name: str | None = None, viewer: Any = None) -> None:
        self.viewer_name = viewer_name
        self.viewer = viewer

    async def stored_failure(
        self, user: Any, server_name: str, hub_base_url: str, page_static_url: Any = None
    ) -> StoredFailure:
        """The failure page from the store (``.view``), when the server's last spawn
        failed and it is neither running nor starting now; ``.note`` when the store could
        not be read."""
        return await stored_failure(
            user,
            server_name,
            hub_base_url,
            self.viewer_name,
            hub_url=urls.page_hub_url(page_static_url),
            show_log=_shows_log(user, server_name, self.viewer),
            viewer=self.viewer,
        )

    async def notices(self, user: Any, hub_base_url: str) -> Notices:
        """One notice per server of ``user`` whose last start failed (and that is not
        running or starting now), newest first (``.items``); ``.note`` when the store
        could not be read."""
        return await failure_notices(user, hub_base_url, self.viewer)


class TemplateHelpers:
    """The ``richprogress`` variable of our templates.

    ``viewer_name`` is the logged-in user (JupyterHub's ``current_user``), who is not the
    page's ``user`` when an admin looks at someone else's server.
    """

    def __init__(self, viewer_name: str | None = None, viewer: Any = None) -> None:
        self.viewer_name = viewer_name
        #: the logged-in user itself (its admin flag decides who sees the container log)
        self.viewer = viewer

    def static_url(self, hub_base_url: str, name: str) -> str:
        return urls.static_url(hub_base_url, name)

    @property
    def history(self) -> HistoryHelpers:
        """The spawn history's page helpers."""
        return HistoryHelpers(self.viewer_name, self.viewer)

    def pending_data(
        self, spawner: Any, user: Any, hub_base_url: str, progress_url: str
    ) -> dict[str, Any]:
        return pending.pending_data(
            spawner,
            user.name,
            hub_base_url=hub_base_url,
            progress_url=progress_url,
            viewer_name=self.viewer_name,
        )

    def failures_url(self, parsed_scopes: Any, hub_base_url: str) -> str | None:
        """The admin's failures page, for those who may open it (``read:servers`` on
        every user, as ``pages.FailuresHandler`` asks); None for anyone else."""
        return urls.failures_page_url(hub_base_url) if sees_all_failures(parsed_scopes) else None

    def failure_view(
        self,
        user: Any,
        server_name: str,
        failed_message: str | None,
        hub_base_url: str,
        page_static_url: Any = None,
    ) -> FailureView | None:
        # .get, not [...]: JupyterHub's spawner dict creates a spawner on a missing key.
        spawner = user.spawners.get(server_name or "")
        timeline = getattr(spawner, "spawn_timeline", None)
        return failure_view(
            user.name,
            server_name or "",
            timeline,
            failed_message or spawn_error_text(spawner),
            hub_base_url=hub_base_url,
            hub_url=urls.page_hub_url(page_static_url),
            viewer_name=self.viewer_name,
            facts=spawner_facts(spawner, timeline) if spawner is not None else None,
            own_pod=pending.own_pod_name(spawner),
            show_log=_shows_log(user, server_name, self.viewer),
        )


def _shows_log(user: Any, server_name: str, viewer: Any) -> bool:
    """Whether ``viewer`` sees the container log of ``user``'s server (``show_container_log``)."""
    spawners = getattr(user, "spawners", None)
    spawner = spawners.get(server_name or "") if spawners is not None else None
    settings = getattr(user, "settings", None)
    config = settings.get("config") if isinstance(settings, dict) else None
    return container_log_shown(spawner, config, owner_name=str(getattr(user, "name", "")), viewer=viewer)


def spawn_error_text(spawner: Any) -> str | None:
    """The text of the error the spawner's last spawn failed with, when JupyterHub gives the
    page none: it passes only a ``jupyterhub_message``, and the hub's own HTTP check raises a
    plain ``TimeoutError("Server at ... didn't respond in 30 seconds")`` after ``start()``
    returned, so the failure page would not know that the server never answered."""
    future = getattr(spawner, "_spawn_future", None)
    if future is None or not future.done() or future.cancelled():
        return None
    error = future.exception()
    return str(error) if error is not None and str(error) else None


def template_helpers(current_user: Any = None) -> TemplateHelpers:
    """``template_vars`` value. JupyterHub calls it per page with the logged-in user, while
    the page's own ``user`` variable is the user whose server it shows."""
    name = getattr(current_user, "name", None)
    return TemplateHelpers(name if isinstance(name, str) else None, current_user)
