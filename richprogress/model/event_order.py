"""The order in which events that come together are handed to a spawn: oldest first.

A sort key for events. Several events reach a spawn at once after a
relist (a list comes sorted by name, random for events), when the spawn subscribes, and
when events held until the new pod is known are released. They must reach the page in
the order they happened.

Times alone cannot give that order within one second. The kubelet writes whole seconds
(``lastTimestamp: "...T17:00:04Z"``), the scheduler microseconds (``eventTime:
"...T17:00:04.843441Z"``), so a kubelet "04Z" may come after the scheduler's "04.84".
Events are therefore compared by the whole second, then by ``resourceVersion``, the API
server's order of writes. It is a number in practice (the etcd revision) but opaque by
contract, so it is only a tie-break: a value that is not a plain number ranks as 0, and
the sort, being stable, then keeps the order the events came in.
No Kubernetes or JupyterHub import here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any


def resource_version_number(event: Mapping[str, Any]) -> int:
    """The event's ``metadata.resourceVersion`` as a number, or 0 if it is not a plain one."""
    metadata = event.get("metadata")
    version = metadata.get("resourceVersion") if isinstance(metadata, Mapping) else None
    if type(version) is str and version.isascii() and version.isdigit():
        return int(version)
    return 0


def whole_second(value: Any) -> str:
    """An RFC 3339 time cut to its whole second (``"2026-11-30T17:00:04"``), or ``""``."""
    return str(value)[:19] if value else ""


def last_seen_order(event: Mapping[str, Any]) -> tuple[str, int]:
    """Sort key: by when the event last happened (the time stock KubeSpawner sorts by),
    to the second, then by the API server's order of writes."""
    return (whole_second(event.get("lastTimestamp") or event.get("eventTime")), resource_version_number(event))


def first_seen_order(first: datetime, event: Mapping[str, Any]) -> tuple[datetime, int]:
    """Sort key from an already parsed first time: to the second, then by write order."""
    return (first.replace(microsecond=0), resource_version_number(event))
