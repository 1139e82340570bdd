"""Kubernetes Event objects as the API server returns them, and their repeats.

Two styles exist on real clusters, both read through core/v1: the kubelet's (``count``,
``firstTimestamp``/``lastTimestamp`` at second precision, ``eventTime`` null) and the
events.k8s.io recorder's used by schedulers (``eventTime`` in microseconds, both legacy
timestamps null, ``series`` on repeats). Every event carries the ``lastTimestamp`` key.
"""

from __future__ import annotations

import secrets
from typing import Any

from .store import Obj, utc_now_micros, utc_now_seconds


def build_event(
    *,
    namespace: str,
    involved: dict[str, Any],
    reason: str,
    message: str,
    event_type: str = "Normal",
    component: str = "kubelet",
    instance: str = "",
    api: str = "core",
    action: str | None = None,
) -> Obj:
    """A core/v1 Event as the API server returns it, stamped with the current time.

    ``api="core"``: the kubelet's style (count, first/lastTimestamp, ``eventTime`` null).
    ``api="events.k8s.io"``: the scheduler's style (``eventTime`` with microseconds,
    ``firstTimestamp``/``lastTimestamp`` null, no count; repeats carry ``series``).
    """
    name = f"{involved['name']}.{secrets.token_hex(8)}"
    event: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": event_type,
        "reportingComponent": component,
        "reportingInstance": instance,
    }
    if api == "events.k8s.io":
        event.update(
            {"source": {}, "firstTimestamp": None, "lastTimestamp": None, "eventTime": utc_now_micros()}
        )
        event["action"] = action or reason
    else:
        now = utc_now_seconds()
        source = {"component": component}
        if component == "kubelet" and instance:
            source["host"] = instance
        event.update(
            {
                "source": source,
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
                "eventTime": None,
            }
        )
        if action:
            event["action"] = action
    return event


def repeat_event(event: Obj) -> None:
    """Mutate a stored event into its next occurrence (same uid, count + 1)."""
    if event.get("eventTime") and event.get("lastTimestamp") is None:
        series = event.get("series") or {"count": 1}
        event["series"] = {"count": int(series["count"]) + 1, "lastObservedTime": utc_now_micros()}
    else:
        event["count"] = int(event.get("count") or 1) + 1
        event["lastTimestamp"] = utc_now_seconds()
