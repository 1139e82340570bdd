"""Kubernetes label and field selectors, parsed and matched the way the API server does.

Only what list/watch callers send: label selectors (``a=b,c!=d,e,!f,g in (x,y),h notin (z)``)
and field selectors (``involvedObject.kind=Pod,metadata.name!=x``) over dotted paths. A field
selector may only name the fields the real server indexes for that resource
(``FIELD_LABELS``); any other is a 400 "field label not supported: <field>", as
Kubernetes v1.31 answers (``pkg/apis/core/v1/conversion.go``, ``AddFieldLabelConversionsFor*``;
``pkg/apis/events/v1/conversion.go`` for events.k8s.io's names).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Matcher = Callable[[Mapping[str, Any]], bool]


class SelectorError(ValueError):
    """A selector the server cannot parse (answered with 400 Bad Request)."""


def _split_terms(selector: str) -> list[str]:
    # Commas inside "in (a,b)" sets do not separate terms.
    terms: list[str] = []
    depth = 0
    current = ""
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        terms.append(current.strip())
    return [term for term in terms if term]


_SET_TERM = re.compile(r"^(?P<key>[^\s!=()]+)\s+(?P<op>in|notin)\s+\((?P<values>[^)]*)\)$")
_EQ_TERM = re.compile(r"^(?P<key>[^\s!=()]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=()]*)$")
_EXISTS_TERM = re.compile(r"^(?P<neg>!?)(?P<key>[^\s!=()]+)$")


def _label_requirement(term: str) -> tuple[str, str, frozenset[str]]:
    if m := _SET_TERM.match(term):
        values = frozenset(v.strip() for v in m["values"].split(",") if v.strip())
        return m["key"], m["op"], values
    if m := _EQ_TERM.match(term):
        return m["key"], "!=" if m["op"] == "!=" else "=", frozenset([m["value"]])
    if m := _EXISTS_TERM.match(term):
        return m["key"], "!" if m["neg"] else "exists", frozenset()
    raise SelectorError(f"unable to parse requirement: {term!r}")


def _label_ok(labels: Mapping[str, str], key: str, op: str, values: frozenset[str]) -> bool:
    if op in ("in", "="):
        return labels.get(key) in values
    if op in ("notin", "!="):
        return labels.get(key) not in values
    if op == "exists":
        return key in labels
    return key not in labels  # "!key"


def parse_label_selector(selector: str | None) -> Matcher:
    """Return a predicate over an object's ``metadata.labels``; empty selectors match all."""
    requirements = [_label_requirement(term) for term in _split_terms(selector or "")]

    def matches(obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(_label_ok(labels, *requirement) for requirement in requirements)

    return matches


_META = ("metadata.name", "metadata.namespace")
_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)
#: resource -> the field selector labels its server accepts (Kubernetes v1.31; every
#: resource accepts metadata.name and metadata.namespace, custom resources only those)
FIELD_LABELS: dict[str, frozenset[str]] = {
    "pods": frozenset(
        (*_META, "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
         "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
         "status.podIPs", "status.nominatedNodeName")
    ),
    "events": frozenset((*_META, *_EVENT_FIELDS)),
    "namespaces": frozenset((*_META, "status.phase")),
    "secrets": frozenset((*_META, "type")),
    "services": frozenset((*_META, "spec.clusterIP", "spec.type")),
}
#: events.k8s.io/v1 names for the same fields of the one stored Event
EVENTS_V1_FIELDS: dict[str, str] = {
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "reason": "reason",
    "type": "type",
    "metadata.name": "metadata.name",
    "metadata.namespace": "metadata.namespace",
}
# Selectable values that are not the field at the label's own path.
_COMPUTED: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "source": lambda obj: (obj.get("source") or {}).get("component"),
    "spec.hostNetwork": lambda obj: "true" if (obj.get("spec") or {}).get("hostNetwork") else "false",
    "status.podIPs": lambda obj: ",".join(
        str(ip.get("ip", "")) for ip in (obj.get("status") or {}).get("podIPs") or []
    ),
}


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return ""
        value = value.get(part)
    # The API server compares fields as strings; a missing field is "".
    return "" if value is None else str(value)


def parse_field_selector(
    selector: str | None, resource: str | None = None, *, events_v1: bool = False
) -> Matcher:
    """Return a predicate over dotted object fields; empty selectors match all.

    With ``resource``, only that resource's ``FIELD_LABELS`` are accepted (``events_v1``:
    events.k8s.io's names, matched against the stored core/v1 fields).
    """
    checks: list[tuple[str, bool, str]] = []
    for term in _split_terms(selector or ""):
        m = _EQ_TERM.match(term)
        if not m:
            raise SelectorError(f"invalid field selector: {term!r}")
        path = m["key"]
        if events_v1:
            if path not in EVENTS_V1_FIELDS:
                raise SelectorError(f"field label not supported: {path}")
            path = EVENTS_V1_FIELDS[path]
        elif resource is not None and path not in FIELD_LABELS.get(resource, _META):
            raise SelectorError(f"field label not supported: {path}")
        checks.append((path, m["op"] == "!=", m["value"]))

    def value_of(obj: Mapping[str, Any], path: str) -> str:
        computed = _COMPUTED.get(path)
        if computed is None:
            return _field_value(obj, path)
        value = computed(obj)
        return "" if value is None else str(value)

    def matches(obj: Mapping[str, Any]) -> bool:
        return all(
            (value_of(obj, path) != value) if negate else (value_of(obj, path) == value)
            for path, negate, value in checks
        )

    return matches
