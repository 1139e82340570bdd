"""The pages and endpoints: tornado handlers, the template variable, and the views that
turn timelines and stored spawns into what the templates and the JSON show.

For wiring by hand (``richprogress.setup`` does it all): append ``default_handlers`` to
``c.JupyterHub.extra_handlers`` and put ``template_helpers`` in
``c.JupyterHub.template_vars`` as ``richprogress``.

The routes, relative to the hub prefix (``{base_url}hub/``):

``GET richprogress/static/{path}``
    ``static/`` (the pages' ES modules and stylesheet), see ``static``.
``GET api/richprogress/users/{user}/timeline``
``GET api/richprogress/users/{user}/servers/{server_name}/timeline``
``GET api/richprogress/users/{user}/timeline.txt``
``GET api/richprogress/users/{user}/servers/{server_name}/timeline.txt``
    A server's spawn timeline as JSON, or its plain-text report, see ``api``.
``GET api/richprogress/users/{user}/spawns``
``GET api/richprogress/users/{user}/servers/{server_name}/spawns``
    A server's finished spawns, newest first (paginated).
``GET api/richprogress/users/{user}/spawns/{id}``
``GET api/richprogress/users/{user}/servers/{server_name}/spawns/{id}``
    One stored spawn, as the timeline JSON.
``GET richprogress/failed/{user}``, ``richprogress/failed/{user}/{server_name}``
    A server's failure page from its last stored spawn, see ``pages``.
``GET richprogress/failures``
    The admin's page of recent failed spawns.

The modules, top down: ``pages``, ``api`` and ``static`` (the handlers) and
``template_vars`` (the template variable) use ``views`` (plain data), which uses ``urls``,
which uses ``paths`` (where the files are).
"""

from __future__ import annotations

from typing import Any

from richprogress.web import api, pages, static
from richprogress.web.template_vars import template_helpers

#: every route richprogress adds, relative to the hub prefix (for hand wiring); none of
#: them overlaps another, so their order does not decide which handler answers
default_handlers: list[tuple[Any, ...]] = [
    *static.default_handlers,
    *api.default_handlers,
    *pages.default_handlers,
]

__all__ = ["default_handlers", "template_helpers"]
