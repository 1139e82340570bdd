"""One stored Event, read and written as ``events.k8s.io/v1`` as well as ``core/v1``.

A real API server keeps one object per event and converts it for each group it serves:
``regarding`` is ``involvedObject``, ``note`` is ``message``, ``reportingController`` is
``reportingComponent``, and the legacy fields live on as ``deprecatedSource``,
``deprecatedFirstTimestamp``, ``deprecatedLastTimestamp`` and ``deprecatedCount``
(Kubernetes v1.31, ``pkg/apis/events/v1/conversion.go``). The same names and no others.
"""

from __future__ import annotations

from typing import Any

from .store import Obj

API_VERSION = "events.k8s.io/v1"
GROUP, VERSION = API_VERSION.split("/")

# events.k8s.io/v1 field -> core/v1 field, for the fields that are only renamed
_RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
# fields both versions share under one name
_SHARED = ("metadata", "eventTime", "series", "related", "action", "reason", "reportingInstance", "type")


def to_events_v1(event: Obj) -> Obj:
    """The stored core/v1 Event as events.k8s.io/v1 serves it."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": API_VERSION}
    for name in _SHARED:
        if event.get(name) is not None:
            out[name] = event[name]
    for new, old in _RENAMED.items():
        value = event.get(old)
        if value not in (None, {}, ""):
            out[new] = value
    return out


def to_core(event: Obj) -> Obj:
    """An events.k8s.io/v1 Event (as POSTed) in the core/v1 form the store keeps."""
    out: dict[str, Any] = {"kind": "Event", "apiVersion": "v1"}
    for name in _SHARED:
        if name in event:
            out[name] = event[name]
    for new, old in _RENAMED.items():
        if new in event:
            out[old] = event[new]
    out.setdefault("involvedObject", {})
    out.setdefault("source", {})
    # core/v1 readers expect these keys to be present, null when unset
    for name in ("firstTimestamp", "lastTimestamp", "eventTime"):
        out.setdefault(name, None)
    return out
