"""Default rules for the API server refusing to create the server's objects: a namespace
quota that has no room left, and an admission webhook that says no.

Neither comes from the pod (it was never created): a controller reports it on its own
object (a ReplicaSet's or StatefulSet's ``FailedCreate``, an operator's ``ReconcileError``
on its custom resource), or KubeSpawner gets it back from the API server and fails the
spawn with it. So these rules match any kind, and ``refusal_summary`` words the same
text inside a failure message.

The quota text is the ResourceQuota admission plugin's own:
``exceeded quota: %s, requested: %s, used: %s, limited: %s`` with each list a
``prettyPrint`` of the exceeded resources (sorted ``name=quantity`` pairs joined by ","),
in kubernetes ``plugin/pkg/admission/resourcequota/controller.go`` (read at commits
077b23b and b547a95, v1.7- and v1.9-era trees) and, since the plugin moved,
``staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go`` (read at
commit b1ce15c, a v1.31+ tree: it uses client-go's typed workqueue); the earliest releases
wrote "Exceeded quota". The webhook text is ``admission webhook %q denied the request``
then ": " and the webhook's message (or its reason), else " without explanation"
(``staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/errors/statuserror.go``,
``ToStatusErr``).

A full quota may free up (other servers stop), so it is fatal only when the numbers show
it never can: the server alone asks for more than the quota allows in all.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

# Any reason a refusal comes with ("FailedCreate", "ReconcileError", "SyncFailed", ...),
# or none at all (a progress message of the spawner): the quick pre-filter on reason keeps
# the message pattern off the kubelet's and the scheduler's everyday events.
REFUSAL_REASON = r"(?i)(?:\w*(?:Fail|Error|Forbidden|Denied|Reject)\w*)?\Z"

# Lists hold no spaces ("limits.cpu=2,limits.memory=8Gi"); in a JSON body (KubeSpawner's
# ApiException) the last one ends at an escaped quote. Copies wrapped by hand (the
# Kubernetes docs' "...=700Mi,used: ...") still read.
_QUOTA_TEXT = (
    r"[Ee]xceeded quota:\s*(?P<quota>[^,\s\"\\]+),\s*requested:\s*(?P<requested>\S+?),\s*"
    r"used:\s*(?P<used>\S+?),\s*limited:\s*(?P<limited>[\w./=+,-]+)"
)
#: the rule's message pattern: the quota text anywhere in its first 4000 characters
QUOTA_MESSAGE = r"(?s).{0,4000}?" + _QUOTA_TEXT
_WEBHOOK_TEXT = (
    r"admission webhook \\*\"(?P<webhook>[^\"\\]{1,253})\\*\" denied the request(?:: ?(?P<why>[^\n]*))?"
)
# where a webhook's reason ends inside a JSON body: at the end of the "message" string
_JSON_END = re.compile(r'\\*",\s*\\*"(?:reason|details|code)\\*"')
_UNESCAPE = re.compile(r'\\+"')
WEBHOOK_MESSAGE = r"(?s).{0,4000}?" + _WEBHOOK_TEXT
_QUOTA_RE = re.compile(_QUOTA_TEXT)
_WEBHOOK_RE = re.compile(_WEBHOOK_TEXT, re.S)

HINT_QUOTA = "It can start once other servers in this namespace stop, or when an administrator raises the quota."
HINT_QUOTA_NEVER = (
    "Your server alone asks for more than this quota allows, so it cannot start in this "
    "namespace: choose a smaller server option if there is one, or ask an administrator to "
    "raise the quota."
)
HINT_WEBHOOK = (
    "A rule of this cluster refuses this server as it is set up. An administrator must change "
    "the server option or the rule: ask them and send them this page."
)

# -- quantities (k8s.io/apimachinery resource.Quantity: "8Gi", "500m", "1e3", "2") --------

_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE])?\Z")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def quantity(text: str) -> float | None:
    """A Kubernetes quantity as a number ("8Gi" -> 8589934592.0, "500m" -> 0.5); None if
    it is not one."""
    found = _QUANTITY.match(text.strip())
    if found is None:
        return None
    number, suffix = float(found.group(1)), found.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in "eE" and len(suffix) > 1:
        return number * 10.0 ** int(suffix[1:])
    return number * _DECIMAL.get(suffix, 1.0)


def _number(value: float) -> str:
    """At most one decimal, none when whole ("8", "0.5", "31.8")."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _bytes(value: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{_number(value / size)} {unit}"
    return f"{_number(value)} bytes"


class _Resource(NamedTuple):
    """How a quota's resource reads: its name in "the namespace's X quota" and its
    amounts (a count noun such as "CPU", or bytes, or a bare number)."""

    what: str
    noun: str | None  # "CPU" -> "2 CPUs"; None: bytes (sized) or a bare number
    sized: bool


def _resource(key: str) -> _Resource:
    """``limits.memory`` -> memory, ``requests.nvidia.com/gpu`` -> GPU, ``count/pods`` -> pod."""
    name = key
    for prefix in ("requests.", "limits.", "count/"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    storage_class = ""
    if ".storageclass.storage.k8s.io/" in name:
        storage_class, name = name.split(".storageclass.storage.k8s.io/", 1)
        name = name.removeprefix("requests.")
        storage_class += " "
    low = name.lower()
    if low == "cpu":
        return _Resource("CPU", "CPU", False)
    if low == "memory":
        return _Resource("memory", None, True)
    if low == "ephemeral-storage":
        return _Resource("disk space", None, True)
    if low == "storage":
        return _Resource(storage_class + "storage", None, True)
    if low.startswith("hugepages-"):
        return _Resource("huge-page memory", None, True)
    if low == "pods":
        return _Resource("pod", "pod", False)
    if low == "persistentvolumeclaims":
        return _Resource(storage_class + "volume", "volume", False)
    if "gpu" in low:
        return _Resource("GPU", "GPU", False)
    return _Resource(name, None, False)


def _amount(resource: _Resource, value: float) -> str:
    if resource.sized:
        return _bytes(value)
    if resource.noun:
        return f"{_number(value)} {resource.noun}" + ("" if value <= 1 else "s")
    return _number(value)


def _of(resource: _Resource, used: float, limit: float) -> str:
    """ "28 GiB of 32 GiB", "3 of 4 CPUs"."""
    if resource.sized or not resource.noun:
        return f"{_amount(resource, used)} of {_amount(resource, limit)}"
    return f"{_number(used)} of {_amount(resource, limit)}"


def _pairs(text: str) -> dict[str, float]:
    """``limits.cpu=2,limits.memory=8Gi`` -> {key: number}; items that do not parse are left out."""
    pairs: dict[str, float] = {}
    for item in text.split(","):
        key, sep, value = item.strip().rstrip(".;").partition("=")
        number = quantity(value) if sep else None
        if key and number is not None:
            pairs[key] = number
    return pairs


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


class Refusal(NamedTuple):
    """A refusal in plain words: the sentence, the hint, and whether waiting can never fix it."""

    sentence: str
    hint: str
    fatal: bool


def quota_never_fits(requested: str = "", limited: str = "", **_: str) -> bool:
    """Whether the server alone asks for more than the quota allows of some resource: then
    no server stopping can make room (the rule's ``fatal``)."""
    asked, limits = _pairs(requested), _pairs(limited)
    return any(key in limits and value > limits[key] for key, value in asked.items())


def quota_refusal(quota: str = "", requested: str = "", used: str = "", limited: str = "", **_: str) -> Refusal:
    """What an "exceeded quota" refusal means, from its numbers (generalised over the
    resources named: cpu, memory, pods, storage, GPUs, ..., with or without "requests."
    and "limits."; a resource named by both reads once)."""
    asked, taken, limits = _pairs(requested), _pairs(used), _pairs(limited)
    seen: dict[str, tuple[_Resource, str]] = {}
    for key in limits:
        if key in asked:
            resource = _resource(key)
            seen.setdefault(resource.what, (resource, key))
    if not seen:
        # numbers we cannot read: say what the refusal says, without them
        name = f" ({quota})" if quota else ""
        return Refusal(f"The namespace's quota{name} has no room left for your server", HINT_QUOTA, False)
    never = quota_never_fits(requested, limited)
    whats = _join(list(seen))
    if never:
        over = [(res, key) for res, key in seen.values() if asked[key] > limits[key]]
        asks = _join([_amount(res, asked[key]) for res, key in over])
        allows = _join([_amount(res, limits[key]) for res, key in over])
        what = _join([res.what for res, _key in over])
        sentence = (
            f"Your server asks for {asks}, more than the namespace's {what} quota ({quota}) "
            f"allows in all ({allows})"
        )
        return Refusal(sentence, HINT_QUOTA_NEVER, True)
    usage = _join([_of(res, taken.get(key, 0.0), limits[key]) for res, key in seen.values()])
    asks = _join([_amount(res, asked[key]) for res, key in seen.values()])
    sentence = f"The namespace's {whats} quota ({quota}) is full: {usage} used, and your server asks for {asks}"
    return Refusal(sentence, HINT_QUOTA, False)


def webhook_refusal(webhook: str = "", why: str = "", **_: str) -> Refusal:
    """An admission webhook's "no", with the webhook's own reason when it gave one."""
    # inside a JSON body the webhook's own quotes come backslash-escaped
    why = _UNESCAPE.sub('"', _JSON_END.split(why, maxsplit=1)[0]).strip()
    if why:
        return Refusal(f"The cluster's admission check {webhook} refused your server: {why}", HINT_WEBHOOK, False)
    return Refusal(f"The cluster's admission check {webhook} refused your server without saying why",
                   HINT_WEBHOOK, False)


def refusal_summary(text: str) -> Refusal | None:
    """The refusal inside any text (a failure message, an ApiException's JSON body), or None."""
    head = text[:8000]
    found = _QUOTA_RE.search(head)
    if found is not None:
        return quota_refusal(**found.groupdict(""))
    hook = _WEBHOOK_RE.search(head)
    if hook is not None:
        return webhook_refusal(**hook.groupdict(""))
    return None


def _quota_sentence(**groups: str) -> str:
    return quota_refusal(**groups).sentence


def _quota_hint(**groups: str) -> str:
    return quota_refusal(**groups).hint


def _webhook_sentence(**groups: str) -> str:
    return webhook_refusal(**groups).sentence


#: before the operators' rules: a refusal reads the same on any object
REFUSALS: list[dict[str, Any]] = [
    {
        "id": "quota-exceeded",
        "match": {"reason": REFUSAL_REASON, "message": QUOTA_MESSAGE},
        "template": _quota_sentence,
        "severity": "error",
        "fatal": quota_never_fits,
        "hint": _quota_hint,
        "phase": "requested",
    },
    {
        "id": "admission-webhook-denied",
        "match": {"reason": REFUSAL_REASON, "message": WEBHOOK_MESSAGE},
        "template": _webhook_sentence,
        "severity": "error",
        "hint": HINT_WEBHOOK,
        "phase": "requested",
    },
]
