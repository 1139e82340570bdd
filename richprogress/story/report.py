"""Plain-text renderings of records: the terminal timeline and the "Copy details" report.

Used by ``richprogress explain`` and by the failure page's "Copy details" (through the
timeline's text endpoint). Plain text only: no HTML, and ANSI colors only when asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from richprogress.model.display import display_line, format_count
from richprogress.model.records import PHASE_LABELS, EventRecord
from richprogress.model.timeline import STOPPED_BEFORE_READY
from richprogress.model.times import (
    finite_seconds,
    format_clock,
    format_duration,
    format_utc,
    format_utc_time,
    parse_timestamp,
    row_offset,
)
from richprogress.story.container_log import report_lines, stored_container_log
from richprogress.story.diagnosis import Diagnosis, diagnose
from richprogress.story.folding import fold_records, is_fold
from richprogress.story.ordering import time_order
from richprogress.story.steps import step_durations

_ANSI = {"warning": "\x1b[33m", "error": "\x1b[31m", "dim": "\x1b[2m", "bold": "\x1b[1m"}
_RESET = "\x1b[0m"


def format_object(record: Mapping[str, Any]) -> str:
    """``Pod/jupyter-alice[notebook]``, or the parts of it the record has."""
    obj = record.get("object")
    if not isinstance(obj, Mapping):
        return ""
    kind, name, container = obj.get("kind"), obj.get("name"), obj.get("container")
    text = "/".join(str(part) for part in (kind, name) if part)
    if container:
        text += f"[{container}]"
    return text


def _one_line(text: Any) -> str:
    # A sentence spanning lines would break the columns (and could fake a row); controls
    # and bidi overrides are escaped and long text shortened (see model.display).
    return display_line(text or "")


def _paint(text: str, style: str | None, color: bool) -> str:
    if not color or style not in _ANSI:
        return text
    return f"{_ANSI[style]}{text}{_RESET}"


def record_offsets(
    record: Mapping[str, Any], started: datetime | None = None
) -> tuple[float | None, float | None]:
    """Since-spawn seconds of a record's first and last occurrence (None when unknown).

    ``since_spawn`` is the last occurrence. With the spawn's start the first is the pages'
    (``row_offset``), so the report and the rows above it agree to the second; without it
    (``richprogress explain``), a repeat's first one is the last minus the span between its
    first and last timestamps, so the first time pairs with the first offset and the last
    with the last, as the page shows them.
    """
    last = finite_seconds(record.get("since_spawn"))
    if started is not None:
        return row_offset(record, started), last
    first = last
    count = record.get("count") or 1
    first_at = parse_timestamp(record.get("first_timestamp"))
    last_at = parse_timestamp(record.get("timestamp"))
    if last is not None and isinstance(count, int) and count > 1 and first_at and last_at:
        first = max(0.0, last - max(0.0, (last_at - first_at).total_seconds()))
    return first, last


def _record_columns(
    record: Mapping[str, Any], floor: float | None = None, started: datetime | None = None
) -> list[str]:
    count = record.get("count") or 1
    sentence = _one_line(record.get("message") or record.get("raw_message"))
    if isinstance(count, int) and count > 1:
        sentence += f"  x{format_count(count)}"
    if record.get("overcome") is True:
        sentence += "  (resolved)"  # the pages' "resolved" pill: the spawn got past it
    first, last = record_offsets(record, started)
    # a row never reads earlier than the row above (whole-second and microsecond stamps mix)
    if first is not None and floor is not None:
        first = max(first, floor)
    clock = format_clock(first)
    repeated = isinstance(count, int) and count > 1
    if repeated and last is not None and first is not None and format_clock(last) != clock and last > first:
        clock += f" to {format_clock(last)}"
    return [
        format_utc_time(record.get("first_timestamp") or record.get("timestamp")),
        clock,
        _one_line(record.get("type")),
        _one_line(record.get("reason")),
        _one_line(format_object(record)),
        sentence,
    ]


def _fold_line(fold: Mapping[str, Any]) -> str:
    span = ""
    first, last = fold.get("first"), fold.get("last")
    if first is not None and last is not None:
        span = f", {format_clock(first)} to {format_clock(last)}"
    else:
        start = format_utc_time(fold.get("first_timestamp"))
        end = format_utc_time(fold.get("last_timestamp"))
        if start != "--:--:--":
            span = f", {start} to {end}"
    folded = fold.get("folded")
    noun = "event" if folded == 1 else "events"
    if fold.get("follows"):
        # the kubelet's follow-ups of the failed pull above: their own words, each once
        said = "; ".join(_one_line(m) for m in fold.get("raw_messages") or ())
        said = f": {said}" if said else ""
        count = fold.get("count")
        times = f" ({count} in all)" if isinstance(count, int) and isinstance(folded, int) and count > folded else ""
        return f"... {folded} follow-ups of the failed download above{times}{said}{span} (folded)"
    if fold.get("reason") and fold.get("message") is not None:
        what = f"{noun} alike ({_one_line(fold['reason'])})"
    elif fold.get("reason"):
        what = f"{_one_line(fold['reason'])} {noun}"
    else:
        what = noun
    return f"... {folded} more {what}{span} (folded)"


def render_timeline_text(
    records: Sequence[EventRecord],
    *,
    diagnosis: Diagnosis | None = None,
    color: bool = False,
    keep: int = 0,
    raw: bool = False,
    started: datetime | None = None,
) -> str:
    """A readable timeline, one line per record, in the order given.

    Columns: UTC time, since-spawn clock (when the records carry one), type, reason,
    object, sentence (``x4`` when it repeated). Consecutive repeats are folded (``keep``
    also limits the rows, see ``fold_records``). With a ``diagnosis``, ends with "What went
    wrong" and "What you can do". ``color`` adds ANSI colors by severity. ``raw`` adds each
    event's own message on a line under its sentence (what an admin pastes into a search
    engine), when it says something the sentence does not. ``started``, the spawn's start,
    gives each row the pages' clock (``record_offsets``).
    """
    decisive = diagnosis.get("record_id") if diagnosis else None
    rows = fold_records(records, keep, decisive_id=decisive)
    show_clock = any(format_clock(r.get("since_spawn")) for r in records)
    table: list[tuple[list[str] | str, str | None]] = []
    floor: float | None = None
    for row in rows:
        if is_fold(row):
            table.append((_fold_line(row), "dim"))
            continue
        columns = _record_columns(row, floor, started)
        first = record_offsets(row, started)[0]
        if first is not None:
            floor = first if floor is None else max(floor, first)
        if not show_clock:
            del columns[1]
        severity = row.get("severity")
        style = "bold" if decisive and row.get("id") == decisive else None
        table.append((columns, severity if severity in ("warning", "error") else style))
        own = row.get("raw_message")
        if raw and isinstance(own, str) and own.strip() and own != row.get("message"):
            table.append(("    Kubernetes: " + _one_line(own), "dim"))
    widths: list[int] = []
    for cells, _ in table:
        if isinstance(cells, list):
            for i, cell in enumerate(cells[:-1]):
                if i >= len(widths):
                    widths.append(0)
                widths[i] = max(widths[i], len(cell))
    lines: list[str] = []
    for cells, style in table:
        if isinstance(cells, str):
            lines.append(_paint("  " + cells, style, color))
            continue
        padded = [cell.ljust(width) for cell, width in zip(cells, widths, strict=False)]
        lines.append(_paint("  ".join([*padded, cells[-1]]).rstrip(), style, color))
    if diagnosis is not None:
        if lines:
            lines.append("")
        lines.append(_paint("What went wrong: ", "bold", color) + _one_line(diagnosis["summary"]))
        if diagnosis.get("hint"):
            lines.append(_paint("What you can do: ", "bold", color) + _one_line(diagnosis["hint"]))
    return "\n".join(lines) + "\n" if lines else ""


def render_steps_text(steps: Sequence[Mapping[str, Any]]) -> str:
    """``step_durations`` as aligned lines: label, start clock, duration."""
    if not steps:
        return ""
    width = max(len(str(s["label"])) for s in steps)
    lines = [
        f"  {str(s['label']).ljust(width)}  {format_clock(s['start']):>8}  "
        f"{format_duration(s.get('duration'))}".rstrip()
        for s in steps
    ]
    return "\n".join(lines) + "\n"


def _duration_label(timeline_dict: Mapping[str, Any]) -> str:
    """What the spawn's duration was, in the failure page's words: a server that never ran
    did not "run for" anything."""
    outcome = timeline_dict.get("outcome")
    if outcome == "failed":
        stopped = timeline_dict.get("reason") == STOPPED_BEFORE_READY
        return "Stopped after" if stopped else "Gave up after"
    if outcome == "ready":
        return "Ready after"
    return "Waiting for" if outcome == "pending" else "Took"


def render_report_text(
    timeline_dict: Mapping[str, Any],
    *,
    user: str,
    server_name: str,
    hub_url: str | None = None,
) -> str:
    """The plain-text "Copy details" report of one spawn (from ``SpawnTimeline.to_dict()``,
    optionally with a ``diagnosis`` key as the timeline endpoint serves it).

    Who and when first (user, server, start, how long, outcome), then for a failure what
    went wrong, what to do and the step it died in, then the facts an admin needs (the
    ``facts`` key: label/value pairs, see ``stream.spawn_facts``), the steps and the full timeline
    with each event's own Kubernetes message under its sentence; last, the container's
    last log lines when the dict holds them (``container_log``, only for viewers who may
    see them).
    """
    records: list[EventRecord] = list(timeline_dict.get("records") or [])
    outcome = str(timeline_dict.get("outcome") or "unknown")
    failed = outcome == "failed"
    verdict = timeline_dict.get("verdict")
    # the pages' verdict, when the endpoint gave it: a spawn a person stopped has no cause
    stopped = isinstance(verdict, Mapping) and verdict.get("state") == "stopped"
    diagnosis: Diagnosis | None = None
    if failed and not stopped:
        # The timeline endpoint adds the page's own diagnosis; reuse it so that the report
        # and the page can never disagree, else work it out the same way.
        given = timeline_dict.get("diagnosis")
        if isinstance(given, Mapping) and isinstance(given.get("summary"), str):
            diagnosis = Diagnosis(
                summary=given["summary"],
                hint=given.get("hint"),
                phase=given.get("phase"),
                record_id=given.get("record_id"),
            )
        else:
            diagnosis = diagnose(records, timeline_dict.get("reason"))
    fields: list[tuple[str, str]] = [
        ("User", user),
        ("Server", server_name or "(default server)"),
    ]
    if hub_url:
        fields.append(("Hub", hub_url))
    fields += [
        ("Started", format_utc(timeline_dict.get("started")) or "unknown"),
        (_duration_label(timeline_dict), format_duration(timeline_dict.get("elapsed")) or "unknown"),
        ("Outcome", "stopped before it was ready" if stopped else outcome),
    ]
    if diagnosis is not None:
        phase = diagnosis.get("phase")
        # the failure page's words for the same facts
        fields.append(("Failed during", PHASE_LABELS.get(phase or "", phase or "unknown")))
    width = max(len(label) for label, _ in fields) + 1
    lines = ["Server start report (richprogress)", ""]
    lines += [f"{(label + ':').ljust(width)} {_one_line(value)}" for label, value in fields]
    if diagnosis is not None:
        lines += ["", f"What went wrong: {_one_line(diagnosis['summary'])}"]
        if diagnosis.get("hint"):
            lines.append(f"What you can do: {_one_line(diagnosis['hint'])}")
    facts = [
        (str(pair[0]), str(pair[1]))
        for pair in (timeline_dict.get("facts") or [])
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and pair[1] not in (None, "")
    ]
    if facts:
        width = max(len(label) for label, _ in facts) + 1
        lines += ["", "Facts for an admin:"]
        lines += [f"  {(label + ':').ljust(width)} {_one_line(value)}" for label, value in facts]
    steps = step_durations(records, timeline_dict.get("started"), timeline_dict.get("finished"))
    if steps:
        lines += ["", "Steps:", render_steps_text(steps).rstrip("\n")]
    lines += ["", "Timeline:"]
    # The report is the full record: no row limit, only repeats folded.
    timeline = render_timeline_text(
        time_order(records, first=True), raw=True, started=parse_timestamp(timeline_dict.get("started"))
    )
    lines.append(timeline.rstrip("\n") if timeline else "  (no events)")
    dropped = timeline_dict.get("dropped") or 0
    if dropped:
        lines.append(f"  ({dropped} older events were not kept)")
    # the container's last lines, when the endpoint gave them to this viewer (cleaned and
    # redacted again: a payload is not trusted to have been)
    shown_log = report_lines(stored_container_log(timeline_dict.get("container_log")))
    if shown_log:
        lines += ["", *shown_log]
    return "\n".join(lines) + "\n"
