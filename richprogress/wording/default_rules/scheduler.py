"""Default rules for kube-scheduler's events: a machine found, none found yet (and why, in
plain words), and a server preempted for more important work."""

from __future__ import annotations

from typing import Any

from richprogress.wording.default_rules.patterns import DETAIL
from richprogress.wording.scheduling import summarize_scheduling

# A FailedScheduling message that names storage problems and no machine problem (looked for
# in its first 4000 characters only, so a huge message costs no more than a short one).
_STORAGE_ONLY = (
    r"(?=(?s:.{0,4000}?)(?:unbound immediate PersistentVolumeClaims|available persistent volumes to bind"
    r"|volume node affinity conflict|no available volume zone|bound to non-existent pv|PreBind plugin \"VolumeBinding\""
    r"|[Vv]olume binding|binding volumes|persistentvolumeclaim \"[^\"]*\" not found))"
    r"(?!(?s:.{0,4000}?)(?:Insufficient|Too many pods|taint|affinity/selector|(?<!volume )node affinity|anti-affinity"
    r"|pod affinity|free ports|unschedulable|topology spread|node name|hostname))"
)


def _scheduling_sentence(detail: str = "", **_: str) -> str:
    summary = summarize_scheduling(detail)
    if summary is None:
        # A format we do not know: say what we know, the raw text stays in raw_message.
        return "No machine can take your server yet"
    return summary.sentence


def _scheduling_hint(detail: str = "", **_: str) -> str:
    summary = summarize_scheduling(detail)
    if summary is None or summary.hint is None:
        return "Wait a few minutes; if it keeps happening, ask your administrator."
    return summary.hint


SCHEDULED: list[dict[str, Any]] = [
    {
        "id": "scheduled",
        "match": {"reason": r"Scheduled\Z", "message": r".*?assigned \S+ to (?P<node>\S+)"},
        "template": "Found a machine for your server ({node})",
        "phase": "scheduled",
    },
]

#: the storage-only rule before the one that takes any FailedScheduling
FAILED_SCHEDULING: list[dict[str, Any]] = [
    {
        # Storage is not scheduling: unbound or unbindable volumes are the storage step.
        "id": "failed-scheduling-storage",
        "match": {"reason": r"FailedScheduling\Z", "message": _STORAGE_ONLY + r"(?P<detail>(?s:.*))"},
        "template": _scheduling_sentence,
        "severity": "warning",
        "hint": _scheduling_hint,
        "phase": "volume",
    },
    {
        "id": "failed-scheduling",
        "match": {"reason": r"FailedScheduling\Z", "message": DETAIL},
        "template": _scheduling_sentence,
        "severity": "warning",
        "hint": _scheduling_hint,
        "phase": "scheduling",
    },
]

PREEMPTIONS: list[dict[str, Any]] = [
    {
        # Whose event is it: a user placeholder (z2jh's scheduling.userPlaceholder) gives up
        # its place *for* a real server; that is good news, not a stop.
        "id": "placeholder-preempted",
        "match": {"reason": r"Preempted\Z", "kind": r"Pod\Z", "name": r"user-placeholder"},
        "template": "Room was made for a server: a placeholder gave up its place",
        "phase": "scheduling",
    },
    {
        # The scheduler may preempt any pod of the namespace (another user's, a placeholder),
        # and the event may reach a timeline through its related object: name the pod
        # rather than say "your server".
        "id": "preempted",
        "match": {"reason": r"Preempted\Z", "kind": r"Pod\Z", "name": r"(?P<pod>.+)"},
        "template": "The server {pod} was stopped to make room for more important work",
        "severity": "error",
        "hint": "Start your server again. If it keeps happening, ask your administrator.",
    },
]
