"""Kubernetes label and field selectors, parsed and matched the way the API server does.

Only what list/watch callers send: label selectors (``a=b,c!=d,e,!f,g in (x,y),h notin (z)``)
and field selectors (``involvedObject.kind=Pod,metadata.name!=x``) over dotted paths.
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


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return ""
        value = value.get(part)
    # The API server compares fields as strings; a missing field is "".
    return "" if value is None else str(value)


def parse_field_selector(selector: str | None) -> Matcher:
    """Return a predicate over dotted object fields; empty selectors match all."""
    checks: list[tuple[str, bool, str]] = []
    for term in _split_terms(selector or ""):
        m = _EQ_TERM.match(term)
        if not m:
            raise SelectorError(f"invalid field selector: {term!r}")
        checks.append((m["key"], m["op"] == "!=", m["value"]))

    def matches(obj: Mapping[str, Any]) -> bool:
        return all(
            (_field_value(obj, path) != value) if negate else (_field_value(obj, path) == value)
            for path, negate, value in checks
        )

    return matches
