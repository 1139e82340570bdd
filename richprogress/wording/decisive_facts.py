"""The decisive fact of an event, in a few plain words, for the default rules' sentences.

Reads the one fact a person needs to act out of an event's own text
(requested vs available CPU, memory used vs asked for, the pod holding a disk, what the file
server said, the missing program), and say it in words with units people read. Pure
functions of text; every function returns "" (or a neutral sentence) when the text does
not hold what it looks for, so a sentence never states what the event did not say.

Sources of the formats (Kubernetes release tags where the text is the same):
- kubelet admission: pkg/kubelet/lifecycle/predicate.go, ``InsufficientResourceError``
  "Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d" (v1.14-v1.33);
- kubelet eviction: pkg/kubelet/eviction/helpers.go, ``nodeLowMessageFmt``,
  ``containerMessageFmt`` "Container %s was using %s, request is %s, has larger consumption of %v";
- attach/detach controller: pkg/controller/volume/attachdetach/reconciler/reconciler.go,
  "Multi-Attach error for volume %q Volume is already used by pod(s) %s";
- Karpenter: pkg/controllers/provisioning/scheduling (v0.3x-v1.x), "no instance type has enough
  resources", "no instance type satisfied resources {...}", "all available instance types exceed
  limits for nodepool".
"""

from __future__ import annotations

import json
import re

# -- quantities ----------------------------------------------------------------------------

_SUFFIX = {
    "": 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}
_QUANTITY_RE = re.compile(r"\s*([0-9]{1,30}(?:\.[0-9]{1,30})?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?\s*\Z")


def parse_quantity(text: str) -> float | None:
    """A Kubernetes quantity ("1500m", "4Gi", "2") as a number; None if it is not one."""
    found = _QUANTITY_RE.match(text or "")
    if found is None:
        return None
    return float(found.group(1)) * _SUFFIX[found.group(2) or ""]


def _number(value: float) -> str:
    """Few digits, as people say amounts: 200, 3.9, 0.25, 1,536."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2g}"
    return text[:-2] if text.endswith(".0") else text


def cpu_words(cores: float) -> str:
    """200 -> "200 CPUs", 0.5 -> "0.5 CPU", 3.92 -> "3.9 CPUs"."""
    return f"{_number(cores)} CPU" + ("" if cores <= 1 else "s")


def bytes_words(size: float) -> str:
    """A byte count in binary units: 1610612736 -> "1.5 GiB"."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{_number(size)} {unit}"
        size /= 1024
    return f"{size:.0f} bytes"  # pragma: no cover - the loop always returns


def amount_words(resource: str, value: float) -> str:
    """An amount of ``resource`` as people read it (CPU in cores, memory in GiB, ...)."""
    name = resource.lower()
    if name == "cpu":
        return cpu_words(value)
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages"):
        return bytes_words(value)
    if "gpu" in name:
        return f"{_number(value)} GPU" + ("" if value == 1 else "s")
    return f"{_number(value)} {resource}"


# -- kubelet admission (OutOfcpu, OutOfmemory, ...) ------------------------------------------

_ADMISSION_RE = re.compile(
    r"Node didn't have enough resource: (?P<res>[\w./-]+), requested: (?P<req>\d{1,20}), "
    r"used: (?P<used>\d{1,20}), capacity: (?P<cap>\d{1,20})"
)


def admission_fact(message: str) -> tuple[str, bool] | None:
    """("asks for 200 CPUs; the machine has 3.9 CPUs", bigger than the machine) from a kubelet
    admission failure; None when the message does not say the amounts."""
    found = _ADMISSION_RE.search(message[:2000])
    if found is None:
        return None
    resource = found.group("res")
    scale = 1e-3 if resource == "cpu" else 1.0  # the kubelet counts CPU in millicores
    requested = int(found.group("req")) * scale
    capacity = int(found.group("cap")) * scale
    used = int(found.group("used")) * scale
    free = max(0.0, capacity - used)
    fact = f"it asks for {amount_words(resource, requested)}; the machine has {amount_words(resource, capacity)}"
    if requested <= capacity:
        fact += f", {amount_words(resource, free)} of it free"
    return fact, requested > capacity


# -- eviction ------------------------------------------------------------------------------

_EVICTION_CONTAINER_RE = re.compile(
    r"Container (?P<container>\S+) was using (?P<used>\S+), (?:request is|which exceeds its request of) "
    r"(?P<request>[^,]+), has larger consumption of (?P<res>[\w/-]+(?:\.[\w/-]+)*)"
)


def eviction_fact(message: str) -> str:
    """"the notebook container used 1.5 GiB; it asked for 1 GiB" from an eviction message."""
    found = _EVICTION_CONTAINER_RE.search(message[:4000])
    if found is None:
        return ""
    resource = found.group("res")
    used, request = parse_quantity(found.group("used")), parse_quantity(found.group("request"))
    used_words = amount_words(resource, used) if used is not None else found.group("used")
    request_words = amount_words(resource, request) if request is not None else found.group("request")
    if request == 0:
        return f"the {found.group('container')} container used {used_words} and asked for none"
    return f"the {found.group('container')} container used {used_words}; it asked for {request_words}"


# -- Karpenter -----------------------------------------------------------------------------

_KARPENTER_RESOURCES_RE = re.compile(r"(?:satisfied resources|resources=)\s*(\{[^{}]{0,2000}\})")


def karpenter_summary(detail: str) -> tuple[str, str]:
    """(sentence, hint) for Karpenter's "Failed to schedule pod, ..." message."""
    text = detail[:8000]
    if "exceed limits for nodepool" in text or "exceed limits for provisioner" in text:
        return (
            "The cluster has reached its size limit and cannot add a machine for your server",
            "Ask your administrator: the cluster's machine pool is at its limit.",
        )
    if "no instance type has enough resources" in text or "no instance type satisfied resources" in text:
        asks = _karpenter_requests(text)
        sentence = "No type of machine the cluster can add is big enough for your server"
        if asks:
            sentence += f" (it asks for {asks})"
        return (
            sentence,
            ("Choose a smaller server option. If this option should work, ask your administrator "
             "to check it: waiting will not help."),
        )
    return (
        "The cluster has no type of machine that can run your server as chosen",
        "Try a smaller server size, or ask your administrator.",
    )


def _karpenter_requests(text: str) -> str:
    found = _KARPENTER_RESOURCES_RE.search(text)
    if found is None:
        return ""
    try:
        requests = json.loads(found.group(1))
    except ValueError:
        return ""
    if not isinstance(requests, dict):
        return ""
    words = []
    for resource in ("cpu", "memory", "nvidia.com/gpu", "amd.com/gpu"):
        value = requests.get(resource)
        amount = parse_quantity(value) if isinstance(value, str) else None
        if amount:
            words.append(amount_words(resource, amount))
    return " and ".join(words)


# -- storage -------------------------------------------------------------------------------

_MULTI_ATTACH_RE = re.compile(r"Volume is already used by pods? ?\(?s?\)? ?(?P<pods>[\w.,\s-]{1,300}?)(?:\s*$|\.)")
_MOUNT_FACTS: tuple[tuple[str, str], ...] = (
    ("not found in the list of registered CSI drivers", "the storage driver is not running on this machine"),
    ("access denied by server", "the file server refused access"),
    ("Permission denied", "permission was denied"),
    ("permission denied", "permission was denied"),
    ("No such file or directory", "the folder does not exist on the file server"),
    ("Connection refused", "the file server refused the connection"),
    ("Connection timed out", "the file server did not answer"),
    ("timed out", "the storage did not answer in time"),
    ("DeadlineExceeded", "the storage driver did not answer in time"),
    ("No route to host", "the file server cannot be reached"),
    ("Host is down", "the file server cannot be reached"),
    ("Stale file handle", "the file server lost track of the folder"),
)


def multi_attach_holder(message: str) -> str:
    """The pod(s) holding the disk, from a Multi-Attach error; "" when it does not say."""
    found = _MULTI_ATTACH_RE.search(message[:2000])
    return found.group("pods").strip().rstrip(",") if found else ""


def mount_fact(message: str) -> str:
    """What went wrong mounting storage, in a few words; "" when the message does not say."""
    text = message[:4000]
    for needle, words in _MOUNT_FACTS:
        if needle in text:
            return words
    return ""


# -- containers ----------------------------------------------------------------------------

_EXEC_MISSING_RE = re.compile(r'exec: \\?"(?P<program>[^"\\]{1,200})\\?": executable file not found')
_STAT_MISSING_RE = re.compile(r"(?:stat|exec) (?P<path>/[^:\s\"]{1,300}): no such file or directory")
# "configmap" from kubelet's watch-based manager (v1.14+ default); the API server's own NotFound,
# which the older TTL-cache manager passed on, says "configmaps"/"secrets".
_CONFIG_MISSING_RE = re.compile(r'(?P<what>configmap|secret)s? "(?P<name>[^"]{1,253})" not found')


def container_error_sentence(container: str, detail: str) -> str:
    """Why a container could not start, in words, from kubelet's "Error: ..." message."""
    text = detail[:4000]
    found = _EXEC_MISSING_RE.search(text)
    if found:
        return f"The {container} container could not start: the program {found.group('program')} is not in the image"
    found = _STAT_MISSING_RE.search(text)
    if found:
        return f"The {container} container could not start: {found.group('path')} does not exist in the image"
    found = _CONFIG_MISSING_RE.search(text)
    if found:
        return (f"The {container} container could not start: it needs the {found.group('what')} "
                f"{found.group('name')}, which does not exist")
    if "runAsNonRoot" in text:
        return f"The {container} container could not start: the image runs as root, which is not allowed here"
    return f"The {container} container could not start"


# -- sandboxes -----------------------------------------------------------------------------

_NO_IPS = ("no IP addresses available", "failed to assign an IP address", "failed to allocate for range",
           "IPAM", "no available IP", "InsufficientFreeAddressesInSubnet")
_CNI = ("failed to setup network for sandbox", "failed to set up sandbox container", "plugin type=",
        "networkPlugin cni failed", "CNI")


def sandbox_problem(message: str) -> str:
    """"ips", "network" or "" for a FailedCreatePodSandBox message."""
    text = message[:4000]
    if any(needle in text for needle in _NO_IPS):
        return "ips"
    if any(needle in text for needle in _CNI):
        return "network"
    return ""
