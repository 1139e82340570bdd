"""KubeSpawner's reflectors, with their resources indexed by the object they are about.

An ``EventIndex`` is kept in step with a KubeSpawner reflector's ``resources`` (first
list, relist and every watch update), so a spawn can subscribe to its own pod's and PVC's
events instead of scanning the namespace. KubeSpawner's own list
and watch code is used unchanged; only the ``resources`` dict is wrapped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubespawner.reflector import ResourceReflector
from kubespawner.spawner import EventReflector, PodReflector

from richprogress.kube.event_index import POD, EventIndex, IndexedResources, ObjectWatchers


class _IndexedReflectorMixin(ResourceReflector):
    """Keep ``self.index`` in step with ``self.resources`` (list, relist and watch)."""

    index: EventIndex

    def _make_index(self) -> EventIndex:
        return EventIndex()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.index = self._make_index()
        self.resources = IndexedResources(self.index, dict(self.resources or {}))  # type: ignore[has-type]

    def adopt(self, fresh: Mapping[str, Any]) -> None:
        """Take a freshly listed ``resources`` dict: index it and wrap it."""
        if not isinstance(fresh, IndexedResources):
            self.index.replace_all(fresh)
            self.resources = IndexedResources(self.index, fresh)

    async def _list_and_update(self, resource_version: Any = None) -> Any:
        version = await super()._list_and_update(resource_version)
        # the stock code assigned a fresh plain dict; wrap it before anything can await,
        # so no watch update can slip past the index
        self.adopt(self.resources)
        return version


class IndexedEventReflector(_IndexedReflectorMixin, EventReflector):
    """KubeSpawner's events reflector, with its events indexed by involved object."""


class IndexedPodReflector(_IndexedReflectorMixin, PodReflector):
    """KubeSpawner's pods reflector, waking waiters when their pod changes."""

    def _make_index(self) -> EventIndex:
        return ObjectWatchers(POD)
