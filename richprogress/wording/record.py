"""One EventRecord from an event's fields and the first rule that matches them.

Rendering a rule's template, hint and ``fatal`` for the matched groups (a failing one is
logged once and the event's own words are kept), and the record of last resort for an event
that could not be read or matched at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from richprogress.model.display import clean_str
from richprogress.model.records import EventRecord
from richprogress.wording.cause_reader import KEEP_AND_ADD, read_cause, says_only_failed
from richprogress.wording.fields import Fields, normalize_message
from richprogress.wording.rules import Rule, RuleSet

#: ``log_once(key, msg, *args, exc_info=True)``: log an error once per key
LogOnce = Callable[..., None]


def render(rule: Rule, hint: bool, groups: Mapping[str, str], log_once: LogOnce) -> str | None:
    """A rule's template (or hint) for ``groups`` as clean text; None if it failed."""
    what = "hint" if hint else "template"
    renderer = rule.render_hint if hint else rule.render
    try:
        text = renderer(groups) if renderer is not None else None
    except Exception:
        log_once(
            ("render", rule.id, what),
            "richprogress: the %s of rule %s failed to render; using the event's own message",
            what,
            rule.label,
        )
        return None
    if type(text) is str and text.isascii():
        return text
    if not isinstance(text, str):
        log_once(
            ("type", rule.id, what),
            "richprogress: the %s of rule %s returned %s, not a str; ignoring it",
            what,
            rule.label,
            type(text).__name__,
            exc_info=False,
        )
        return None
    return clean_str(text)


def is_fatal(rule: Rule, groups: Mapping[str, str], log_once: LogOnce) -> bool:
    """A rule's callable ``fatal``, called as ``fatal(**groups)``; False if it fails."""
    try:
        return bool(rule.fatal(**groups))  # type: ignore[operator]
    except Exception:
        log_once(
            ("render", rule.id, "fatal"),
            "richprogress: the fatal check of rule %s failed; treating the cause as not fatal",
            rule.label,
        )
        return False


def build_record(
    ruleset: RuleSet, fields: Fields, log_once: LogOnce, read_causes: bool = True
) -> tuple[EventRecord, bool]:
    """The record for ``fields``, and whether its wording may be reused (see ``Rule.pure``).
    ``read_causes``: word the cause of a Warning no rule says why for (``cause_reader``); off
    when an admin's ``rules`` replace the defaults, which leave the rest raw."""
    # Unpacking the tuple once is much cheaper than 13 attribute lookups per event.
    (uid, timestamp, first_timestamp, type_, reason, kind, name, container, field_path,
     component, count, raw, match_values, combined) = fields
    message = None
    hint = None
    phase = None
    severity = None
    rule_id = None
    fatal = False
    show = "row"
    pure = True
    found = ruleset.match(match_values)
    if found is not None:
        rule, groups = found
        pure = rule.pure
        if rule.safe_render:  # a %-template: the common case, with no guard to pay for
            message = rule.render(groups)  # type: ignore[misc]
            if not message.isascii():
                message = clean_str(message)
        else:
            message = render(rule, False, groups, log_once)
        if message:
            rule_id = rule.id
            severity = rule.severity
            phase = rule.phase
            show = rule.show
            if rule.fatal:
                fatal = rule.fatal is True or is_fatal(rule, groups, log_once)
            if rule.hint is not None:
                if rule.safe_hint:
                    hint = rule.render_hint(groups)  # type: ignore[misc]
                    if not hint.isascii():
                        hint = clean_str(hint)
                    hint = hint or None
                else:
                    hint = render(rule, True, groups, log_once) or None
    if read_causes and raw and (rule_id is None and type_ == "Warning" or says_only_failed(rule_id, message)):
        # No rule says why: the cause inside the error does (the raw text stays in the details).
        cause = read_cause(raw, container or "")
        if cause is not None:
            if rule_id in KEEP_AND_ADD:
                message = f"{message}: {cause.cause}"
            else:
                message = cause.sentence
                hint = cause.hint
            rule_id = f"cause-{cause.error_class.name}"
            phase = phase or cause.phase
            if severity is None:
                severity = "warning"
    if not message:
        # Never an empty line: the event's own words, else what little we know.
        message = raw or reason or "(event without a message)"
    if severity is None:
        severity = "warning" if type_ == "Warning" else "info"
    record: EventRecord = {
        "id": uid,
        "timestamp": timestamp,
        "first_timestamp": first_timestamp,
        "type": type_,
        "severity": severity,
        "reason": reason,
        "object": {
            "kind": kind,
            "name": name,
            "container": container,
            "field_path": field_path,
        },
        "component": component,
        "count": count,
        "message": message,
        "raw_message": raw,
        "rule": rule_id,
        "phase": phase,
        "hint": hint,
    }
    if fatal:
        # only when true: records of causes that waiting can fix stay as they were
        record["fatal"] = True
    if show != "row":
        # only when not a plain row: the record of every other event stays as it was
        record["show"] = show
    if combined:
        # Kubernetes merged similar events into this one: ``raw_message`` is the newest of
        # them, without the "(combined from similar events): " prefix
        record["combined"] = True
    return record, pure


def safe_record(event: Any) -> EventRecord:
    """The record of last resort, should reading or matching ever fail: the message alone."""
    try:
        message = clean_str(event.get("message")) if isinstance(event, Mapping) else None
    except Exception:
        message = None
    fields = normalize_message(message or "(unreadable event)")
    return {
        "id": fields.id,
        "timestamp": None,
        "first_timestamp": None,
        "type": fields.type,
        "severity": "info",
        "reason": None,
        "object": {"kind": None, "name": None, "container": None, "field_path": None},
        "component": None,
        "count": 1,
        "message": fields.raw_message,
        "raw_message": fields.raw_message,
        "rule": None,
        "phase": None,
        "hint": None,
    }
