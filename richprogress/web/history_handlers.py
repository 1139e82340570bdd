"""Handlers that read the spawn history: a server's past spawns, and the admin's failures page.

Routes (relative to the hub prefix), added to ``richprogress.web.handlers.default_handlers``:

``GET api/richprogress/users/{user}/spawns``
``GET api/richprogress/users/{user}/servers/{server_name}/spawns``
    The server's finished spawns, newest first: ``{"spawns": [{"id", "user_name",
    "server_name", "requested_at", "finished_at", "outcome", "profile_slug",
    "profile_name", "summary", "hint", "phase", "cause", "elapsed"}], "next": url|null}``.
    ``?limit=N`` (1-100, default 20) and ``?before=ID`` page through them.
``GET api/richprogress/users/{user}[/servers/{server_name}]/spawns/{id}``
    One spawn: the JSON the timeline endpoint gives, plus ``id``, ``profile_slug``,
    ``profile_name``, ``facts`` and ``steps``.
``GET richprogress/failed/{user}[/{server_name}]``
    A server's failure page (``not_running.html``) from its last stored spawn; the link
    the notices and the admin page give. Same scope as the API routes.
``GET richprogress/failures``
    The admin page: recent failed spawns across users, filterable by ``?cause=``, with
    counts by cause over the last day and week. For admins and holders of ``read:servers``
    on every user.

The API routes need the timeline endpoint's scope, ``read:servers`` on that server (owner,
admins, granted readers); others get 404, a token without the scope 403. Database work
runs on the store's reader threads, never on the hub's event loop.
"""

from __future__ import annotations

import json
from typing import Any

from jupyterhub.apihandlers import APIHandler
from jupyterhub.handlers import BaseHandler
from jupyterhub.scopes import Scope, needs_scope
from jupyterhub.utils import url_escape_path, url_path_join
from tornado import web
from tornado.httputil import url_concat

from richprogress.history import history_for
from richprogress.history.store import timeline_of
from richprogress.web.context import static_url, timeline_payload
from richprogress.web.history_pages import failures_page_data

MAX_LIMIT = 100


def _int_arg(handler: Any, name: str, default: int | None, low: int, high: int) -> int | None:
    value = handler.get_argument(name, None)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise web.HTTPError(400, f"{name} must be a whole number") from None
    if not low <= number <= high:
        raise web.HTTPError(400, f"{name} must be between {low} and {high}")
    return number


class SpawnListAPIHandler(APIHandler):
    """A server's finished spawns. One and only purpose: list them, newest first."""

    @needs_scope("read:servers")
    async def get(self, user_name: str, server_name: str = "") -> None:
        user = self.find_user(user_name)
        if user is None:
            raise web.HTTPError(404, "No such user")
        limit = _int_arg(self, "limit", 20, 1, MAX_LIMIT) or 20
        before = _int_arg(self, "before", None, -(2**62), 2**62)
        store = history_for(self.settings.get("config"), self.log)
        spawns = await store.run(
            store.list_spawns, user.name, server_name or "", limit=limit + 1, before=before
        )
        more = len(spawns) > limit
        spawns = spawns[:limit]
        next_url = (
            url_concat(self.request.path, {"limit": str(limit), "before": str(spawns[-1]["id"])})
            if more and spawns
            else None
        )
        self.set_header("Cache-Control", "no-cache")
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"spawns": spawns, "next": next_url}))


class SpawnAPIHandler(APIHandler):
    """One stored spawn of a named server. One and only purpose: serve it as the timeline
    endpoint would."""

    @needs_scope("read:servers")
    async def get(self, user_name: str, server_name: str, spawn_id: str) -> None:
        await self._serve(user_name, server_name, spawn_id)

    async def _serve(self, user_name: str, server_name: str, spawn_id: str) -> None:
        user = self.find_user(user_name)
        if user is None:
            raise web.HTTPError(404, "No such user")
        store = history_for(self.settings.get("config"), self.log)
        spawn = await store.run(store.get_spawn, user.name, server_name or "", int(spawn_id))
        if spawn is None:
            raise web.HTTPError(404, "No such spawn")
        data = timeline_payload(timeline_of(spawn))
        for key in ("id", "outcome", "profile_slug", "profile_name", "facts", "steps", "cause"):
            data[key] = spawn.get(key)
        self.set_header("Cache-Control", "no-cache")
        # the records quote event text verbatim: never let a browser sniff it as HTML
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(data))


class DefaultServerSpawnAPIHandler(SpawnAPIHandler):
    """One stored spawn of the default server."""

    @needs_scope("read:servers")
    async def get(self, user_name: str, spawn_id: str) -> None:
        await self._serve(user_name, "", spawn_id)


class FailurePageHandler(BaseHandler):
    """A server's failure page from the stored spawn. One and only purpose: render
    ``not_running.html`` for a server whose spawner JupyterHub no longer holds.

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


class FailuresHandler(BaseHandler):
    """The admin's page of recent failed spawns. One and only purpose: render it."""

    @web.authenticated
    async def get(self) -> None:
        if self.parsed_scopes.get("read:servers") != Scope.ALL:
            raise web.HTTPError(404)
        cause = self.get_argument("cause", None) or None
        before = _int_arg(self, "before", None, -(2**62), 2**62)
        store = history_for(self.settings.get("config"), self.log)
        data = await store.run(
            failures_page_data,
            store,
            cause=cause,
            before=before,
            limit=50,
            hub_base_url=self.hub.base_url,
        )
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


_USER = r"/api/richprogress/users/([^/]+)"
_SERVER = _USER + r"/servers/([^/]*)"

#: the history routes, relative to the hub prefix (appended to ``default_handlers``)
history_handlers: list[tuple[Any, ...]] = [
    (_USER + r"/spawns", SpawnListAPIHandler),
    (_SERVER + r"/spawns", SpawnListAPIHandler),
    (_USER + r"/spawns/(-?\d+)", DefaultServerSpawnAPIHandler),
    (_SERVER + r"/spawns/(-?\d+)", SpawnAPIHandler),
    (r"/richprogress/failures", FailuresHandler),
    (r"/richprogress/failed/([^/]+)", FailurePageHandler),
    (r"/richprogress/failed/([^/]+)/([^/]*)", FailurePageHandler),
]
