"""Formatting rules: validate and compile them once, then match events against them fast.

The rule engine. The rule format is kubespawner #910's
(``{"match": {field: regex}, "template": str | callable}``) with optional extensions::

    {
        "id": "image-not-found",             # else the dict key, else "rule-<index>"
        "match": {"reason": "Failed", "message": r'Failed to pull image "(?P<image>[^"]+)"'},
        "template": "The image {image} does not exist",
        "severity": "error",                 # info | warning | error (else from the type)
        "hint": "Check the image name.",      # a template too, same groups
        "phase": "image",                     # one of records.PHASE_NAMES
        "fatal": True,                        # waiting cannot fix it (fail fast)
        "show": "quiet",                      # row (default) | quiet | hidden, see records.SHOWS
    }

Semantics kept exactly from #910: each pattern is applied with ``re.match`` (anchored at the
start only) to the event's field (missing values are ""), a rule matches when all of its
fields match, the first matching rule wins, the named groups of all fields are merged (later
fields win on a name clash) with groups that did not participate given as "". A ``str``
template is rendered with ``template.format(**groups)``; a callable template is called as
``template(**groups)`` and must return a str (this is how #910 calls it, so #910 callables
work unchanged). Match fields: #910's ``reportingComponent`` (falls back to
``source.component``), ``fieldPath``, ``reason``, ``message``, ``type``, plus ours:
``kind``, ``name`` and ``namespace`` of the involved object and ``container`` (parsed from
``fieldPath``).
"""

from __future__ import annotations

import inspect
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from richprogress.model.records import PHASE_NAMES, SEVERITIES, SHOWS
from richprogress.wording.fields import MATCH_FIELDS, MATCH_INDEX
from richprogress.wording.regex_safety import backtracking_problem

RULE_KEYS = frozenset({"id", "match", "template", "severity", "hint", "phase", "description", "fatal", "show"})
# Fields with a small vocabulary in practice (reason, component, fieldPath, type, kind,
# container, namespace): rules are pre-matched on them once per combination and the result
# memoized. Only ``message`` and ``name`` (one per user) vary freely and are matched per event.
_PER_EVENT = frozenset({MATCH_INDEX["message"], MATCH_INDEX["name"]})
_KEY_FIELDS = tuple(i for i in range(len(MATCH_FIELDS)) if i not in _PER_EVENT)
# Junk input could invent new combinations forever, so the memo has a ceiling; when it is
# reached the memo starts over (still correct, and it refills with what is current).
_MEMO_LIMIT = 2048

Template = str | Callable[..., Any]
#: A rule's ``fatal``: True/False, or a callable called as ``fatal(**groups)`` -> bool.
Fatal = bool | Callable[..., Any]


class RuleError(ValueError):
    """A rule is invalid. The message names the rule (id or position) and the problem."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled rule. Build with ``load_rules``; do not mutate."""

    id: str
    match: tuple[tuple[int, re.Pattern[str]], ...]
    template: Template
    severity: str | None = None
    hint: Template | None = None
    phase: str | None = None
    groups: frozenset[str] = frozenset()
    # Waiting cannot fix the cause this rule names (see richprogress.story.fail_fast).
    fatal: Fatal = False
    # How the pages show its records (records.SHOWS): "row", or a muted "quiet" row, or
    # "hidden" (the details only). Only the pages read it; the diagnosis sees every record.
    show: str = "row"
    # Where the rule came from, for error messages, e.g. "rules[3]" or "extra_rules['x']".
    origin: str = ""
    # True when two fields define the same group name: then field order decides which value
    # wins, so RuleSet's memoized pre-matching (which reorders fields) is not used for it.
    ordered_groups: bool = field(default=False, compare=False)
    # template / hint as one-argument functions of the groups dict (see make_renderer).
    render: Callable[[Mapping[str, str]], Any] | None = field(default=None, compare=False)
    render_hint: Callable[[Mapping[str, str]], Any] | None = field(default=None, compare=False)
    # True when the rule's text is a function of its groups alone (str templates, or callables
    # we wrote): then the formatter may reuse the text it made for an identical event.
    pure: bool = field(default=False, compare=False)
    # True when render / render_hint is a %-template (see make_renderer): with the checked
    # groups (all str, every name present) it cannot fail, so it needs no guard.
    safe_render: bool = field(default=False, compare=False)
    safe_hint: bool = field(default=False, compare=False)

    @property
    def label(self) -> str:
        """How log and error messages name this rule: where it came from and its id."""
        return _describe(self.origin, self.id) if self.origin else self.id


def _describe(origin: str, rule_id: str | None) -> str:
    if rule_id and rule_id not in origin:
        return f"{origin} (id {rule_id!r})"
    return origin


def _template_fields(template: str, where: str) -> set[str]:
    """Names a str.format template refers to (including nested ones in format specs)."""
    names: set[str] = set()
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise RuleError(f"{where}: template {template!r} is not a valid format string: {exc}") from None
    for _literal, field_name, format_spec, _conversion in parsed:
        if field_name is None:
            continue
        head = re.split(r"[.\[]", field_name, maxsplit=1)[0]
        if head == "" or head.isdigit():
            raise RuleError(
                f"{where}: template {template!r} uses a positional field {{{field_name}}}; "
                "use a named group instead"
            )
        names.add(head)
        if format_spec and "{" in format_spec:
            names |= _template_fields(format_spec, where)
    return names


def make_renderer(template: Template) -> Callable[[Mapping[str, str]], Any]:
    """A function of the groups dict that renders ``template`` exactly as #910 does.

    A plain ``str.format`` template ("{a} and {b}", no conversions, specs or indexing) is
    turned into the equivalent ``%``-template once: for str values both give the same text,
    and ``%`` with a dict is faster than ``format(**groups)``. Other templates keep
    ``format``; callables are called as ``template(**groups)``.
    """
    if not isinstance(template, str):
        call = template
        return lambda groups: call(**groups)
    parts: list[str] = []
    try:
        for literal, field_name, format_spec, conversion in string.Formatter().parse(template):
            parts.append(literal.replace("%", "%%"))
            if field_name is None:
                continue
            if format_spec or conversion or not field_name.isidentifier():
                return lambda groups: template.format(**groups)
            parts.append(f"%({field_name})s")
    except ValueError:
        return lambda groups: template.format(**groups)
    return "".join(parts).__mod__


def _check_template(value: Any, key: str, groups: frozenset[str], where: str) -> Template:
    if isinstance(value, str):
        missing = _template_fields(value, where) - groups
        if missing:
            available = ", ".join(sorted(groups)) or "none"
            raise RuleError(
                f"{where}: {key} names group(s) {', '.join(sorted(missing))} that the rule's "
                f"patterns cannot produce (groups available: {available})"
            )
        return value
    if callable(value):
        try:
            signature = inspect.signature(value)
        except (TypeError, ValueError):
            return value  # builtins without a signature: trust them
        params = signature.parameters.values()
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params)
        for param in params:
            if param.default is not param.empty or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            if param.kind is param.POSITIONAL_ONLY or (param.name not in groups and not takes_any):
                raise RuleError(
                    f"{where}: callable {key} requires argument {param.name!r}, but it is "
                    f"called as {key}(**groups) with groups: {', '.join(sorted(groups)) or 'none'}"
                )
        return value
    raise RuleError(f"{where}: {key} must be a string or a callable, not {type(value).__name__}")


def _check_fatal(value: Any, groups: frozenset[str], where: str) -> Fatal:
    """A rule's ``fatal``: a bool, or a callable of the rule's groups (checked like a
    callable template)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    if callable(value):
        _check_template(value, "fatal", groups, where)
        return value
    raise RuleError(f"{where}: fatal must be true, false or a callable, not {type(value).__name__}")


def compile_rule(raw: Any, origin: str, default_id: str, *, pure_callables: bool = False) -> Rule:
    """Validate and compile one rule given as a dict (or pass a ``Rule`` through).

    ``pure_callables`` vouches that callable templates and hints return the same text for
    the same groups (true of our default rules; not assumed of anyone else's).
    """
    if isinstance(raw, Rule):
        return raw
    if not isinstance(raw, Mapping):
        raise RuleError(f"{origin}: a rule must be a dict, not {type(raw).__name__}")
    rule_id = raw.get("id", default_id)
    if not isinstance(rule_id, str) or not rule_id:
        raise RuleError(f"{origin}: 'id' must be a non-empty string, not {rule_id!r}")
    where = _describe(origin, rule_id)

    unknown = set(raw) - RULE_KEYS
    if unknown:
        raise RuleError(
            f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
            f"allowed: {', '.join(sorted(RULE_KEYS))}"
        )
    for required in ("match", "template"):
        if required not in raw:
            raise RuleError(f"{where}: missing required key {required!r}")

    match = raw["match"]
    if not isinstance(match, Mapping):
        raise RuleError(f"{where}: 'match' must be a dict of field -> regex, not {type(match).__name__}")
    compiled: list[tuple[int, re.Pattern[str]]] = []
    groups: set[str] = set()
    clash = False
    for field_name, pattern in match.items():
        if field_name not in MATCH_INDEX:
            raise RuleError(
                f"{where}: unknown match field {field_name!r}; known fields: {', '.join(MATCH_FIELDS)}"
            )
        if isinstance(pattern, re.Pattern):
            if not isinstance(pattern.pattern, str):
                raise RuleError(f"{where}: match[{field_name!r}] must be a text pattern, not bytes")
            regex = pattern
        elif isinstance(pattern, str):
            try:
                regex = re.compile(pattern)
            except re.error as exc:
                raise RuleError(
                    f"{where}: match[{field_name!r}] is not a valid regular expression "
                    f"{pattern!r}: {exc}"
                ) from None
        else:
            raise RuleError(
                f"{where}: match[{field_name!r}] must be a regex string or compiled pattern, "
                f"not {type(pattern).__name__}"
            )
        slow = backtracking_problem(regex.pattern)
        if slow:
            raise RuleError(f"{where}: match[{field_name!r}] = {regex.pattern!r} is refused: {slow}")
        names = set(regex.groupindex)
        clash = clash or bool(names & groups)
        groups |= names
        compiled.append((MATCH_INDEX[field_name], regex))
    frozen_groups = frozenset(groups)

    template = _check_template(raw["template"], "template", frozen_groups, where)
    hint = raw.get("hint")
    if hint is not None:
        hint = _check_template(hint, "hint", frozen_groups, where)
    severity = raw.get("severity")
    if severity is not None and severity not in SEVERITIES:
        raise RuleError(f"{where}: severity must be one of {', '.join(SEVERITIES)}, not {severity!r}")
    phase = raw.get("phase")
    if phase is not None and phase not in PHASE_NAMES:
        raise RuleError(f"{where}: phase must be one of {', '.join(PHASE_NAMES)}, not {phase!r}")
    description = raw.get("description")
    if description is not None and not isinstance(description, str):
        raise RuleError(f"{where}: description must be a string")
    fatal = _check_fatal(raw.get("fatal", False), frozen_groups, where)
    show = raw.get("show", "row")
    if show not in SHOWS:
        raise RuleError(f"{where}: show must be one of {', '.join(SHOWS)}, not {show!r}")

    render = make_renderer(template)
    render_hint = make_renderer(hint) if hint is not None else None
    return Rule(
        id=rule_id,
        match=tuple(compiled),
        template=template,
        severity=severity,
        hint=hint,
        phase=phase,
        groups=frozen_groups,
        fatal=fatal,
        show=show,
        origin=origin,
        ordered_groups=clash,
        render=render,
        render_hint=render_hint,
        pure=pure_callables
        or (isinstance(template, str) and (hint is None or isinstance(hint, str)) and not callable(fatal)),
        safe_render=_is_percent_template(render),
        safe_hint=_is_percent_template(render_hint),
    )


def _is_percent_template(render: Any) -> bool:
    """True if ``render`` is the bound ``str.__mod__`` that make_renderer makes of a plain template."""
    return type(getattr(render, "__self__", None)) is str and getattr(render, "__name__", "") == "__mod__"


def load_rules(source: Any, *, option: str = "rules", pure_callables: bool = False) -> list[Rule]:
    """Validate and compile rules given as a list, or a dict ordered by key.

    ``option`` names the config option in error messages. Raises ``RuleError`` naming the
    rule (its id, key or index) and the problem.
    """
    if source is None:
        return []
    if isinstance(source, Mapping):
        try:
            keys = sorted(source)
        except TypeError:
            raise RuleError(f"{option}: dict keys must all be strings") from None
        items = [(f"{option}[{key!r}]", str(key), source[key]) for key in keys]
    elif isinstance(source, list | tuple):
        items = [(f"{option}[{i}]", f"rule-{i}", rule) for i, rule in enumerate(source)]
    else:
        raise RuleError(f"{option} must be a list or a dict of rules, not {type(source).__name__}")
    rules = [
        compile_rule(raw, origin, default_id, pure_callables=pure_callables) for origin, default_id, raw in items
    ]
    seen: dict[str, str] = {}
    for rule in rules:
        if rule.id in seen:
            raise RuleError(f"{rule.origin}: id {rule.id!r} is already used by {seen[rule.id]}")
        seen[rule.id] = rule.origin
    return rules


# A candidate: the rule, the groups its reason/component patterns produced, and the
# patterns still to check against the rest of the event.
_Candidate = tuple[Rule, dict[str, str], tuple[tuple[int, re.Pattern[str]], ...]]
_EMPTY: dict[str, str] = {}


class RuleSet:
    """An ordered, compiled list of rules with a fast ``match``.

    Events come from a small vocabulary of reasons, components, field paths and types. So
    the rules that can match a given combination of those fields, with the groups their
    patterns produced, are computed once per combination and remembered; a match then only
    runs the patterns on ``message`` and ``name`` (usually one, often none). This is exact
    for any regex (it is the same ``re.match``, done earlier), not only for literals.
    """

    __slots__ = ("rules", "_memo", "reads_name", "_name_rules")

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules: tuple[Rule, ...] = tuple(rules)
        self._memo: dict[tuple[str, ...], tuple[_Candidate, ...]] = {}
        # Whether any rule matches on the involved object's name (the formatter's record
        # cache may leave the name out of its key when none does).
        name_index = MATCH_INDEX["name"]
        self._name_rules = frozenset(
            id(rule) for rule in self.rules if any(index == name_index for index, _ in rule.match)
        )
        self.reads_name: bool = bool(self._name_rules)

    def __len__(self) -> int:
        return len(self.rules)

    def name_matters(self, values: Sequence[str]) -> bool:
        """Whether the wording of an event with these values may depend on its involved
        object's name: some rule that reads the name matches every other value.

        The values other than the name are what the formatter's record cache keys on, so
        an event for which this is False shares one cached wording with every object of
        the same kind, reason and message (each user's pod), and one for which it is True
        (an operator's kind, a placeholder's preemption) is cached per name.
        """
        if not self.reads_name:
            return False
        name_index = MATCH_INDEX["name"]
        # the candidates ``match`` just looked up for these values (memoized by it)
        key = (values[0], values[1], values[2], values[4], values[5], values[7], values[8])
        candidates = self._memo.get(key)
        if candidates is None:
            candidates = self._candidates(values)
        name_rules = self._name_rules
        for rule, _pre, rest in candidates:
            if id(rule) in name_rules and all(
                pattern.match(values[index]) is not None for index, pattern in rest if index != name_index
            ):
                return True
        return False

    def _candidates(self, values: Sequence[str]) -> tuple[_Candidate, ...]:
        out: list[_Candidate] = []
        for rule in self.rules:
            if rule.ordered_groups:
                out.append((rule, _EMPTY, rule.match))
                continue
            pre: dict[str, str] = {}
            rest: list[tuple[int, re.Pattern[str]]] = []
            ok = True
            for index, pattern in rule.match:
                if index in _PER_EVENT:
                    rest.append((index, pattern))
                    continue
                found = pattern.match(values[index])
                if found is None:
                    ok = False
                    break
                if pattern.groupindex:
                    pre.update(found.groupdict(""))
            if ok:
                out.append((rule, pre or _EMPTY, tuple(rest)))
        return tuple(out)

    def match(self, values: Sequence[str]) -> tuple[Rule, dict[str, str]] | None:
        """The first rule matching ``values`` (normalized, MATCH_FIELDS order) and its groups.

        The returned groups dict may be shared between calls: read it, never mutate it.
        """
        # The _KEY_FIELDS, spelled out: building this tuple directly is the fastest way.
        key = (values[0], values[1], values[2], values[4], values[5], values[7], values[8])
        candidates = self._memo.get(key)
        if candidates is None:
            candidates = self._candidates(values)
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = candidates
        for rule, pre, rest in candidates:
            if not rest:
                return rule, pre
            groups = pre
            copied = False
            for index, pattern in rest:
                found = pattern.match(values[index])
                if found is None:
                    break
                if pattern.groupindex:
                    if copied:
                        groups.update(found.groupdict(""))
                    elif groups:
                        groups = {**groups, **found.groupdict("")}  # never mutate the memo's dict
                        copied = True
                    else:
                        groups = found.groupdict("")
                        copied = True
            else:
                return rule, groups
        return None
