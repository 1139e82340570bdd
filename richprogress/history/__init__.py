"""Spawn history: finished spawns kept in a database, so a failure's story outlives its spawner.

- ``SpawnHistory`` (``store``): the store, configured as ``c.SpawnHistory``; made of
  ``database`` (the engine and its outages), ``writer`` (the writer thread, retention),
  ``memory`` (spawns not yet written), ``spool`` (finished spawns on local disk until the
  database has them) and ``reads`` (the queries).
- ``rows``: a stored spawn's shapes (snapshot, row, summary, rebuilt timeline).
- ``spawn_facts`` (``facts``): namespace, pod, node, images, resources, profile of a spawn.
- ``schema``: the tables and their version (how upgrades work is told there).
- ``enable()``: subscribe the store to spawn endings (``richprogress.stream.spawn_end``),
  and open the store once the hub has started, so the spawns a previous run left in the
  spool are stored without waiting for a page to ask; ``richprogress.setup(c)`` calls it.
- ``history_for(config)`` / ``history_for_user(user)``: the hub's one store, for the pages;
  closed when the process exits (the hub stopped), within ``writer.STOP_SECONDS``, which
  cuts the spool once the database holds every spawn in it.

Nothing in the formatter, the diagnosis or the timeline imports this package.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
from typing import Any

from traitlets.config import Config

from richprogress.history.database import count_errors_with
from richprogress.history.facts import SpawnFacts, spawn_facts
from richprogress.history.spool import count_spool_with
from richprogress.history.store import SpawnHistory, timeline_of
from richprogress.stream.spawn_end import SpawnEnd, subscribe

__all__ = [
    "SpawnFacts",
    "SpawnHistory",
    "count_errors_with",
    "count_spool_with",
    "enable",
    "history_for",
    "history_for_user",
    "spawn_facts",
    "timeline_of",
]

#: the store of the hub's configuration: one slot, as a hub has one config object
_current: tuple[Any, SpawnHistory] | None = None


def history_for(config: Any = None, log: logging.Logger | None = None) -> SpawnHistory:
    """The store configured by ``config`` (a hub's ``c``); made on first use, then shared."""
    global _current
    if _current is not None and (config is None or _current[0] is config):
        return _current[1]
    cfg = config if isinstance(config, Config) else Config()
    store = SpawnHistory(config=cfg, log=log or logging.getLogger("JupyterHub"))
    if _current is not None:
        _current[1].close()
    else:  # the first store: whichever is current then is closed as the process exits
        atexit.register(_close_at_exit)
    _current = (config, store)
    return store


def _close_at_exit() -> None:
    """Close the hub's store as the process exits (after JupyterHub's own shutdown): the
    queued writes get a bounded time, and the spool is cut when the database holds all."""
    if _current is not None:
        _current[1].close()


def history_for_user(user: Any) -> SpawnHistory:
    """The store, found from a JupyterHub ``User`` (its tornado settings hold the config)."""
    settings = getattr(user, "settings", None)
    config = settings.get("config") if isinstance(settings, dict) else None
    log = getattr(user, "log", None)
    return history_for(config, log if isinstance(log, logging.Logger) else None)


def _on_spawn_end(end: SpawnEnd) -> None:
    log = getattr(end.spawner, "log", None)
    history_for(
        getattr(end.spawner, "config", None), log if isinstance(log, logging.Logger) else None
    ).record(end)


def typical_loader() -> list[dict[str, Any]]:
    """The typical-time cache's loader: the store's ready spawns within the cache's window,
    the newest ``max_samples`` per profile (``SpawnHistory.typical_summaries``). The cache
    calls it once, on a thread of its own, at the hub's first use of typical times."""
    from richprogress.model.times import utcnow
    from richprogress.typical.cache import default_cache

    settings = default_cache().settings
    store = history_for(settings.config if settings.config else None)
    return store.typical_summaries(utcnow() - settings.window, settings.max_samples)


#: how often, and how many times, to look whether the hub has finished starting
_START_EVERY = 1.0
_START_TRIES = 120


def _open_when_started(tries: int = _START_TRIES) -> None:
    """Open the store of the running hub's configuration (the object its pages read, in
    its tornado settings) once the hub has made them; look again a second later until."""
    try:
        from jupyterhub.app import JupyterHub

        app = JupyterHub.instance() if JupyterHub.initialized() else None
        application = getattr(app, "tornado_application", None)
        config = application.settings.get("config") if application is not None else None
        if config is not None:
            history_for(config, getattr(app, "log", None))
            return
    except Exception:
        logging.getLogger("JupyterHub").exception(
            "richprogress: could not open the spawn history at start"
        )
        return
    if tries > 0:
        asyncio.get_running_loop().call_later(_START_EVERY, _open_when_started, tries - 1)


def enable() -> None:
    """Keep every finished spawn from now on, and load typical start times from the kept
    ones (subscribing twice is harmless). In a hub (an event loop runs while its config
    loads), the store is opened once the hub has started: the spool's spawns are stored
    then, not at the first page."""
    from richprogress.typical.cache import default_cache

    subscribe(_on_spawn_end)
    cache = default_cache()
    if cache.loader is None:
        cache.loader = typical_loader
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not in a hub: a script or a test opens the store itself
        return
    loop.call_later(_START_EVERY, _open_when_started)
