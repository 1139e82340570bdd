"""What the timeline endpoints serve: a timeline as JSON with its diagnosis and facts, and
the plain-text report "Copy details" puts on the clipboard."""

from __future__ import annotations

from typing import Any

from richprogress.model.timeline import SpawnTimeline
from richprogress.story.report import render_report_text
from richprogress.story.verdict import Verdict, decide
from richprogress.stream.spawn_facts import Facts, fact_pairs, timeline_facts


def timeline_verdict(timeline: SpawnTimeline) -> Verdict:
    """The verdict the pages render for a timeline (``story.verdict.decide``), by the
    timeline's own clock."""
    return decide(
        timeline.records(),
        outcome=timeline.outcome,
        failure_message=timeline.failure_message,
        now=timeline.elapsed(),
        stopped_early=timeline.stopped_early is not None,
    )


def timeline_payload(timeline: SpawnTimeline, facts: Facts | None = None) -> dict[str, Any]:
    """What the JSON endpoint serves: ``to_dict()`` plus ``verdict`` (what the pages say),
    ``diagnosis`` (the verdict's cause in the older four keys; null unless failed) and
    ``facts`` (``spawn_facts`` pairs; [] when not given)."""
    data = timeline.to_dict()
    verdict = timeline_verdict(timeline)
    data["verdict"] = verdict.to_dict()
    data["diagnosis"] = verdict.diagnosis() if timeline.outcome == "failed" else None
    if verdict.state == "stopped":
        # a person stopped it: nothing failed (the stored spawn's outcome says the same)
        data["outcome"] = "stopped"
    data["facts"] = [list(pair) for pair in facts or []]
    return data


def timeline_report_text(
    timeline: SpawnTimeline,
    *,
    user: str,
    server_name: str,
    hub_url: str | None,
    facts: Facts | None = None,
) -> str:
    """The plain-text report "Copy details" puts on the clipboard."""
    return render_report_text(
        timeline_payload(timeline, facts), user=user, server_name=server_name, hub_url=hub_url
    )


def spawner_facts(spawner: Any, timeline: SpawnTimeline | None) -> Facts:
    """The facts an admin needs about the spawn ``timeline`` tells, which ``spawner`` ran:
    those kept with the timeline (``stream.spawn_facts.timeline_facts``), not what the
    spawner's options say now. A stored spawn has its own (``history.facts.shown_facts_of``)."""
    return fact_pairs(timeline_facts(spawner, timeline))
