"""Spawn history: finished spawns kept in a database, so a failure's story outlives its spawner.

- ``SpawnHistory`` (``store``): the store, configured as ``c.SpawnHistory``; made of
  ``database`` (the engine and its outages), ``writer`` (the writer thread, retention),
  ``memory`` (spawns not yet written) and ``reads`` (the queries).
- ``rows``: a stored spawn's shapes (snapshot, row, summary, rebuilt timeline).
- ``spawn_facts`` (``facts``): namespace, pod, node, images, resources, profile of a spawn.
- ``schema``: the tables and their version (how upgrades work is told there).
- ``enable()``: subscribe the store to spawn endings (``richprogress.stream.spawn_end``);
  ``richprogress.setup(c)`` calls it.
- ``history_for(config)`` / ``history_for_user(user)``: the hub's one store, for the pages.

Nothing in the formatter, the diagnosis or the timeline imports this package.
"""

from __future__ import annotations

import logging
from typing import Any

from traitlets.config import Config

from richprogress.history.database import count_errors_with
from richprogress.history.facts import SpawnFacts, spawn_facts
from richprogress.history.store import SpawnHistory, timeline_of
from richprogress.stream.spawn_end import SpawnEnd, subscribe

__all__ = [
    "SpawnFacts",
    "SpawnHistory",
    "count_errors_with",
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
    _current = (config, store)
    return store


def history_for_user(user: Any) -> SpawnHistory:
    """The store, found from a JupyterHub ``User`` (its tornado settings hold the config)."""
    settings = getattr(user, "settings", None)
    config = settings.get("config") if isinstance(settings, dict) else None
    log = getattr(user, "log", None)
    return history_for(config, log if isinstance(log, logging.Logger) else None)


def _on_spawn_end(end: SpawnEnd) -> None:
    log = getattr(end.spawner, "log", None)
    history_for(getattr(end.spawner, "config", None), log if isinstance(log, logging.Logger) else None).record(end)


def typical_loader() -> list[dict[str, Any]]:
    """The typical-time cache's loader: the store's ready spawns within the cache's window,
    the newest ``max_samples`` per profile (``SpawnHistory.typical_summaries``). The cache
    calls it once, on a thread of its own, at the hub's first use of typical times."""
    from richprogress.model.times import utcnow
    from richprogress.typical.cache import default_cache

    settings = default_cache().settings
    store = history_for(settings.config if settings.config else None)
    return store.typical_summaries(utcnow() - settings.window, settings.max_samples)


def enable() -> None:
    """Keep every finished spawn from now on, and load typical start times from the kept
    ones (subscribing twice is harmless)."""
    from richprogress.typical.cache import default_cache

    subscribe(_on_spawn_end)
    cache = default_cache()
    if cache.loader is None:
        cache.loader = typical_loader
