"""richprogress's tornado handlers: its static files and a server's spawn timeline.

Routes, relative to the hub prefix (``{base_url}hub/``), collected in ``default_handlers``:

``GET richprogress/static/{path}``
    ``static/`` (the page's ES module and stylesheet). Build URLs with ``static_url``: they
    carry ``?v=<content hash>``, so browsers cache a file until it changes.
``GET api/richprogress/users/{user}/timeline``
``GET api/richprogress/users/{user}/servers/{server_name}/timeline``
    The spawn timeline of the user's default (or named) server as JSON:
    ``SpawnTimeline.to_dict()`` (``server_name``, ``started``, ``finished``, ``elapsed``,
    ``outcome``, ``reason``, ``progress``, ``dropped``, ``records``) plus ``diagnosis``
    (``{"summary", "hint", "phase", "record_id"}``, null unless the spawn failed) and
    ``typical`` (``typical.Typical``: p50/p90 of the start and its steps, null if unknown).
    ``?format=text`` returns the plain-text report that "Copy details" puts on the clipboard.
``GET api/richprogress/users/{user}/timeline.txt``
``GET api/richprogress/users/{user}/servers/{server_name}/timeline.txt``
    The same plain-text report.

The spawn history's routes (``richprogress.web.history_handlers`` documents them):

``GET api/richprogress/users/{user}/spawns``
``GET api/richprogress/users/{user}/servers/{server_name}/spawns``
    A server's finished spawns, newest first (paginated).
``GET api/richprogress/users/{user}/spawns/{id}``
``GET api/richprogress/users/{user}/servers/{server_name}/spawns/{id}``
    One stored spawn, as the timeline JSON.
``GET richprogress/failed/{user}``, ``richprogress/failed/{user}/{server_name}``
    A server's failure page from its last stored spawn.
``GET richprogress/failures``
    The admin's page of recent failed spawns.

The timeline routes need ``read:servers`` on that user's server, the scope that guards
JupyterHub's own progress API: the owner and admins can read it; another user gets 404
(JupyterHub answers "no access" and "no such thing" alike), a token without the scope 403.
Unknown users and servers, and servers without a timeline, are 404.
"""

from __future__ import annotations

import json
from typing import Any

from jupyterhub.apihandlers import APIHandler
from jupyterhub.scopes import needs_scope
from tornado import web

from richprogress.typical.cache import typical_for_spawner
from richprogress.web import paths
from richprogress.web.context import (
    STATIC_PREFIX,
    spawner_facts,
    static_url,
    timeline_payload,
    timeline_report_text,
)
from richprogress.web.history_handlers import history_handlers
from richprogress.web.history_pages import stored_timeline

__all__ = [
    "RichProgressStaticHandler",
    "TimelineAPIHandler",
    "TimelineTextAPIHandler",
    "default_handlers",
    "static_url",
]


class RichProgressStaticHandler(web.StaticFileHandler):
    """Serve ``static/``. One and only purpose: the page's JS and CSS.

    tornado's StaticFileHandler already caches for a long time when ``v`` is in the query.
    """

    def validate_absolute_path(self, root: str, absolute_path: str) -> str | None:
        # A NUL byte (``%00`` in the URL) makes os.path.realpath raise inside tornado: a 500
        # and a traceback in the hub log for every probe. No file of ours has one: 404.
        if "\0" in absolute_path:
            raise web.HTTPError(404)
        return super().validate_absolute_path(root, absolute_path)

    def set_extra_headers(self, path: str) -> None:
        # The module is loaded with type="module"; nosniff keeps browsers strict about it.
        self.set_header("X-Content-Type-Options", "nosniff")


class TimelineAPIHandler(APIHandler):
    """The spawn timeline of one server. One and only purpose: read it, as JSON or text."""

    #: the answer when no ``format`` argument is given
    default_format = "json"

    @needs_scope("read:servers")
    async def get(self, user_name: str, server_name: str = "") -> None:
        user = self.find_user(user_name)
        if user is None:
            raise web.HTTPError(404, "No such user")
        if server_name not in user.spawners:
            raise web.HTTPError(404, "No such server")
        spawner = user.spawners[server_name]
        timeline = getattr(spawner, "spawn_timeline", None)
        if timeline is None:  # replaced spawner, or a hub restart: the last stored spawn
            timeline = await self._stored(user, server_name)
        if timeline is None:
            raise web.HTTPError(404, "No spawn timeline for this server")
        self.set_header("Cache-Control", "no-cache")
        # Both forms quote event text (an image name may hold "<img onerror=...>"): a browser
        # must never sniff them as HTML.
        self.set_header("X-Content-Type-Options", "nosniff")
        fmt = self.get_argument("format", self.default_format)
        if fmt == "text":
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(
                timeline_report_text(
                    timeline,
                    user=user.name,
                    server_name=server_name,
                    hub_url=self._hub_url(),
                    facts=spawner_facts(spawner, timeline),
                )
            )
        elif fmt == "json":
            self.set_header("Content-Type", "application/json")
            payload = timeline_payload(timeline, spawner_facts(spawner, timeline))
            # issue 12: p50/p90 of past starts of this profile (or configured), else null
            payload["typical"] = typical_for_spawner(spawner)
            self.finish(json.dumps(payload))
        else:
            raise web.HTTPError(400, "format must be 'json' or 'text'")

    async def _stored(self, user: Any, server_name: str) -> Any:
        from richprogress.history import history_for_user

        return await history_for_user(user).run(stored_timeline, user, server_name)

    def _hub_url(self) -> str:
        return f"{self.request.protocol}://{self.request.host}{self.hub.base_url}"


class TimelineTextAPIHandler(TimelineAPIHandler):
    """``.../timeline.txt``: the plain-text report, for curl and "Copy details"."""

    default_format = "text"


_USER = r"/api/richprogress/users/([^/]+)"
_SERVER = _USER + r"/servers/([^/]*)"

#: every route richprogress adds, relative to the hub prefix (for hand wiring)
default_handlers: list[tuple[Any, ...]] = [
    (r"/" + STATIC_PREFIX + r"(.*)", RichProgressStaticHandler, {"path": paths.static_dir()}),
    (_USER + r"/timeline", TimelineAPIHandler),
    (_USER + r"/timeline\.txt", TimelineTextAPIHandler),
    (_SERVER + r"/timeline", TimelineAPIHandler),
    (_SERVER + r"/timeline\.txt", TimelineTextAPIHandler),
    # the spawn history: a server's past spawns, the admin's failures page
    *history_handlers,
]
