"""The JSON and text endpoints: a server's spawn timeline, its report, and its stored spawns.

Routes, relative to the hub prefix, collected in ``default_handlers``:

``GET api/richprogress/users/{user}[/servers/{server_name}]/timeline``
    The spawn timeline of the user's default (or named) server as JSON:
    ``SpawnTimeline.to_dict()`` (``server_name``, ``started``, ``finished``, ``elapsed``,
    ``outcome``, ``reason``, ``progress``, ``dropped``, ``records``) plus ``diagnosis``
    (``{"summary", "hint", "phase", "record_id"}``, null unless the spawn failed),
    ``facts`` and ``typical`` (``typical.Typical``: p50/p90 of the start and its steps,
    null if unknown). The facts are the spawn's own, kept with its timeline; a spawner
    that no longer holds a timeline (replaced by the spawn form, or a hub restart) answers
    from the last stored spawn, with that spawn's facts and profile, never the options
    the spawner has now. ``?format=text`` returns the plain-text report, the very text
    "Copy details" puts on the clipboard (with the "Hub:" line on both).
``GET api/richprogress/users/{user}[/servers/{server_name}]/timeline.txt``
    The same plain-text report.
``GET api/richprogress/users/{user}[/servers/{server_name}]/spawns``
    The server's finished spawns, newest first: ``{"spawns": [{"id", "user_name",
    "server_name", "requested_at", "finished_at", "outcome", "profile_slug",
    "profile_name", "summary", "hint", "phase", "cause", "elapsed"}], "next": url|null}``.
    ``?limit=N`` (1-100, default 20) and ``?before=ID`` page through them.
``GET api/richprogress/users/{user}[/servers/{server_name}]/spawns/{id}``
    One stored spawn: the JSON the timeline endpoint gives, plus ``id``, ``profile_slug``,
    ``profile_name``, ``facts``, ``steps`` and ``cause``.

The timeline's JSON and text carry the failing container's last log lines
(``container_log``) only for the viewers ``show_container_log`` names: by default the
server's owner and admins (JupyterHub's admin flag); a holder of ``read:servers`` who is
neither gets ``container_log: null`` and a report without them.

Every route needs ``read:servers`` on that user's server, the scope that guards
JupyterHub's own progress API: the owner and admins can read it; another user gets 404
(JupyterHub answers "no access" and "no such thing" alike), a token without the scope 403.
Unknown users and servers, and servers without a timeline, are 404. A spawn id that is
not a whole number within a 64-bit integer (or is 0), a user or server name with a
control character or longer than ``arguments.MAX_NAME`` (on the spawns routes), and a bad ``limit`` or ``before`` are
400, saying which. Database work runs on the store's page reader threads within
``SpawnHistory.read_timeout``, never on the hub's event loop; when the database cannot
answer (down, stalled, too slow) and memory does not hold the answer, 503 says why.

A name holding a NUL or a lone surrogate is a 400 on every route, right after
authentication and before any query (``arguments.PathNamesChecked``). The stored spawns a user reads are its own account's
(``views.history.account_for``): a deleted account's of the same name, and those stored
before accounts were, are for admins only.
"""

from __future__ import annotations

import json
from typing import Any

from jupyterhub.apihandlers import APIHandler
from jupyterhub.scopes import needs_scope
from tornado import web
from tornado.httputil import url_concat

from richprogress.history import history_for, history_for_user, timeline_of
from richprogress.history.read_pool import Read
from richprogress.typical.cache import default_cache, typical_for_spawner
from richprogress.typical.statistics import Typical
from richprogress.web.arguments import PathNamesChecked, checked_name, int_argument, spawn_id
from richprogress.web.urls import hub_url
from richprogress.web.views.history import account_for, stored_spawn
from richprogress.web.views.payloads import (
    container_log_shown,
    spawner_facts,
    timeline_payload,
    timeline_report_text,
)

#: the most spawns one page of the spawns list holds
MAX_LIMIT = 100


def unavailable(found: Read[Any]) -> web.HTTPError:
    """The 503 of a read the database could not answer, with the reason."""
    return web.HTTPError(503, f"The spawn history cannot be read right now: {found.why}.")


def typical_for_profile(config: Any, profile_slug: str | None) -> Typical | None:
    """The typical times of a stored spawn's profile (not the one the spawner has now),
    with the hub's ``config``; None on any error, as ``typical_for_spawner``."""
    try:
        return default_cache(config).get(profile_slug)
    except Exception:
        return None


class TimelineAPIHandler(PathNamesChecked, APIHandler):
    """The spawn timeline of one server, as JSON or as the plain-text report."""

    #: the answer when no ``format`` argument is given
    default_format = "json"

    @needs_scope("read:servers")
    async def get(self, user_name: str, server_name: str = "") -> None:
        user = self.find_user(user_name)
        if user is None:
            raise web.HTTPError(404, "No such user")
        if server_name not in user.orm_spawners:
            raise web.HTTPError(404, "No such server")
        # .get, not [...]: JupyterHub's spawner dict makes a spawner on a missing key, and
        # it holds none for a named server whose failed spawner the spawn form discarded
        spawner = user.spawners.get(server_name)
        timeline = getattr(spawner, "spawn_timeline", None)
        if timeline is not None:
            # the facts kept with the timeline: its spawn's, not the spawner's options now
            facts = spawner_facts(spawner, timeline)
            typical = typical_for_spawner(spawner)
        else:
            # a replaced spawner (the spawn form), or a hub restart: the last stored spawn,
            # with the facts it was stored with; this spawner's options are another spawn's
            found = await history_for_user(user).read_last_spawn(
                user.name, server_name, account=account_for(user, self.current_user)
            )
            if found.value is None:
                if not found.available:
                    raise unavailable(found)
                raise web.HTTPError(404, "No spawn timeline for this server")
            stored = stored_spawn(found.value)
            timeline, facts = stored.timeline, stored.facts
            typical = typical_for_profile(self.settings.get("config"), stored.profile_slug)
        self.set_header("Cache-Control", "no-cache")
        # Both forms quote event text (an image name may hold "<img onerror=...>"): a browser
        # must never sniff them as HTML.
        self.set_header("X-Content-Type-Options", "nosniff")
        fmt = self.get_argument("format", self.default_format)
        # the container's last lines, for the owner and admins (show_container_log)
        show_log = container_log_shown(spawner, self.settings.get("config"), owner_name=user.name, viewer=self.current_user)
        if fmt == "text":
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(
                # the failure page's "Copy details" is this same call (views.failure)
                timeline_report_text(
                    timeline,
                    user=user.name,
                    server_name=server_name,
                    hub_url=hub_url(self),
                    facts=facts,
                    show_log=show_log,
                )
            )
        elif fmt == "json":
            self.set_header("Content-Type", "application/json")
            payload = timeline_payload(timeline, facts, show_log=show_log)
            # p50/p90 of past starts of this profile (or configured), else null
            payload["typical"] = typical
            self.finish(json.dumps(payload))
        else:
            raise web.HTTPError(400, "format must be 'json' or 'text'")


class TimelineTextAPIHandler(TimelineAPIHandler):
    """``.../timeline.txt``: the plain-text report, for curl and "Copy details"."""

    default_format = "text"


class SpawnListAPIHandler(PathNamesChecked, APIHandler):
    """A server's finished spawns, newest first, a page at a time."""

    @needs_scope("read:servers")
    async def get(self, user_name: str, server_name: str = "") -> None:
        server_name = checked_name(server_name or "", "the server name")
        user = self.find_user(checked_name(user_name, "the user name"))
        if user is None:
            raise web.HTTPError(404, "No such user")
        limit = int_argument(self, "limit", 20, 1, MAX_LIMIT) or 20
        before = int_argument(self, "before", None, -(2**62), 2**62)
        store = history_for(self.settings.get("config"), self.log)
        found = await store.read_list_spawns(
            user.name, server_name, limit=limit + 1, before=before, account=account_for(user, self.current_user)
        )
        if not found.available:
            # an empty list would say "no spawns": the truth is "cannot tell now"
            raise unavailable(found)
        spawns = found.value
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


class SpawnAPIHandler(PathNamesChecked, APIHandler):
    """One stored spawn of a named server, served as the timeline endpoint would."""

    @needs_scope("read:servers")
    async def get(self, user_name: str, server_name: str, id_text: str) -> None:
        await self._serve(user_name, server_name, id_text)

    async def _serve(self, user_name: str, server_name: str, id_text: str) -> None:
        number = spawn_id(id_text)
        server_name = checked_name(server_name or "", "the server name")
        user = self.find_user(checked_name(user_name, "the user name"))
        if user is None:
            raise web.HTTPError(404, "No such user")
        store = history_for(self.settings.get("config"), self.log)
        found = await store.read_spawn(
            user.name, server_name, number, account=account_for(user, self.current_user)
        )
        spawn = found.value
        if spawn is None:
            if not found.available:
                raise unavailable(found)
            raise web.HTTPError(404, "No such spawn")
        show_log = container_log_shown(
            user.spawners.get(server_name), self.settings.get("config"), owner_name=user.name, viewer=self.current_user
        )
        data = timeline_payload(timeline_of(spawn), show_log=show_log)
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
    async def get(self, user_name: str, id_text: str) -> None:
        await self._serve(user_name, "", id_text)


_USER = r"/api/richprogress/users/([^/]+)"
_SERVER = _USER + r"/servers/([^/]*)"

#: the endpoints' routes, relative to the hub prefix
default_handlers: list[tuple[Any, ...]] = [
    (_USER + r"/timeline", TimelineAPIHandler),
    (_USER + r"/timeline\.txt", TimelineTextAPIHandler),
    (_SERVER + r"/timeline", TimelineAPIHandler),
    (_SERVER + r"/timeline\.txt", TimelineTextAPIHandler),
    (_USER + r"/spawns", SpawnListAPIHandler),
    (_SERVER + r"/spawns", SpawnListAPIHandler),
    (_USER + r"/spawns/(-?\d+)", DefaultServerSpawnAPIHandler),
    (_SERVER + r"/spawns/(-?\d+)", SpawnAPIHandler),
]
