"""``richprogress.setup(c)``: enable richprogress's pages from ``jupyterhub_config.py``.

One call does four things, and each piece is exported for people who wire by hand:

- puts ``template_path()`` first in ``c.JupyterHub.template_paths`` (our
  ``spawn_pending.html`` and ``not_running.html`` extend the stock ones), and
  ``notice_template_path()`` last (our ``home.html`` and ``spawn.html``, which a hub's
  own versions override);
- appends ``richprogress.web.default_handlers`` to ``c.JupyterHub.extra_handlers``;
- adds the ``richprogress`` template variable (``richprogress.web.template_helpers``) to
  ``c.JupyterHub.template_vars``, whose value also checks every richprogress setting when
  JupyterHub loads the config: a bad one stops the hub at start, in one line naming the
  setting, its value and what is allowed (``richprogress.settings_check``);
- subscribes the spawn history to spawn endings (``richprogress.history.enable()``).

Calling it twice changes nothing the second time.

About ``extra_handlers``: JupyterHub 3.1 deprecated it ("please use JupyterHub services"),
and JupyterHub 6.1 still logs a warning at start when it is set. It still works, and it is
the only way to serve routes from the hub process itself, which our timeline endpoint
needs (it reads the spawner's in-memory timeline). A service could not see that timeline.
So expect one line in the hub log::

    JupyterHub.extra_handlers is deprecated in JupyterHub 3.1. Please use JupyterHub
    services to register additional HTTP endpoints.

The pages work without the handlers except for the cache-busted static URLs, so if a
future JupyterHub drops ``extra_handlers``, only that line of ``setup`` needs replacing.
"""

from __future__ import annotations

import os
from typing import Any

from traitlets.config import Config, LazyConfigValue

from richprogress import history
from richprogress.settings_check import CheckedTemplateVars
from richprogress.stream import spawn_end
from richprogress.typical import cache as typical_cache
from richprogress.web import default_handlers, paths, template_helpers

#: the template variable our templates read
TEMPLATE_VAR = "richprogress"


def template_path() -> str:
    """The folder to put first in ``c.JupyterHub.template_paths``."""
    return paths.template_dir()


def notice_template_path() -> str:
    """The folder to put last in ``c.JupyterHub.template_paths``: our ``home.html`` and
    ``spawn.html`` (the spawn history's one-line notice). Last, so that a hub's own
    versions of these pages, or another extension's (jupyterhub-fancy-profiles ships a
    ``spawn.html``), win over ours."""
    return os.path.join(paths.template_dir(), "notices")


def _current_list(value: Any) -> list[Any]:
    """What a list option holds so far, without resolving it.

    An unset list option in a Config is a LazyConfigValue recording prepends and appends.
    Its ``get_value`` caches its result and would swallow every later change, so read the
    recorded operations instead.
    """
    if isinstance(value, LazyConfigValue):
        ops = value.to_dict()
        # to_dict() leaves out the inserts when there are prepends (traitlets 5): read them
        inserts = getattr(value, "_inserts", None) or ops.get("inserts", [])
        inserted = [item for _, item in inserts]
        return [*ops.get("prepend", []), *inserted, *ops.get("extend", [])]
    return list(value)


def setup(c: Config) -> None:
    """Enable richprogress's templates, handlers and template variable on a hub config."""
    hub = c.JupyterHub
    ours = template_path()

    template_paths = hub.template_paths
    notices = notice_template_path()
    if isinstance(template_paths, LazyConfigValue):
        if ours not in _current_list(template_paths):
            template_paths.prepend([ours])
        if notices not in _current_list(template_paths):
            # the option's default is [JupyterHub's own folder]; insert before its last
            # entry, so that ours comes before the stock pages and after any other folder
            template_paths.insert(-1, notices)
    else:
        rest = [p for p in template_paths if p not in (ours, notices)]
        hub.template_paths = [ours, *rest, notices]

    extra = hub.extra_handlers
    known = {route[0] for route in _current_list(extra)}
    missing = [route for route in default_handlers if route[0] not in known]
    if missing:
        if isinstance(extra, LazyConfigValue):
            extra.extend(missing)
        else:
            hub.extra_handlers = list(extra) + missing

    # template_vars also carries the check of every richprogress setting, run when JupyterHub
    # loads the config (after the whole file ran): a bad setting stops the hub at start
    template_vars = hub.template_vars
    if isinstance(template_vars, CheckedTemplateVars):
        template_vars.update({TEMPLATE_VAR: template_helpers})
    else:
        checked = CheckedTemplateVars(c)
        if isinstance(template_vars, LazyConfigValue):
            checked.update(template_vars.to_dict().get("update") or {})
        else:
            checked.update(template_vars)
        checked.update({TEMPLATE_VAR: template_helpers})
        hub.template_vars = checked

    # keep every finished spawn in the spawn history (c.SpawnHistory)
    history.enable()

    # register the richprogress_* metrics at hub start (not at the first spawn's end), so
    # /hub/metrics lists them and counters start at 0; then count each spawn that ends
    try:
        from richprogress import metrics
    except ImportError:  # prometheus_client comes with JupyterHub; the CLI alone lacks it
        return
    metrics.default_metrics()
    history.count_errors_with(metrics.count_store_error)
    history.count_spool_with(metrics.count_spool_event)
    spawn_end.subscribe(metrics.on_spawn_end)
    spawn_end.subscribe(typical_cache.on_spawn_end)
