"""The HTML pages richprogress adds: a server's stored failure page and the admin's page
of recent failed spawns.

Routes, relative to the hub prefix, collected in ``default_handlers``:

``GET richprogress/failed/{user}[/{server_name}]``
    A server's failure page (``not_running.html``) from its last stored spawn; the link
    the notices and the admin page give. Needs ``read:servers`` on that server, as the
    timeline endpoint does.
``GET richprogress/failures``
    The admin page: recent failed spawns across users, filterable by ``?cause=``, with
    counts by cause over the last day and week. For admins and holders of ``read:servers``
    on every user (the hub's navbar links it for them: ``templates/notices/page.html``);
    anyone else gets a 403 page that says so in a sentence. ``?before=`` must be a whole
    number and ``?cause=`` a name without control characters (else 400). When the
    spawn history's database does not answer within ``SpawnHistory.read_timeout``, the
    page says so and why, with nothing stored on it.
"""

from __future__ import annotations

import html
from typing import Any

from jupyterhub.handlers import BaseHandler
from jupyterhub.scopes import needs_scope
from jupyterhub.utils import url_escape_path, url_path_join
from tornado import web
from tornado.httputil import url_concat

from richprogress.history import history_for
from richprogress.web.arguments import PathNamesChecked, checked_name, int_argument
from richprogress.web.urls import static_url
from richprogress.web.views.history import (
    failures_page_data,
    sees_all_failures,
    unavailable_page_data,
)

#: what a user who may not open the admin's failures page is told (JupyterHub's error page
#: shows it under "403 : Forbidden")
NOT_FOR_YOU = (
    "This page lists the failed server starts of every user, so only admins can open it. "
    "If the last start of one of your servers failed, your home page says so."
)


class FailurePageHandler(PathNamesChecked, BaseHandler):
    """A server's failure page from the stored spawn: ``not_running.html`` for a server
    whose spawner JupyterHub no longer holds.

    JupyterHub's own failure page (``spawn-pending``) answers 404 for a named server once
    the spawn form replaced its failed spawner; this one reads the history instead, so the
    notices' and the admin page's links always land on the failure.
    """

    @web.authenticated
    @needs_scope("read:servers")
    async def get(self, user_name: str, server_name: str = "") -> None:
        user = self.find_user(user_name)
        if user is None:
            raise web.HTTPError(404, "No such user")
        spawn_url = url_path_join(
            self.hub.base_url, "spawn", user.escaped_name, url_escape_path(server_name or "")
        )
        html = await self.render_template(
            "not_running.html",
            user=user,
            server_name=server_name or "",
            spawn_url=spawn_url,
            failed=False,
        )
        self.finish(html)


def forbidden(message: str) -> web.HTTPError:
    """A 403 whose message JupyterHub's error page shows under "403 : Forbidden".

    JupyterHub 5 puts a given ``reason`` in place of the message, and 6 shows the message
    only beside it: the message goes in as the page's HTML (escaped), which both show."""
    error = web.HTTPError(403, message, reason="Forbidden")
    error.jupyterhub_html_message = html.escape(message)  # type: ignore[attr-defined]
    return error


class FailuresHandler(BaseHandler):
    """The admin's page of recent failed spawns."""

    @web.authenticated
    async def get(self) -> None:
        if not sees_all_failures(self.parsed_scopes):
            raise forbidden(NOT_FOR_YOU)
        cause = self.get_argument("cause", None) or None
        if cause is not None:
            checked_name(cause, "the cause")
        before = int_argument(self, "before", None, -(2**62), 2**62)
        store = history_for(self.settings.get("config"), self.log)
        viewer = self.current_user.name
        base_url = self.hub.base_url
        found = await store.read(
            lambda: failures_page_data(
                store, cause=cause, before=before, limit=50, hub_base_url=base_url, viewer_name=viewer
            ),
            lambda: {},
        )
        data = found.value if found.available else unavailable_page_data(cause, found.why)
        next_url = (
            url_concat(self.request.path, {k: str(v) for k, v in (("cause", cause), ("before", data["next_before"])) if v is not None})
            if data["next_before"] is not None
            else None
        )
        html = await self.render_template(
            "richprogress/failures.html",
            rp_css=static_url(self.hub.base_url, "richprogress.css"),
            page_url=self.request.path,
            next_url=next_url,
            **data,
        )
        self.finish(html)


#: the pages' routes, relative to the hub prefix
default_handlers: list[tuple[Any, ...]] = [
    (r"/richprogress/failures", FailuresHandler),
    (r"/richprogress/failed/([^/]+)", FailurePageHandler),
    (r"/richprogress/failed/([^/]+)/([^/]*)", FailurePageHandler),
]
