"""Turn one Kubernetes (or custom) event dict into plain, trusted fields.

One and only purpose: read whatever dict we are given (a core/v1 Event as the API returns it,
kubespawner's custom ``{"message": ...}`` events, or junk) and return a ``Fields`` tuple of
plain values: strings are ``str`` (never None, never holding lone surrogates), timestamps are
ISO 8601 UTC ending in ``Z``, the count is an int >= 1. It never raises.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

# Index of each rule match field inside ``Fields.match_values``. Rules compile their
# patterns against these indexes once, so matching reads a tuple instead of a dict.
MATCH_FIELDS: tuple[str, ...] = (
    "reportingComponent",
    "fieldPath",
    "reason",
    "message",
    "type",
    "kind",
    "name",
    "container",
    "namespace",
)
MATCH_INDEX: dict[str, int] = {name: i for i, name in enumerate(MATCH_FIELDS)}

_CONTAINER_RE = re.compile(r"spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]*)\}")
# A timestamp already in the shape we emit: kept as it is (the fast, common path).
_ISO_Z_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z\Z")


class Fields(NamedTuple):
    """Everything the formatter needs from one event, already cleaned."""

    id: str
    timestamp: str | None
    first_timestamp: str | None
    type: str
    reason: str | None
    kind: str | None
    name: str | None
    container: str | None
    field_path: str | None
    component: str | None
    occurrences: int  # the event's count (named so to not shadow tuple.count)
    raw_message: str
    # Values the rules match against, in MATCH_FIELDS order; missing values are "".
    match_values: tuple[str, ...]


def clean_str(value: Any) -> str | None:
    """Return ``value`` as a str safe to encode as UTF-8, or None if it is not text.

    Numbers are accepted (some producers send them); containers and other objects are not,
    because their repr would be a misleading message.
    """
    if isinstance(value, str):
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates (from broken producers) cannot be sent over SSE or JSON-encoded
            # as UTF-8; replace them rather than fail later, far away from here.
            return value.encode("utf-8", "replace").decode("utf-8")
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    return None


def _get(mapping: Any, key: str) -> Any:
    if isinstance(mapping, Mapping):
        try:
            return mapping.get(key)
        except Exception:  # a hostile Mapping; treat as missing
            return None
    return None


def iso_utc(value: Any) -> str | None:
    """Return ``value`` (str or datetime) as ISO 8601 UTC ending in ``Z``; None if unusable."""
    if isinstance(value, str):
        if _ISO_Z_RE.match(value):
            return value
        text = clean_str(value)
        if not text or len(text) > 64:
            return None
        try:
            parsed = _dt.datetime.fromisoformat(text.strip())
        except ValueError:
            return None
        value = parsed
    if isinstance(value, _dt.datetime):
        try:
            if value.tzinfo is None:
                # Kubernetes times are UTC; a naive datetime came from a client that dropped it.
                value = value.replace(tzinfo=_dt.timezone.utc)
            value = value.astimezone(_dt.timezone.utc)
        except (OverflowError, ValueError):
            return None
        fmt = "%Y-%m-%dT%H:%M:%S.%fZ" if value.microsecond else "%Y-%m-%dT%H:%M:%SZ"
        return value.strftime(fmt)
    return None


def _first_time(*candidates: Any) -> str | None:
    for candidate in candidates:
        if candidate is not None:
            stamp = iso_utc(candidate)
            if stamp is not None:
                return stamp
    return None


def _count(event: Any, series: Any) -> int:
    for value in (_get(event, "count"), _get(series, "count")):
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
    return 1


def digest_id(*parts: str | None) -> str:
    """A stable id for an event without ``metadata.uid``: a digest of identifying fields."""
    joined = "\x1f".join(part or "" for part in parts)
    return "d-" + hashlib.blake2b(joined.encode("utf-8", "replace"), digest_size=10).hexdigest()


def normalize_event(event: Any) -> Fields:
    """Read ``event`` into ``Fields``. Never raises, whatever ``event`` is."""
    metadata = _get(event, "metadata")
    involved = _get(event, "involvedObject")
    series = _get(event, "series")
    source = _get(event, "source")

    raw_message = clean_str(_get(event, "message")) or ""
    type_ = clean_str(_get(event, "type")) or "Custom"
    reason = clean_str(_get(event, "reason")) or None
    kind = clean_str(_get(involved, "kind")) or None
    name = clean_str(_get(involved, "name")) or None
    namespace = clean_str(_get(involved, "namespace")) or None
    field_path = clean_str(_get(involved, "fieldPath")) or None
    component = (
        clean_str(_get(event, "reportingComponent"))
        or clean_str(_get(source, "component"))
        or None
    )

    container = None
    if field_path:
        found = _CONTAINER_RE.match(field_path)
        if found:
            container = found.group(1) or None

    event_time = _get(event, "eventTime")
    first_ts = _get(event, "firstTimestamp")
    created = _get(metadata, "creationTimestamp")
    timestamp = _first_time(
        _get(series, "lastObservedTime"), _get(event, "lastTimestamp"), event_time, first_ts, created
    )
    first_timestamp = _first_time(first_ts, event_time, created) or timestamp

    uid = clean_str(_get(metadata, "uid"))
    if not uid:
        # Only fields that stay the same when the event repeats (count and last time change).
        uid = digest_id(
            clean_str(_get(metadata, "namespace")),
            clean_str(_get(metadata, "name")),
            clean_str(_get(involved, "uid")),
            kind,
            name,
            field_path,
            reason,
            type_,
            raw_message,
            first_timestamp,
        )

    return Fields(
        id=uid,
        timestamp=timestamp,
        first_timestamp=first_timestamp,
        type=type_,
        reason=reason,
        kind=kind,
        name=name,
        container=container,
        field_path=field_path,
        component=component,
        occurrences=_count(event, series),
        raw_message=raw_message,
        match_values=(
            component or "",
            field_path or "",
            reason or "",
            raw_message,
            type_,
            kind or "",
            name or "",
            container or "",
            namespace or "",
        ),
    )


def normalize_message(message: Any, *, id: str | None = None, timestamp: Any = None) -> Fields:
    """``Fields`` for a progress message that is not a Kubernetes event (type ``Custom``)."""
    text = clean_str(message) or ""
    stamp = iso_utc(timestamp) if timestamp is not None else None
    ident = clean_str(id) or digest_id("custom", stamp, text)
    return Fields(
        id=ident,
        timestamp=stamp,
        first_timestamp=stamp,
        type="Custom",
        reason=None,
        kind=None,
        name=None,
        container=None,
        field_path=None,
        component=None,
        occurrences=1,
        raw_message=text,
        match_values=("", "", "", text, "Custom", "", "", "", ""),
    )
