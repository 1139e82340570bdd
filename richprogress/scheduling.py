"""Summarize why no machine can take the server, from scheduler and autoscaler messages.

One and only purpose: turn a FailedScheduling message ("0/5 nodes are available: 2
Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector. preemption: ...")
or a cluster-autoscaler NotTriggerScaleUp message into one short plain sentence and a hint.
Handles the formats of recent Kubernetes versions (1.22-1.33): "had untolerated taint
{...}" and the older "had taint {...}, that the pod didn't tolerate", volume and claim
problems, "Too many pods", extended resources such as nvidia.com/gpu.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

_HEADER_RE = re.compile(r"\s*(\d+)/(\d+) nodes are available:?\s*(.*)", re.S)
_NO_NODES_RE = re.compile(r"\s*no nodes available to schedule pods", re.I)
# Items are ", "-separated, each usually starting with a count; a taint's "{k: v}" may hold
# a comma, so split only where the next item starts with a number or a known count-less text.
_SPLIT_RE = re.compile(r",\s+(?=\d+ |pod has |persistentvolumeclaim |node\(s\) )")
_ITEM_RE = re.compile(r"(?:(\d+) )?(.*)", re.S)
_TAINT_RE = re.compile(r"node\(s\) had (?:untolerated )?taints? \{([^:}]*)")


class Summary(NamedTuple):
    """A one-sentence cause and what the user can do."""

    sentence: str
    hint: str | None


# Why a node was rejected -> (key, phrase for one node, phrase for several).
# Keys group similar reasons; RESOURCE keys are phrased together as "enough free X or Y".
_RESOURCES = {"cpu": "CPU", "memory": "memory", "ephemeral-storage": "disk space", "pods": "room"}


def _classify(text: str) -> tuple[str, str, str]:
    low = text.lower()
    if low.startswith("insufficient "):
        resource = text[len("insufficient ") :].strip()
        if "gpu" in resource.lower():
            return ("res:GPU", "", "")
        name = _RESOURCES.get(resource.lower(), resource)
        return (f"res:{name}", "", "")
    if low.startswith("too many pods"):
        return ("res:room", "", "")
    if "didn't match pod's node affinity" in low or "didn't match node selector" in low or (
        "node affinity" in low and "volume" not in low
    ):
        return ("selector", "doesn't match this server's machine type", "don't match this server's machine type")
    taint = _TAINT_RE.match(low)
    if taint:
        key = taint.group(1).strip()
        if key in ("node.kubernetes.io/not-ready", "node.cloudprovider.kubernetes.io/uninitialized"):
            return ("starting", "is still starting up", "are still starting up")
        if key in ("node.kubernetes.io/unschedulable", "toberemovedbyautoscaler", "deletioncandidateofclusterautoscaler"):
            return ("leaving", "is being taken out of service", "are being taken out of service")
        return ("taint", "is reserved for other work", "are reserved for other work")
    if "were unschedulable" in low or "unschedulable" in low:
        return ("leaving", "is being taken out of service", "are being taken out of service")
    if "volume node affinity conflict" in low:
        return ("zone", "is in a different zone from your storage", "are in a different zone from your storage")
    if "unbound immediate persistentvolumeclaims" in low or "persistentvolumeclaim" in low:
        return ("pvc", "", "")
    if "exceed max volume count" in low:
        return ("volumes", "has no room for another disk", "have no room for another disk")
    if "available persistent volumes to bind" in low:
        return ("zone", "has no disk that fits your storage", "have no disk that fits your storage")
    if "free ports" in low:
        return ("ports", "has the needed network port in use", "have the needed network port in use")
    if "affinity" in low:
        return ("affinity", "runs something this server must not share a machine with",
                "run something this server must not share a machine with")
    return ("other:" + text, text, text)


def _join(parts: list[str], word: str = "and") -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + f" {word} " + parts[-1]


_HINTS = {
    "res": "This is usual when the cluster is busy or is adding a machine: wait a few minutes. "
    "If it keeps happening, choose a smaller server size or ask your administrator.",
    "selector": "The cluster usually adds a machine of the right type within a few minutes. "
    "If nothing happens, ask your administrator.",
    "starting": "A new machine is starting; your server should start on it in a minute or two.",
    "pvc": "Your storage is being prepared; this usually resolves itself within a minute. "
    "If it does not, ask your administrator.",
    "zone": "Your storage lives in one zone of the cloud and no machine there can take the "
    "server. Ask your administrator if this does not resolve within a few minutes.",
}
# When every machine is turned away for the same reason, one plain sentence says it.
_ALL = {
    "selector": "No running machine matches this server's machine type",
    "starting": "The only machines available are still starting up",
    "leaving": "All machines are being taken out of service",
    "taint": "All machines are reserved for other work",
    "zone": "No machine is in the same zone as your storage",
}
_DEFAULT_HINT = "Wait a few minutes; if it keeps happening, ask your administrator."


def summarize_scheduling(message: str) -> Summary | None:
    """Summarize a FailedScheduling message; None if the format is not recognized."""
    # The same message repeats (and a rule asks for sentence and hint): remember short ones.
    if len(message) <= _CACHE_MAX_CHARS:
        return _summarize_scheduling_cached(message)
    return _summarize_scheduling(message)


_CACHE_MAX_CHARS = 2000


@functools.lru_cache(maxsize=256)
def _summarize_scheduling_cached(message: str) -> Summary | None:
    return _summarize_scheduling(message)


def _summarize_scheduling(message: str) -> Summary | None:
    if _NO_NODES_RE.match(message):
        return Summary("The cluster has no machines running right now", _HINTS["selector"])
    head = _HEADER_RE.match(message)
    if head is None:
        return None
    total = int(head.group(2))
    body = head.group(3)
    # Drop the preemption sentence: whether evicting others would help is not the user's concern.
    cut = body.find(" preemption:")
    if cut >= 0:
        body = body[:cut]
    body = body.strip().rstrip(".")
    if total == 0 and not body:
        return Summary("The cluster has no machines running right now", _HINTS["selector"])
    return _summarize_items(body, total, lead="No machine can take your server yet")


def _summarize_items(body: str, total: int, lead: str) -> Summary | None:
    resources: list[str] = []
    others: dict[str, list] = {}
    first_key = None
    for item in _SPLIT_RE.split(body):
        item = item.strip().rstrip(".,; ")
        if not item:
            continue
        found = _ITEM_RE.match(item)
        if found is None:  # pragma: no cover - the pattern matches any text
            continue
        count = int(found.group(1)) if found.group(1) else 0
        key, one, many = _classify(found.group(2))
        first_key = first_key or key
        if key.startswith("res:"):
            if key[4:] not in resources:
                resources.append(key[4:])
            continue
        entry = others.setdefault(key, [0, one, many])
        entry[0] += count

    parts: list[str] = []
    if resources:
        sentence = "No machine has enough free " + _join(resources, "or")
        hint_key = "res"
    elif "pvc" in others:
        sentence = "Your storage is not ready yet"
        hint_key = "pvc"
    else:
        sentence = ""
        hint_key = first_key.split(":")[0] if first_key else "other"
    others.pop("pvc", None)
    for key, (count, one, many) in others.items():
        if key.startswith("other:"):
            parts.append(f"{count}: {one}" if count else one)
        elif count == 1:
            parts.append(f"1 {one}")
        elif count and count == total and not resources and len(others) == 1 and key in _ALL:
            return Summary(_ALL[key], _HINTS.get(hint_key, _DEFAULT_HINT))
        elif count:
            parts.append(f"{count} {many}")
        else:
            parts.append(f"some {many}")
    if not sentence and not parts:
        return None
    if sentence and parts:
        sentence = f"{sentence}, and {_join(parts)}"
    elif parts:
        sentence = f"{lead}: {_join(parts)}"
    return Summary(sentence, _HINTS.get(hint_key, _DEFAULT_HINT))


_SCALE_UP_RE = re.compile(
    r"\s*pod didn't trigger scale-up(?:\s*\(it wouldn't fit if a new node is added\))?:?\s*(.*)",
    re.S | re.I,
)
_GROUP_ITEMS = {
    "max node group size reached": ("max", "is already at its maximum size", "are already at their maximum size"),
    "max cluster cpu, memory limit reached": ("max", "would exceed the cluster's size limit", "would exceed the cluster's size limit"),
    "in backoff after failed scale-up": ("backoff", "failed to add a machine recently", "failed to add a machine recently"),
}


def summarize_scale_up_failure(message: str) -> Summary:
    """Summarize a cluster-autoscaler NotTriggerScaleUp message (never None)."""
    if len(message) <= _CACHE_MAX_CHARS:
        return _summarize_scale_up_cached(message)
    return _summarize_scale_up(message)


@functools.lru_cache(maxsize=256)
def _summarize_scale_up_cached(message: str) -> Summary:
    return _summarize_scale_up(message)


def _summarize_scale_up(message: str) -> Summary:
    found = _SCALE_UP_RE.match(message)
    body = (found.group(1) if found else message).strip().rstrip(".")
    parts: list[str] = []
    resources: list[str] = []
    for item in _SPLIT_RE.split(body):
        item_match = _ITEM_RE.match(item.strip().rstrip(".,; "))
        if item_match is None or not item_match.group(2):  # pragma: no cover
            continue
        count = int(item_match.group(1) or 0)
        text = item_match.group(2).strip()
        special = _GROUP_ITEMS.get(text.lower())
        if special:
            _key, one, many = special
        else:
            key, one, many = _classify(text)
            if key.startswith("res:"):
                resources.append(key[4:])
                continue
            if key.startswith("other:"):
                parts.append(f"{count}: {text}" if count else text)
                continue
        parts.append(f"{count} machine group{'s' if count != 1 else ''} {one if count == 1 else many}")
    sentence = "The cluster cannot add a machine that fits your server"
    if resources:
        parts.insert(0, "no machine type has enough " + _join(resources, "or"))
    if parts:
        sentence += ": " + _join(parts)
    return Summary(
        sentence,
        "The cluster may be at its size limit, or no machine type fits the server you chose. "
        "Try a smaller server size, or ask your administrator.",
    )
