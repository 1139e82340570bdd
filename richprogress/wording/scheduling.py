"""Summarize why no machine can take the server, from scheduler and autoscaler messages.

Turns a FailedScheduling message ("0/5 nodes are available: 2
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
_TAINT_RE = re.compile(r"node\(s\) had (?:untolerated )?taints?(?:\(s\))? \{([^:}]*)")
# The scheduler's PreBind failures are not "0/N nodes" lists: the volume binding timed out.
_PREBIND_RE = re.compile(r'\s*(?:running PreBind plugin "VolumeBinding"|binding volumes|'
                         r"Volume binding started|error while running \"VolumeBinding\")", re.I)

# Summaries read the first _MAX_CHARS only: a real message names each reason once, so it
# is short even on a cluster of thousands of machines; a longer one is junk or hostile, and
# keeps its raw text whole (the formatter's work per event stays bounded).
_MAX_CHARS = 32_000


class Summary(NamedTuple):
    """A one-sentence cause and what the user can do."""

    sentence: str
    hint: str | None


_RESOURCES = {"cpu": "CPU", "memory": "memory", "ephemeral-storage": "disk space", "pods": "room"}

#: Taints that say a machine is broken, full or closed, not reserved for other work
#: (kubernetes pkg/apis/core/well_known_taints.go, cluster-autoscaler and Karpenter taints).
_HEALTH_TAINTS: dict[str, tuple[str, str, str]] = {
    "node.kubernetes.io/not-ready": ("notready", "is not ready", "are not ready"),
    "node.kubernetes.io/unreachable": ("unreachable", "cannot be reached", "cannot be reached"),
    "node.kubernetes.io/unschedulable": ("cordoned", "is closed to new servers", "are closed to new servers"),
    "node.kubernetes.io/disk-pressure": ("disk", "is short of disk space", "are short of disk space"),
    "node.kubernetes.io/memory-pressure": ("memory", "is short of memory", "are short of memory"),
    "node.kubernetes.io/pid-pressure": ("pid", "is running too many programs", "are running too many programs"),
    "node.kubernetes.io/network-unavailable": ("network", "has no network yet", "have no network yet"),
    "node.cloudprovider.kubernetes.io/uninitialized": ("starting", "is still starting up", "are still starting up"),
    "node.cloudprovider.kubernetes.io/shutdown": ("leaving", "is shutting down", "are shutting down"),
    "toberemovedbyautoscaler": ("leaving", "is being removed", "are being removed"),
    "deletioncandidateofclusterautoscaler": ("leaving", "is about to be removed", "are about to be removed"),
    "karpenter.sh/disrupted": ("leaving", "is being removed", "are being removed"),
    "karpenter.sh/disruption": ("leaving", "is being removed", "are being removed"),
    "karpenter.sh/unregistered": ("starting", "is still starting up", "are still starting up"),
}

#: Keys whose items are about the user's storage, not about machines: storage is not
#: scheduling, so these are worded as storage, and the rule puts them in the storage step.
STORAGE_KEYS = frozenset({"pvc", "pvc-missing", "no-pv", "volume-affinity", "volume-zone", "disk-in-use", "volumes"})


def _classify(text: str) -> tuple[str, str, str]:
    """Why machines were turned away -> (key, phrase for one, phrase for several).

    Keys group the same reason; ``res:`` keys are phrased together ("enough free X or Y");
    an ``other:`` key is a reason we do not know (the summary then keeps the raw text).
    """
    low = text.lower()
    if low.startswith("insufficient "):
        resource = text[len("insufficient ") :].strip()
        if "gpu" in resource.lower():
            return ("res:GPU", "", "")
        name = _RESOURCES.get(resource.lower(), resource)
        return (f"res:{name}", "", "")
    if low.startswith("too many pods"):
        return ("res:room", "", "")
    if (low.startswith("node(s) had untolerated taint(s)") and "{" not in low) or low.startswith(
        "node(s) had taints that the pod didn't tolerate"
    ):
        # v1.10-v1.17 ("had taints that the pod didn't tolerate") did not name the taint either.
        # Kubernetes 1.30+ no longer names the taint: it may be a reserved pool or a broken
        # machine, so say only what the event says.
        return ("taint-any", "is closed to servers like this one", "are closed to servers like this one")
    taint = _TAINT_RE.match(low)
    if taint:
        found = _HEALTH_TAINTS.get(taint.group(1).strip())
        if found is not None:
            return found
        return ("taint", "is reserved for other work", "are reserved for other work")
    if "were unschedulable" in low or "was unschedulable" in low:
        return ("cordoned", "is closed to new servers", "are closed to new servers")
    if "had unknown conditions" in low:
        return ("unreachable", "is in an unknown state", "are in an unknown state")
    # storage
    if "volume node affinity conflict" in low:
        return ("volume-affinity", "cannot reach your existing disk", "cannot reach your existing disk")
    if "no available volume zone" in low:
        return ("volume-zone", "is in another zone than your disk", "are in another zone than your disk")
    if "available persistent volumes to bind" in low:
        return ("no-pv", "has no disk available for your storage", "have no disk available for your storage")
    if "unbound immediate persistentvolumeclaims" in low:
        return ("pvc", "", "")
    if "bound to non-existent pv" in low or ("persistentvolumeclaim" in low and "not found" in low):
        return ("pvc-missing", "", "")
    if "exceed max volume count" in low:
        return ("volumes", "has no room for another disk", "have no room for another disk")
    if "had no available disk" in low:
        return ("disk-in-use", "already has your disk in use by another server",
                "already have your disk in use by another server")
    # where the server may run
    if "didn't match pod's node affinity" in low or "didn't match node selector" in low or (
        "node affinity" in low and "volume" not in low
    ):
        return ("selector", "doesn't match this server's machine type", "don't match this server's machine type")
    if "requested node name" in low or "requested hostname" in low:
        return ("nodename", "is not the one machine this server must run on",
                "are not the one machine this server must run on")
    if "topology spread constraints" in low:
        return ("spread", "would break this server's rules for spreading out",
                "would break this server's rules for spreading out")
    if "free ports" in low:
        return ("ports", "has the needed network port in use", "have the needed network port in use")
    # Affinity is not anti-affinity: "pod affinity rules" means it must run next to something.
    if "anti-affinity" in low and "affinity/anti-affinity" not in low:
        return ("anti-affinity", "runs something this server must not share a machine with",
                "run something this server must not share a machine with")
    if "pod affinity rules" in low:
        return ("affinity", "doesn't run what this server must run next to",
                "don't run what this server must run next to")
    if "affinity/anti-affinity" in low:
        return ("affinity-any", "doesn't meet this server's rules about its neighbours",
                "don't meet this server's rules about its neighbours")
    return ("other:" + text, text, text)


def _join(parts: list[str], word: str = "and") -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + f" {word} " + parts[-1]


_HINT_ADMIN_STORAGE = ("Your storage needs an administrator's help: ask an admin and send them "
                       "the details of this page.")
_HINTS = {
    "res": "This is usual when the cluster is busy or is adding a machine: wait a few minutes. "
    "If it keeps happening, choose a smaller server size or ask your administrator.",
    # the scheduler knows the running machines only: a machine of the right kind may be added
    "selector": "The cluster may add a machine of this kind within a few minutes. If nothing happens, "
    "this server option may ask for a kind of machine the cluster does not have: ask your administrator.",
    "no-nodes": "The cluster may add a machine within a few minutes. If nothing happens, ask your administrator.",
    "starting": "A new machine is starting; your server should start on it in a minute or two.",
    "pvc": "Your storage is being prepared; this usually resolves itself within a minute. "
    "If it does not, ask your administrator.",
    "no-pv": _HINT_ADMIN_STORAGE,
    "pvc-missing": _HINT_ADMIN_STORAGE,
    "volume-affinity": "Your disk can only be used from some machines, and none of them can take the "
    "server now. Wait a few minutes; if it keeps happening, ask your administrator.",
    "volume-zone": _HINT_ADMIN_STORAGE,
    "storage": _HINT_ADMIN_STORAGE,
    "notready": "Some machines are not working right now. If no machine becomes free within a few "
    "minutes, ask your administrator.",
    "unreachable": "Some machines are not working right now. If no machine becomes free within a few "
    "minutes, ask your administrator.",
    "cordoned": "Machines are closed to new servers, perhaps for maintenance. Ask your administrator "
    "if this does not change soon.",
    "nodename": "This server is set to run on one machine only. Ask your administrator.",
}
# When every machine is turned away for the same reason, one plain sentence says it.
_ALL = {
    "selector": "No running machine matches this server's machine type",
    "starting": "The only machines available are still starting up",
    "notready": "No machine is ready to take servers right now",
    "unreachable": "No machine can be reached right now",
    "cordoned": "All machines are closed to new servers",
    "leaving": "All machines are being removed",
    "taint": "All machines are reserved for other work",
    "taint-any": "No machine is open to servers like this one",
    "volume-affinity": "No machine that can reach your existing disk can take your server",
    "volume-zone": "No machine is in the same zone as your disk",
    "no-pv": "No disk is available for your storage",
    "affinity": "No machine runs what this server must run next to",
    "anti-affinity": "Every machine runs something this server must not share a machine with",
}
_DEFAULT_HINT = "Wait a few minutes; if it keeps happening, ask your administrator."
_PREBIND = Summary("Your storage could not be connected in time; the cluster will try again",
                   "Storage can take a few minutes. If it keeps happening, ask your administrator.")


def summarize_scheduling(message: str) -> Summary | None:
    """Summarize a FailedScheduling message; None if the format is not recognized.

    None also when any part of it is a reason we do not know: a sentence never holds a
    raw fragment, the event's own message is one click away instead.
    """
    if len(message) > _MAX_CHARS:
        return None
    # The same message repeats (and a rule asks for sentence and hint): remember short ones.
    if len(message) <= _CACHE_MAX_CHARS:
        return _summarize_scheduling_cached(message)
    return _summarize_scheduling(message)


def is_storage_only(message: str) -> bool:
    """Whether a FailedScheduling message is about the user's storage alone."""
    if _PREBIND_RE.match(message):
        return True
    head = _HEADER_RE.match(message[:_MAX_CHARS])
    if head is None:
        return False
    keys = {_classify(_ITEM_RE.match(item.strip()).group(2))[0]  # type: ignore[union-attr]
            for item in _SPLIT_RE.split(_body(head.group(3))) if item.strip()}
    return bool(keys) and keys <= STORAGE_KEYS


_CACHE_MAX_CHARS = 2000


@functools.lru_cache(maxsize=256)
def _summarize_scheduling_cached(message: str) -> Summary | None:
    return _summarize_scheduling(message)


def _body(text: str) -> str:
    # Drop the preemption sentence: whether evicting others would help is not the user's concern.
    cut = text.find(" preemption:")
    if cut >= 0:
        text = text[:cut]
    return text.strip().rstrip(".")


def _summarize_scheduling(message: str) -> Summary | None:
    if _NO_NODES_RE.match(message):
        return Summary("The cluster has no machines running right now", _HINTS["no-nodes"])
    if _PREBIND_RE.match(message):
        return _PREBIND
    head = _HEADER_RE.match(message)
    if head is None:
        return None
    total = int(head.group(2))
    body = _body(head.group(3))
    if total == 0 and not body:
        return Summary("The cluster has no machines running right now", _HINTS["no-nodes"])
    return _summarize_items(body, total, lead="No machine can take your server yet")


def _count_words(count: int, total: int, one: str, many: str) -> str:
    """ "1 is ...", "3 are ...", or "some are ..." when the count is not believable."""
    if count == 1:
        return f"1 {one}"
    if count <= 0 or (total and count > total):
        return f"some {many}"
    return f"{count} {many}"


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
        digits = found.group(1)
        # A count of 10**400 is junk, not a cluster: keep the arithmetic small.
        count = int(digits) if digits and len(digits) <= 9 else (-1 if digits else 0)
        key, one, many = _classify(found.group(2))
        if key.startswith("other:"):
            return None  # a reason we do not know: keep the raw message whole
        first_key = first_key or key
        if key.startswith("res:"):
            if key[4:] not in resources:
                resources.append(key[4:])
            continue
        entry = others.setdefault(key, [0, one, many])
        entry[0] = -1 if count < 0 or entry[0] < 0 else entry[0] + count

    storage_keys = [key for key in others if key in STORAGE_KEYS]
    parts: list[str] = []
    if resources:
        sentence = "No machine has enough free " + _join(resources, "or")
        hint_key = "res"
    elif "pvc" in others:
        sentence = "Your storage is not ready yet"
        hint_key = "pvc"
    elif "pvc-missing" in others:
        sentence = "Your storage refers to a disk that does not exist"
        hint_key = "pvc-missing"
    else:
        sentence = ""
        hint_key = (first_key or "other").split(":")[0]
        if storage_keys and len(storage_keys) == len(others):
            hint_key = storage_keys[0]
    others.pop("pvc", None)
    others.pop("pvc-missing", None)
    for key, (count, one, many) in others.items():
        if count and count == total and not resources and len(others) == 1 and key in _ALL and not sentence:
            return Summary(_ALL[key], _HINTS.get(hint_key, _DEFAULT_HINT))
        parts.append(_count_words(count, total, one, many))
    if not sentence and not parts:
        return None
    if sentence and parts:
        sentence = f"{sentence}, and {_join(parts)}"
    elif parts:
        if storage_keys and len(storage_keys) == len(others):
            lead = "No machine can use your storage"
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
    "not ready for scale-up": ("notready", "is not ready to add machines", "are not ready to add machines"),
}
# cluster-autoscaler's other per-group reasons, by how they start: "max cluster %s limit reached"
# (1.20-1.34, any list of resources) and "exceeded quota: %q, resources: %s" (1.35+).
_GROUP_PREFIXES = (
    ("max cluster ", ("max", "would exceed the cluster's size limit", "would exceed the cluster's size limit")),
    ("exceeded quota", ("max", "would exceed the cluster's quota", "would exceed the cluster's quota")),
)
# Count-less reasons about the whole cluster (eventing_scale_up_processor.go, 1.33+).
_CLUSTER_ITEMS = {"max total nodes in cluster reached": "the cluster already has as many machines as it may"}
# The scale-up item splitter must not cut "exceeded quota: "q", resources: cpu, memory" apart.
_SCALE_UP_SPLIT_RE = re.compile(r",\s+(?=\d+ |pod has |persistentvolumeclaim |node\(s\) |max total )")


def _group_item(text: str) -> tuple[str, str, str] | None:
    low = text.lower()
    found = _GROUP_ITEMS.get(low)
    if found is not None:
        return found
    for prefix, words in _GROUP_PREFIXES:
        if low.startswith(prefix):
            return words
    return None


def summarize_scale_up_failure(message: str) -> Summary:
    """Summarize a cluster-autoscaler NotTriggerScaleUp message (never None)."""
    if len(message) <= _CACHE_MAX_CHARS:
        return _summarize_scale_up_cached(message)
    return _summarize_scale_up(message)


@functools.lru_cache(maxsize=256)
def _summarize_scale_up_cached(message: str) -> Summary:
    return _summarize_scale_up(message)


#: What to do after a NotTriggerScaleUp, by what its machine groups said (``_scale_up_hint``).
HINT_NO_SUCH_MACHINE = (
    "This server option asks for a kind of machine this cluster does not have. An administrator "
    "must change the option or add such machines: ask them for help and send them this page."
)
_SCALE_UP_HINTS = {
    "too-big": "No machine the cluster can add is big enough for this server. Choose a smaller server "
    "option if there is one, or ask your administrator.",
    "nothing-fits": "No machine the cluster can add fits this server: the machines of its kind are too "
    "small. Choose a smaller server option if there is one, or ask your administrator.",
    "other": "The cluster may be at its size limit, or no machine type fits the server you chose. "
    "Try a smaller server size, or ask your administrator.",
}


def _scale_up_hint(kinds: set[str], unknown: bool) -> str:
    """The hint that follows what the machine groups said: none of the right kind (only an
    admin can help), all too small (a smaller option may fit), else what may free up."""
    if unknown or not kinds or not kinds <= {"selector", "res"}:
        return _SCALE_UP_HINTS["other"]
    if kinds == {"selector"}:
        return HINT_NO_SUCH_MACHINE
    return _SCALE_UP_HINTS["too-big" if kinds == {"res"} else "nothing-fits"]


def _summarize_scale_up(message: str) -> Summary:
    found = _SCALE_UP_RE.match(message)
    body = (found.group(1) if found else message).strip().rstrip(".")
    parts: list[str] = []
    resources: list[str] = []
    kinds: set[str] = set()  # "res", "selector", or "other" for any other group's answer
    unknown = len(message) > _MAX_CHARS
    for item in ([] if unknown else _SCALE_UP_SPLIT_RE.split(body)):
        item_match = _ITEM_RE.match(item.strip().rstrip(".,; "))
        if item_match is None or not item_match.group(2):  # pragma: no cover
            continue
        digits = item_match.group(1) or ""
        count = int(digits) if digits and len(digits) <= 9 else (2 if digits else 0)
        text = item_match.group(2).strip()
        whole = _CLUSTER_ITEMS.get(text.lower())
        if whole is not None:
            kinds.add("other")
            if whole not in parts:
                parts.append(whole)
            continue
        special = _group_item(text)
        if special:
            _key, one, many = special
            kinds.add("other")
        else:
            key, one, many = _classify(text)
            if key.startswith("res:"):
                kinds.add("res")
                if key[4:] not in resources:
                    resources.append(key[4:])
                continue
            if key.startswith("other:"):
                unknown = True  # never a raw fragment inside the sentence
                break
            kinds.add("selector" if key == "selector" else "other")
        phrase = f"{count} machine group{'s' if count != 1 else ''} {one if count == 1 else many}"
        if phrase not in parts:
            parts.append(phrase)
    sentence = "The cluster cannot add a machine that fits your server"
    if resources:
        parts.insert(0, "no machine type has enough " + _join(resources, "or"))
    if parts and not unknown:
        sentence += ": " + _join(parts)
    return Summary(sentence, _scale_up_hint(kinds, unknown))
