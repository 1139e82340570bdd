"""What the timeline endpoints serve: a timeline as JSON with its diagnosis and facts, and
the plain-text report "Copy details" puts on the clipboard."""

from __future__ import annotations

from typing import Any

from richprogress.model.timeline import SpawnTimeline
from richprogress.story.container_log import may_see, show_setting, stored_container_log
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


def timeline_payload(timeline: SpawnTimeline, facts: Facts | None = None, *, show_log: bool = False) -> dict[str, Any]:
    """What the JSON endpoint serves: ``to_dict()`` plus ``verdict`` (what the pages say),
    ``diagnosis`` (the verdict's cause in the older four keys; null unless failed),
    ``facts`` (``spawn_facts`` pairs; [] when not given) and ``container_log`` (the
    failing container's last lines, ``story.container_log``; null unless ``show_log``,
    which the caller decides with ``container_log_shown``)."""
    data = timeline.to_dict()
    verdict = timeline_verdict(timeline)
    data["verdict"] = verdict.to_dict()
    data["diagnosis"] = verdict.diagnosis() if timeline.outcome == "failed" else None
    if verdict.state == "stopped":
        # a person stopped it: nothing failed (the stored spawn's outcome says the same)
        data["outcome"] = "stopped"
    data["facts"] = [list(pair) for pair in facts or []]
    data["container_log"] = stored_container_log(timeline.container_log) if show_log else None
    return data


def timeline_report_text(
    timeline: SpawnTimeline,
    *,
    user: str,
    server_name: str,
    hub_url: str | None,
    facts: Facts | None = None,
    show_log: bool = False,
) -> str:
    """The plain-text report "Copy details" puts on the clipboard (with the container's
    last lines when ``show_log``)."""
    return render_report_text(
        timeline_payload(timeline, facts, show_log=show_log), user=user, server_name=server_name, hub_url=hub_url
    )


def container_log_shown(spawner: Any, config: Any, *, owner_name: str, viewer: Any) -> bool:
    """Whether ``viewer`` (the logged-in user or the token's owner) sees the container log
    of ``owner_name``'s server, under ``show_container_log``: the spawner's value, else
    the hub config's ``RichKubeSpawner`` / ``RichProgressMixin`` one (the spawner may be
    gone: a stored spawn), else the default. Admin means JupyterHub's admin flag, not a
    scope: a holder of ``read:servers`` who is neither owner nor admin never sees it."""
    setting = getattr(spawner, "show_container_log", None)
    if setting is None:
        setting = _configured(config, "show_container_log")
    name = getattr(viewer, "name", None)
    return may_see(
        show_setting(setting),
        viewer_is_owner=isinstance(name, str) and name == owner_name and viewer_kind(viewer) == "user",
        viewer_is_admin=getattr(viewer, "admin", False) is True,
    )


def viewer_kind(viewer: Any) -> str:
    """``user`` for a JupyterHub user; ``service`` for a service (``kind`` says so on
    JupyterHub's objects), which owns no server."""
    kind = getattr(viewer, "kind", "user")
    return kind if isinstance(kind, str) else "user"


def _configured(config: Any, name: str) -> Any:
    for section in ("RichKubeSpawner", "RichProgressMixin"):
        try:
            if section in config and name in config[section]:
                return config[section][name]
        except Exception:  # not a traitlets Config: nothing configured there
            return None
    return None


def spawner_facts(spawner: Any, timeline: SpawnTimeline | None) -> Facts:
    """The facts an admin needs about the spawn ``timeline`` tells, which ``spawner`` ran:
    those kept with the timeline (``stream.spawn_facts.timeline_facts``), not what the
    spawner's options say now. A stored spawn has its own (``history.facts.shown_facts_of``)."""
    return fact_pairs(timeline_facts(spawner, timeline))
