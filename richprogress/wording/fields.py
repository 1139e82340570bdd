"""Turn one Kubernetes (or custom) event dict into plain, trusted fields.

Reads whatever dict we are given (a core/v1 Event as the API returns it, kubespawner's
custom ``{"message": ...}`` events, or junk) once, into a ``Reading``: the raw values the
formatter's record cache looks records up by, and from them a ``Fields`` tuple of plain
values: strings are ``str`` (never None, never holding lone surrogates), timestamps are
ISO 8601 UTC ending in ``Z``, the count is an int >= 1, and what looks like a secret in
the message is redacted (``wording.redaction``). It never raises.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from richprogress.model.display import clean_str
from richprogress.model.times import iso_utc, iso_z_match
from richprogress.wording.redaction import redact

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

#: What client-go's event recorder (tools/record, EventAggregator) puts before the newest
#: message when more than 10 events of one source, object, type and reason with different
#: messages came within 10 minutes. The rest is an ordinary message: it is read and worded
#: without the prefix (``Fields.combined`` keeps that it was merged).
COMBINED_PREFIX = "(combined from similar events): "

_CONTAINER_RE = re.compile(r"spec\.(?:initContainers|containers|ephemeralContainers)\{([^}]*)\}")


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
    # Kubernetes merged similar events into this one (COMBINED_PREFIX, taken off the message)
    combined: bool = False


def digest_id(*parts: str | None) -> str:
    """A stable id for an event without ``metadata.uid``: a digest of identifying fields."""
    joined = "\x1f".join(part or "" for part in parts)
    return "d-" + hashlib.blake2b(joined.encode("utf-8", "replace"), digest_size=10).hexdigest()


_NO_DICT: dict[str, Any] = {}
_new_tuple = tuple.__new__
_CONTAINERS: dict[str, str | None] = {}  # fieldPath -> container name, bounded below


def _as_dict(value: Any) -> dict[str, Any]:
    """``value`` as a dict to read from; an empty one if it is not a mapping."""
    if type(value) is dict:
        return value
    if isinstance(value, Mapping):
        try:
            return dict(value)
        except Exception:  # a hostile Mapping: treat it as empty
            return _NO_DICT
    return _NO_DICT


def _text(value: Any) -> str:
    """``value`` as clean text; "" when missing or not text. Fast path for plain ASCII."""
    if type(value) is str and value.isascii():
        return value
    if value is None:
        return ""
    return clean_str(value) or ""


# Converted timestamps, by the exact string received. Events of one spawn share a handful of
# seconds and the same string arrives again with every repeat, so most conversions are a
# dict hit instead of a regex match. Bounded: it starts over when full.
_TIMES: dict[str, str | None] = {}
_TIMES_LIMIT = 4096


def _time(value: Any) -> str | None:
    if type(value) is str:
        try:
            return _TIMES[value]
        except KeyError:
            pass
        converted = value if iso_z_match(value) else iso_utc(value)
        if len(value) <= 64:  # junk can be long; only time-shaped strings are kept
            if len(_TIMES) >= _TIMES_LIMIT:
                _TIMES.clear()
            _TIMES[value] = converted
        return converted
    return iso_utc(value)


def _times(
    get: Any, series: dict[str, Any], metadata: dict[str, Any]
) -> tuple[str | None, str | None]:
    """(timestamp, first_timestamp) of an event: the last time is series.lastObservedTime,
    else lastTimestamp, eventTime, firstTimestamp; the first is firstTimestamp, else
    eventTime; creationTimestamp stands in for either when nothing else is set."""
    # Each present time is converted once (first and last are often the same string);
    # creationTimestamp only when nothing else is set.
    # A cached str is looked up inline (a call costs more than the lookup); _time does the rest.
    raw_last = get("lastTimestamp")
    if raw_last is None:
        last_ts = None
    elif type(raw_last) is str and raw_last in _TIMES:
        last_ts = _TIMES[raw_last]
    else:
        last_ts = _time(raw_last)
    raw_first = get("firstTimestamp")
    if raw_first is None:
        first_ts = None
    elif raw_first == raw_last:
        first_ts = last_ts
    else:
        first_ts = _time(raw_first)
    event_time = get("eventTime")
    if event_time is not None:
        if type(event_time) is str and event_time in _TIMES:
            event_time = _TIMES[event_time]
        else:
            event_time = _time(event_time)
    observed = series.get("lastObservedTime") if series else None
    if observed is not None:
        observed = _time(observed)
    timestamp = observed or last_ts or event_time or first_ts
    first_timestamp = first_ts or event_time
    if timestamp is None or first_timestamp is None:
        created = _time(metadata.get("creationTimestamp"))
        timestamp = timestamp or created
        first_timestamp = first_timestamp or created or timestamp
    return timestamp, first_timestamp


#: The largest count a record carries: the largest integer JavaScript's JSON.parse keeps
#: exact. A count of 10**400 (junk or hostile) would read as Infinity in the browser.
MAX_COUNT = 2**53 - 1


def _count(count: Any, series: dict[str, Any]) -> int:
    if type(count) is not int or count < 1:
        count = series.get("count") if series else None
        if type(count) is not int or count < 1:
            count = 1
    return count if count <= MAX_COUNT else MAX_COUNT


#: One read of an event: ``(key, name, id, timestamp, first_timestamp, occurrences,
#: careful)``, what the formatter's record cache looks it up by, and what the fields of its
#: record are made from (``clean``), so that the event is read only once.
#:
#: ``key`` holds the event's *raw* values of every field that the record's wording depends
#: on, except the involved object's ``name`` (kept apart, raw, as the formatter decides
#: whether its rules read it): message, type, reason, kind, namespace, fieldPath,
#: reportingComponent and, without one, source.component. Two events with equal keys get
#: the same wording, because a key is only ever kept when ``clean`` says its values are all
#: ``str`` or None, and nothing JSON can hold is equal to a str or None without being one.
#: ``key`` is None for an unusual event (not a plain dict, no plain ``metadata.uid``, a name
#: that is not plain ASCII, ...): that one is read the careful way into ``careful`` at once,
#: and its record is not cached. The rest are the values a repeat changes, as ``Fields``
#: has them. A plain tuple, not a NamedTuple: one is built for every event, and a
#: NamedTuple costs three times as much to build.
Reading = tuple[tuple[Any, ...] | None, Any, str, str | None, str | None, int, Fields | None]


def clean(reading: Reading) -> tuple[Fields, bool]:
    """The ``Fields`` of a reading, and whether its key may be kept (every value plain)."""
    key, name, uid, timestamp, first_timestamp, count, careful = reading
    if careful is not None:
        return careful, False
    # key is None only beside careful fields
    return _clean(key, name, uid, timestamp, first_timestamp, count)  # type: ignore[arg-type]


def read_event(event: Any) -> Reading:
    """Read ``event`` once. Never raises, whatever ``event`` is.

    This runs for every event on every progress stream, and most events have been seen
    before (a repeat, another page), so a plain core/v1 Event dict is only looked at here:
    its values are cleaned by ``clean`` when its record is not cached. Anything
    unusual is read the careful way (other mappings copied to a dict first).
    """
    if type(event) is not dict:
        return _read_carefully(event)
    get = event.get
    involved = get("involvedObject")
    metadata = get("metadata")
    if type(involved) is not dict or type(metadata) is not dict:
        return _read_carefully(event)
    uid = metadata.get("uid")
    if type(uid) is not str or not uid or not uid.isascii():
        return _read_carefully(event)
    iget = involved.get
    name = iget("name")
    # the name goes into a cached record as it is: only plain ASCII may
    if name is not None and (type(name) is not str or not name.isascii()):
        return _read_carefully(event)
    series = get("series")
    if series is None:
        series = _NO_DICT
    elif type(series) is not dict:
        return _read_carefully(event)
    component = get("reportingComponent")
    if type(component) is str and component:
        source_component = None
    else:
        source = get("source")
        if type(source) is dict:
            source_component = source.get("component")
        else:
            source_component = None if source is None else _as_dict(source).get("component")
    key = (
        get("message"),
        get("type"),
        get("reason"),
        iget("kind"),
        iget("namespace"),
        iget("fieldPath"),
        component,
        source_component,
    )
    timestamp, first_timestamp = _times(get, series, metadata)
    count = get("count")
    if type(count) is not int or count < 1 or count > MAX_COUNT:
        count = _count(count, series)
    return key, name, uid, timestamp, first_timestamp, count, None


def _read_carefully(event: Any) -> Reading:
    """``read_event`` for anything that is not a plain Event dict: every value checked."""
    event = _as_dict(event)
    get = event.get
    involved = _as_dict(get("involvedObject"))
    metadata = _as_dict(get("metadata"))
    series = get("series")
    series = _as_dict(series) if series is not None else _NO_DICT
    component = get("reportingComponent")
    source_component = (
        None if type(component) is str and component else _as_dict(get("source")).get("component")
    )
    key = (
        get("message"),
        get("type"),
        get("reason"),
        involved.get("kind"),
        involved.get("namespace"),
        involved.get("fieldPath"),
        component,
        source_component,
    )
    timestamp, first_timestamp = _times(get, series, metadata)
    uid = _text(metadata.get("uid"))
    fields = _clean(
        key, involved.get("name"), uid, timestamp, first_timestamp, _count(get("count"), series)
    )[0]
    if not uid:
        # Only fields that stay the same when the event repeats (count and last time change).
        uid = digest_id(
            _text(metadata.get("namespace")),
            _text(metadata.get("name")),
            _text(involved.get("uid")),
            fields.kind,
            fields.name,
            fields.field_path,
            fields.reason,
            fields.type,
            fields.raw_message,
            fields.first_timestamp,
        )
        fields = fields._replace(id=uid)
    return None, fields.name, uid, timestamp, first_timestamp, fields.occurrences, fields


def normalize_event(event: Any) -> Fields:
    """Read ``event`` into ``Fields``. Never raises, whatever ``event`` is."""
    return clean(read_event(event))[0]


def _container(field_path: str) -> str | None:
    container = _CONTAINERS.get(field_path, "")
    if container == "":
        found = _CONTAINER_RE.match(field_path)
        container = (found.group(1) or None) if found else None
        if len(_CONTAINERS) < 4096:
            _CONTAINERS[field_path] = container
    return container


def _clean(
    key: tuple[Any, ...],
    name: Any,
    uid: str,
    timestamp: str | None,
    first_timestamp: str | None,
    count: int,
) -> tuple[Fields, bool]:
    """``Fields`` from the raw values of a ``Reading``, and whether they were all plain
    (str or None). Cleans as ``_text`` does: None is "", plain ASCII is kept, other text is
    cleaned, numbers become text, anything else is ""."""
    message, type_, reason, kind, namespace, field_path, component, source_component = key
    plain = True
    # Spelled out per value: a loop or a helper call costs more than the checks.
    if type(message) is not str:
        plain = plain and message is None
        message = _text(message)
    elif not message.isascii():
        message = clean_str(message) or ""
    if type(type_) is not str:
        plain = plain and type_ is None
        type_ = _text(type_)
    elif not type_.isascii():
        type_ = clean_str(type_) or ""
    if type(reason) is not str:
        plain = plain and reason is None
        reason = _text(reason)
    elif not reason.isascii():
        reason = clean_str(reason) or ""
    if type(kind) is not str:
        plain = plain and kind is None
        kind = _text(kind)
    elif not kind.isascii():
        kind = clean_str(kind) or ""
    if type(name) is not str:
        plain = plain and name is None
        name = _text(name)
    elif not name.isascii():
        name = clean_str(name) or ""
    if type(namespace) is not str:
        plain = plain and namespace is None
        namespace = _text(namespace)
    elif not namespace.isascii():
        namespace = clean_str(namespace) or ""
    if type(field_path) is not str:
        plain = plain and field_path is None
        field_path = _text(field_path)
    elif not field_path.isascii():
        field_path = clean_str(field_path) or ""
    if type(component) is not str:
        plain = plain and component is None
        component = _text(component)
    elif not component.isascii():
        component = clean_str(component) or ""
    if type(source_component) is not str:
        plain = plain and source_component is None
        if not component:
            component = _text(source_component)
    elif not component:
        component = (
            source_component if source_component.isascii() else clean_str(source_component) or ""
        )
    container = _container(field_path) if field_path else None
    type_ = type_ or "Custom"
    combined = message.startswith(COMBINED_PREFIX)
    if combined:
        message = message[len(COMBINED_PREFIX) :]
    # every viewer of the timeline reads it, and a kubelet hook's error quotes the hook's
    # output: secrets out before any rule, record, page or store sees it
    message = redact(message)
    fields = _new_tuple(
        Fields,
        (
            uid,
            timestamp,
            first_timestamp,
            type_,
            reason or None,
            kind or None,
            name or None,
            container,
            field_path or None,
            component or None,
            count,
            message,
            (component, field_path, reason, message, type_, kind, name, container or "", namespace),
            combined,
        ),
    )
    return fields, plain


def normalize_message(message: Any, *, id: str | None = None, timestamp: Any = None) -> Fields:
    """``Fields`` for a progress message that is not a Kubernetes event (type ``Custom``)."""
    text = redact(clean_str(message) or "")
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
