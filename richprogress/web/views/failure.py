"""The failure page as plain data: what went wrong and where, the steps, the folded
timeline, the facts and the report, from a failed (or stopped) spawn's timeline.

The page is ``not_running.html``; it reaches this through the template variable
(``template_vars.TemplateHelpers.failure_view``, live) or the spawn history
(``HistoryHelpers.failure_view``, stored). Jinja autoescapes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from richprogress.model.display import display_text
from richprogress.model.records import PHASE_LABELS
from richprogress.model.timeline import STOPPED_BEFORE_READY, SpawnTimeline
from richprogress.model.times import format_clock, format_duration, time_ago, utc_text, utcnow
from richprogress.story.container_log import ContainerLog, log_heading, stored_container_log
from richprogress.story.folding import fold_records, is_fold
from richprogress.story.steps import step_durations
from richprogress.story.verdict import decide
from richprogress.stream.spawn_facts import Facts
from richprogress.web.urls import timeline_api_path
from richprogress.web.views.payloads import timeline_report_text
from richprogress.web.views.rows import (
    breakable_parts,
    event_count,
    fold_row,
    for_viewer,
    headline_parts,
    main_pod,
    record_row,
    requested_row,
    row_floors,
    row_shows,
)
from richprogress.web.views.rows import hint_label as label_of_hint

#: rows of the folded timeline on the failure page: with the summary, the facts and the
#: buttons this fits a 1280x800 screenshot
FAILURE_PAGE_ROWS = 12

#: what "Copy details" says once the report is on the clipboard: the owner sends it to an
#: admin; an admin (or anyone else) keeps it or answers the user with it
COPIED_FOR_OWNER = "Copied. Paste it into a message to your admin."
COPIED_FOR_OTHERS = "Copied. Paste it into a ticket or your reply to the user."


@dataclass
class FailureView:
    """Everything the failure page shows, as plain data."""

    summary: str
    hint: str | None
    phase_label: str
    user_name: str
    server_name: str
    started_iso: str
    started_utc: str
    ran_for: str
    #: the summary without its long name (an image), which ``reference`` holds; the page
    #: shows the name on its own line in monospace with a copy button
    headline: str = ""
    reference: str = ""
    reference_parts: list[tuple[str, bool]] = field(default_factory=list)
    #: "Gave up after" (the spawn failed) or "Stopped after" (someone stopped it)
    ran_for_label: str = "Gave up after"
    #: the user's pod, named here once instead of on every row
    pod: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    total_records: int = 0
    report_text: str = ""
    timeline_url: str = ""
    #: the person looking is the server's owner ("Your server ..."); else an admin or a
    #: shared-access user is looking, and the page names the owner instead
    viewer_is_owner: bool = False
    #: the words before the hint ("What you can do", or "What the user can do")
    hint_label: str = label_of_hint(False)
    #: what "Copy details" says when it copied the report
    copied_text: str = COPIED_FOR_OTHERS
    #: the facts an admin needs (label, value), shown in the facts box
    facts: list[tuple[str, str]] = field(default_factory=list)
    #: "at +0:14, as waiting could not fix it" when fail-fast ended the spawn, else ""
    stopped_early: str = ""
    #: the verdict's state: "failed", or "stopped" (a person stopped it)
    state: str = "failed"
    #: when the spawn ended (ISO 8601) and how long ago that was ("2 hours ago")
    ended_iso: str | None = None
    ended_ago: str = ""
    #: the failing container's last log lines (``story.container_log``), redacted, for
    #: viewers ``show_container_log`` names; else None
    container_log: ContainerLog | None = None
    #: the words above them (which container, which run, whether lines are left out)
    container_log_heading: str = ""


def failure_view(
    user_name: str,
    server_name: str,
    timeline: SpawnTimeline | None,
    failed_message: str | None = None,
    *,
    hub_base_url: str = "/hub/",
    hub_url: str | None = None,
    viewer_name: str | None = None,
    facts: Facts | None = None,
    own_pod: str | None = None,
    show_log: bool = False,
) -> FailureView | None:
    """The failure page's data, or None when there is no timeline to tell from.

    ``viewer_name`` is the logged-in user's name: the page says "Your server" only to the
    owner (None, unknown, gives the neutral wording), in its headline, its hint and its
    rows. ``own_pod`` is the user's pod name. ``hub_url`` and ``facts`` go into the
    report as the timeline endpoint puts them into ``timeline.txt``: the same text.
    ``show_log``: this viewer sees the container's last log lines (the caller decides,
    ``payloads.container_log_shown``), on the page and in the report.
    """
    if timeline is None:
        return None
    # Arrival order, as the live page showed them: Kubernetes stamps first occurrences to the
    # second, so sorting by them would put a repeat before the sub-second event before it.
    records: list[dict[str, Any]] = list(timeline.records())  # type: ignore[arg-type]
    message = timeline.failure_message if timeline.failure_message else failed_message
    verdict = decide(
        records,  # type: ignore[arg-type]
        outcome="failed",
        failure_message=message,
        stopped_early=timeline.stopped_early is not None,
    )
    # a spawn a person stopped has no cause: the page says so, with the step it reached
    diagnosis = verdict.diagnosis() or {
        "summary": STOPPED_BEFORE_READY, "hint": None, "phase": verdict.step, "record_id": None,
    }
    finished = timeline.finished_at
    steps = [
        {
            "label": step["label"],
            "clock": format_clock(step.get("start")),
            "duration": format_duration(step.get("duration")) or "?",
        }
        for step in step_durations(records, timeline.started_at, finished)  # type: ignore[arg-type]
    ]
    own_pod = own_pod or main_pod(records)
    owner = viewer_name is not None and viewer_name == user_name
    rows = [requested_row(timeline.started_at)]
    # the records that get a row (story.quieted: "hidden" ones are only in the report)
    shows = row_shows(records, diagnosis["record_id"])
    shown = [r for r in records if shows[str(r.get("id"))] != "hidden"]
    # every record's floor, before folding: the clocks the live page shows
    floors = row_floors(shown, timeline.started_at)
    for item in fold_records(
        shown,  # type: ignore[arg-type]
        FAILURE_PAGE_ROWS,
        decisive_id=diagnosis["record_id"],
    ):
        if is_fold(item):
            rows.append(fold_row(item))  # type: ignore[arg-type]
            continue
        row = record_row(
            item,  # type: ignore[arg-type]
            diagnosis["record_id"],
            timeline.started_at,
            floor=floors.get(str(item.get("id"))),
            own_pod=own_pod,
            show=shows[str(item.get("id"))],
        )
        rows.append(_row_for_viewer(row, owner))
    phase = diagnosis["phase"]
    shown_log = stored_container_log(timeline.container_log) if show_log else None
    summary = for_viewer(diagnosis["summary"], owner) or ""
    headline, reference = headline_parts(summary)
    return FailureView(
        summary=display_text(summary),
        headline=display_text(headline),
        reference=display_text(reference),
        reference_parts=breakable_parts(display_text(reference)),
        hint=display_text(for_viewer(diagnosis["hint"], owner)) if diagnosis["hint"] else None,
        phase_label=PHASE_LABELS.get(phase or "", "Unknown"),
        user_name=display_text(user_name, 300),
        server_name=display_text(server_name, 300),
        started_iso=timeline.to_dict()["started"],
        started_utc=utc_text(timeline.started_at),
        ran_for=format_duration(timeline.elapsed()) or "unknown",
        ran_for_label=(
            "Stopped after" if verdict.state == "stopped" else "Gave up after"
        ),
        pod=display_text(own_pod or "", 300),
        steps=steps,
        rows=rows,
        total_records=event_count(rows),
        report_text=timeline_report_text(
            timeline, user=user_name, server_name=server_name, hub_url=hub_url, facts=facts, show_log=show_log
        ),
        # the pod has its own line above the admin facts: not twice
        facts=[
            (label, display_text(value, 300))
            for label, value in facts or []
            if not (label == "Pod" and own_pod)
        ],
        timeline_url=timeline_api_path(hub_base_url, user_name, server_name),
        viewer_is_owner=owner,
        hint_label=label_of_hint(owner),
        copied_text=COPIED_FOR_OWNER if owner else COPIED_FOR_OTHERS,
        stopped_early=(
            f"at {format_clock(timeline.stopped_early.get('at'))}, as waiting could not fix it"
            if timeline.stopped_early
            else ""
        ),
        state=verdict.state,
        ended_iso=timeline.to_dict()["finished"],
        ended_ago=time_ago(finished, utcnow()) if finished else "",
        container_log=shown_log,
        container_log_heading=log_heading(shown_log) if shown_log else "",
    )


def _row_for_viewer(row: dict[str, Any], viewer_is_owner: bool) -> dict[str, Any]:
    """A row's sentence as the viewer reads it: not "your server" to an admin."""
    message = row.get("message")
    if viewer_is_owner or not isinstance(message, str):
        return row
    said = for_viewer(message, False) or ""
    if said == message:
        return row
    return {**row, "message": said, "message_parts": breakable_parts(said)}
