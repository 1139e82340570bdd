"""EventFormatter: Kubernetes (or custom) event dict -> EventRecord, via rules and a hook.

The configurable front of the formatter: it owns the config options (``rules``,
``extra_rules``, ``format_hook``), validates them at configure time, and makes records from
an event read once (``fields.read_event``), the first matching rule (``record``) and the
hook (``hook``), keeping the records it made for events that read alike. It knows nothing
of JupyterHub or Kubernetes clients; the spawner and the CLI both use it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from traitlets import Any as AnyTrait
from traitlets import Dict as DictTrait
from traitlets import List as ListTrait
from traitlets import TraitError, Unicode, Union, observe, validate
from traitlets.config import LoggingConfigurable

from richprogress.model.display import display_line
from richprogress.model.records import EventRecord
from richprogress.model.settings import refusal, setting_name, takes_arguments
from richprogress.wording.default_rules import DEFAULT_RULES
from richprogress.wording.fields import Fields, clean, normalize_message, read_event
from richprogress.wording.hook import FormatHook
from richprogress.wording.record import build_record, safe_record
from richprogress.wording.rules import Rule, RuleError, RuleSet, load_rules

_default_rules_cache: list[Rule] | None = None

# The record cache (see EventFormatter._default_record) is bounded: it starts over when it
# holds this many wordings, and never keeps an event whose message is longer than this.
_RECORDS_LIMIT = 2048
_RECORD_MESSAGE_MAX = 2048


def default_rules() -> list[Rule]:
    """The compiled default rules (compiled once per process)."""
    global _default_rules_cache
    if _default_rules_cache is None:
        # Our callables depend on their groups alone, so their text may be reused.
        _default_rules_cache = load_rules(DEFAULT_RULES, option="default rules", pure_callables=True)
    return _default_rules_cache


class EventFormatter(LoggingConfigurable):
    """Turn Kubernetes events (and other progress messages) into EventRecords.

    Usable on its own::

        from richprogress import EventFormatter
        record = EventFormatter().format_event(event)
    """

    rules = Union(
        [ListTrait(), DictTrait()],
        default_value=None,
        allow_none=True,
        config=True,
        help="""
        Formatting rules that replace the default rules. None (the default) uses ours.

        A list of rules (tried in order), or a dict of rules (tried in the order of their
        keys, a key being the rule's id). The rule format of kubespawner #910 works
        unchanged. A rule::

            {
                "match": {"reason": r"Failed", "message": r'Failed to pull image "(?P<image>[^"]+)"'},
                "template": "The image {image} could not be downloaded",
                # optional, richprogress only:
                "id": "my-pull-rule", "severity": "error", "phase": "image",
                "hint": "Check the image name {image}.",
            }

        Match fields: reportingComponent, fieldPath, reason, message, type, kind, name,
        namespace, container. Each pattern is applied with ``re.match``; all must match;
        the first matching rule wins; named groups of all patterns are passed to the
        template (``str.format``) or, for a callable template, as keyword arguments
        (``template(**groups)``); groups that did not take part are "". A template that
        fails keeps the event's own message. Rules are checked at start-up: a bad rule is
        an error naming it.

        Example::

            c.EventFormatter.rules = {
                "01-pull": {
                    "match": {"reason": "Pulling", "message": r'Pulling image "(?P<image>[^"]+)"'},
                    "template": "Downloading {image}",
                },
            }
        """,
    )

    extra_rules = Union(
        [ListTrait(), DictTrait()],
        default_value=[],
        config=True,
        help="""
        Formatting rules tried before the rules in ``rules`` (or the defaults), so they win.

        Same format as ``rules``. Use this to reword a few events and keep our defaults for
        the rest.

        Example::

            c.EventFormatter.extra_rules = [
                {
                    "id": "our-gpu-pool",
                    "match": {"reason": "TriggeredScaleUp", "message": ".*gpu-pool"},
                    "template": "Starting a GPU machine for you (this takes about 8 minutes)",
                    "phase": "scaling",
                }
            ]
        """,
    )

    format_hook = AnyTrait(
        default_value=None,
        allow_none=True,
        config=True,
        help="""
        A function that may edit or replace each record after the rules ran.

        Called as ``hook(spawner, raw_event, record)``; ``spawner`` is None outside a
        spawner (e.g. the command line). Return the record to use, or None to keep the
        record as the rules made it. It may be async where it is called from async code
        (the spawner); a sync call (``format_event``) cannot wait for it and keeps the
        default record. If the hook raises, the error is logged once (per hook and rule)
        and the default record is used. The record is a copy: edit it freely, but keep it
        data (plain text, no HTML).

        Example::

            def add_docs_link(spawner, event, record):
                if record["rule"] == "image-not-found":
                    record["hint"] = "See https://docs.example.edu/images for the list of images."
                return record

            c.EventFormatter.format_hook = add_docs_link
        """,
    )

    quiet_reasons = ListTrait(
        Unicode(),
        default_value=[],
        config=True,
        help="""
        Event reasons whose rows are quiet: muted, one line, opened on click.

        For warnings that are normal on your cluster, e.g. ``["FailedScheduling"]`` on a
        cluster that always adds a machine for a new server. No regex needed: the event's
        ``reason`` is compared whole. The record keeps its words and its severity, and the
        diagnosis still reads it: if it turns out to be what went wrong, the page says so.
        This wins over a rule's ``show``.
        """,
    )

    hidden_reasons = ListTrait(
        Unicode(),
        default_value=[],
        config=True,
        help="""
        Event reasons that get no row at all: they are only in the details ("Copy
        details", the text and JSON endpoints), and the diagnosis still reads them.

        Example: ``["NodeHasSufficientMemory"]``. This wins over ``quiet_reasons`` and a
        rule's ``show``.
        """,
    )

    def __init__(self, **kwargs: Any) -> None:
        # reason -> "quiet" / "hidden" (quiet_reasons and hidden_reasons, mirrored)
        self._shows: dict[str, str] = {}
        self._ruleset: RuleSet | None = None
        # format_hook, mirrored: reading a trait costs ~6x a plain attribute
        self._hook: FormatHook | None = None
        self._logged: set[tuple[Any, ...]] = set()
        # a Reading's key -> a record made for an event with that key (read it, never hand it out)
        self._records: dict[tuple[Any, ...], EventRecord] = {}
        # the cause reader words what the default rules leave unsaid; an admin's own ``rules``
        # replace the defaults and leave the rest raw (set with the ruleset)
        self._read_causes = True
        super().__init__(**kwargs)
        self._hook = self._wrap_hook(self.format_hook)

    # ---- configuration ---------------------------------------------------------------

    # what each setting accepts (refusals and docs/configuration.md say the same)
    rules.tag(allowed="None (our default rules), or a list or dict of rules (docs/rules.md)")
    extra_rules.tag(allowed="a list or dict of rules (docs/rules.md)")
    format_hook.tag(allowed="None, or a callable hook(spawner, event, record)")
    quiet_reasons.tag(allowed='a list of event reasons, e.g. ["FailedScheduling"]')
    hidden_reasons.tag(allowed='a list of event reasons, e.g. ["NodeHasSufficientMemory"]')

    @validate("quiet_reasons", "hidden_reasons")
    def _validate_reasons(self, proposal: Any) -> Any:
        name = proposal["trait"].name
        value = proposal["value"]
        for reason in value:
            # a reason is one word (Kubernetes: UpperCamelCase); a regex or a sentence here
            # would silently match nothing
            if not reason or not reason.replace("_", "").replace("-", "").replace(".", "").isalnum():
                raise refusal(self, name, value, f"{reason!r} is no event reason (one word, no regex)")
        return value

    @observe("quiet_reasons", "hidden_reasons")
    def _reasons_changed(self, change: Any) -> None:
        shows = {reason: "quiet" for reason in self.quiet_reasons}
        shows.update({reason: "hidden" for reason in self.hidden_reasons})
        self._shows = shows

    @validate("rules", "extra_rules")
    def _validate_rules(self, proposal: Any) -> Any:
        name = proposal["trait"].name
        value = proposal["value"]
        if value is None and name == "rules":
            return None
        try:
            # the error names the rule: c.EventFormatter.rules[3] (id 'x'): what is wrong
            load_rules(value, option=setting_name(self, name))
        except RuleError as exc:
            raise TraitError(" ".join(str(exc).split())) from None
        return value

    @validate("format_hook")
    def _validate_hook(self, proposal: Any) -> Any:
        value = proposal["value"]
        if value is not None and not callable(value):
            raise refusal(self, "format_hook", value, f"a {type(value).__name__} is not callable")
        if value is not None and not takes_arguments(value, 3):
            raise refusal(self, "format_hook", value, "it cannot be called with (spawner, event, record)")
        return value

    def _wrap_hook(self, hook: Any) -> FormatHook | None:
        return None if hook is None else FormatHook(hook, self._log_once)

    @observe("format_hook")
    def _hook_changed(self, change: Any) -> None:
        self._hook = self._wrap_hook(change["new"])

    @observe("rules", "extra_rules")
    def _rules_changed(self, change: Any) -> None:
        self._ruleset = None
        self._records = {}

    @property
    def ruleset(self) -> RuleSet:
        """The compiled rules in the order they are tried (extra rules first)."""
        if self._ruleset is None:
            extra = load_rules(self.extra_rules, option="EventFormatter.extra_rules")
            if self.rules is None:
                base = default_rules()
            else:
                base = load_rules(self.rules, option="EventFormatter.rules")
            self._read_causes = self.rules is None
            self._ruleset = RuleSet([*extra, *base])
        return self._ruleset

    # ---- formatting ------------------------------------------------------------------

    def _log_once(self, key: tuple[Any, ...], msg: str, *args: Any, exc_info: bool = True) -> None:
        if key in self._logged:
            return
        if len(self._logged) < 10_000:
            self._logged.add(key)
        # the arguments may hold event text (a reason, a rule's groups): escaped as the
        # command line shows it, so that no terminal escape reaches the hub log raw
        shown = tuple(display_line(a) if isinstance(a, str) else a for a in args)
        self.log.error(msg, *shown, exc_info=exc_info)

    def _build(self, fields: Fields) -> EventRecord:
        """The record the rules make for ``fields``, never cached."""
        ruleset = self._ruleset
        if ruleset is None:  # not `or`: a RuleSet's truth is its length, a call per event
            ruleset = self.ruleset
        return build_record(ruleset, fields, self._log_once, self._read_causes)[0]

    def _default_record(self, event: Any) -> EventRecord:
        """The record the rules make for ``event`` (before the hook). Never raises.

        Most events share their wording with one seen before: a repeat (count and times
        change, the text does not), the same event for another page, or the same kubelet
        step for another user. So records are cached by the reading's key, the raw values the
        wording depends on; a hit copies the cached record and sets the event's own id,
        times, count and object name. Only plain keys (str or None values), short messages
        and pure rules are cached, so a hit gives exactly the record a miss would.
        """
        try:
            reading = read_event(event)
            key, name, uid, timestamp, first_timestamp, count, _ = reading
            ruleset = self._ruleset
            if ruleset is None:
                ruleset = self.ruleset
            records = self._records
            if key is not None:
                try:
                    cached = records.get(key)
                    if cached is None and ruleset.reads_name:
                        # a wording that depends on the name is kept under the name too
                        cached = records.get((*key, name))
                except TypeError:  # an unhashable value (a list, a dict): not a plain event
                    cached = None
                if cached is not None:
                    record = cached.copy()
                    obj = cached["object"].copy()
                    obj["name"] = name or None
                    record["object"] = obj
                    record["id"] = uid
                    record["timestamp"] = timestamp
                    record["first_timestamp"] = first_timestamp
                    record["count"] = count
                    return record
            fields, plain = clean(reading)
            record, pure = build_record(ruleset, fields, self._log_once, self._read_causes)
            if plain and pure and key is not None and len(record["raw_message"]) <= _RECORD_MESSAGE_MAX:
                if len(records) >= _RECORDS_LIMIT:
                    records.clear()
                kept = record.copy()
                kept["object"] = record["object"].copy()
                if ruleset.name_matters(fields.match_values):
                    key = (*key, name)
                records[key] = kept
            return record
        except Exception:
            self._log_once(("format",), "richprogress: formatting an event failed; showing it raw")
            return safe_record(event)

    def _reason_show(self, record: EventRecord) -> EventRecord:
        """``record`` shown as ``quiet_reasons`` / ``hidden_reasons`` say for its reason
        (after the rules and their record cache, so the cached wording is never changed)."""
        show = self._shows.get(record.get("reason") or "")
        if show is not None and record.get("show") != show:
            record["show"] = show  # the record is the caller's own copy
        return record

    def format_event(self, event: Mapping[str, Any], spawner: Any = None) -> EventRecord:
        """Format one event into an EventRecord. Never raises.

        Applies a sync ``format_hook``; an async hook cannot be awaited here, so its result
        is closed, logged once, and the default record is used (call ``format_event_async``
        from async code).
        """
        record = self._default_record(event)
        if self._shows:
            record = self._reason_show(record)
        hook = self._hook
        if hook is None:
            return record
        result = hook.call(spawner, event, record)
        if inspect.isawaitable(result):
            hook.cannot_wait(result)
            return record
        return hook.merge(record, result)

    async def format_event_async(self, event: Mapping[str, Any], spawner: Any = None) -> EventRecord:
        """Like ``format_event``, but awaits an async ``format_hook``. Never raises."""
        record = self._default_record(event)
        if self._shows:
            record = self._reason_show(record)
        hook = self._hook
        if hook is None:
            return record
        result = hook.call(spawner, event, record)
        if inspect.isawaitable(result):
            result = await hook.wait(result, record)
        return hook.merge(record, result)

    def format_message(
        self, message: str, *, id: str | None = None, timestamp: str | None = None
    ) -> EventRecord:
        """A record (type ``Custom``) for a progress message that is not a Kubernetes event.

        Rules are applied to the message (match field ``message``; ``type`` is "Custom").
        The hook is not called: there is no event to give it.
        """
        try:
            return self._build(normalize_message(message, id=id, timestamp=timestamp))
        except Exception:
            self._log_once(("format",), "richprogress: formatting a message failed; showing it raw")
            return safe_record({"message": message})
