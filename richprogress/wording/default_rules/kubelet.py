"""Default rules for kubelet's events about a server's pod: admission, containers created,
started, probed, crashing or stopped, evictions, and the pod sandbox."""

from __future__ import annotations

from typing import Any

from richprogress.wording.decisive_facts import (
    admission_fact,
    container_error_sentence,
    eviction_fact,
    sandbox_problem,
)
from richprogress.wording.default_rules.patterns import CONTAINER, DETAIL

_RESOURCE_WORDS = {
    "cpu": "CPU",
    "memory": "memory",
    "ephemeral-storage": "disk space",
    "pods": "room for more servers",
}


def _out_of_sentence(resource: str = "", detail: str = "", **_: str) -> str:
    words = _RESOURCE_WORDS.get(resource.lower(), "GPU" if "gpu" in resource.lower() else resource)
    sentence = f"The machine chosen for your server did not have enough free {words}"
    fact = admission_fact(detail)
    return f"{sentence} ({fact[0]})" if fact else sentence


def _out_of_hint(detail: str = "", **_: str) -> str:
    fact = admission_fact(detail)
    if fact and fact[1]:
        # More than the whole machine: starting again cannot help.
        return ("Your server asks for more than the whole machine has. Choose a smaller server "
                "option, or ask your administrator to fix this option.")
    return ("Start your server again; if it keeps happening, choose a smaller server size "
            "or ask your administrator.")


def _container_error(container: str = "", detail: str = "", **_: str) -> str:
    return container_error_sentence(container, detail)


def _sandbox_sentence(detail: str = "", **_: str) -> str:
    problem = sandbox_problem(detail)
    if problem == "ips":
        return "The machine has no IP addresses left for your server"
    if problem == "network":
        return "The machine's network plugin could not set up your server's network"
    return ("The machine could not set up a sandbox (network and isolation) for your server; "
            "the cluster will try again")


def _sandbox_hint(detail: str = "", **_: str) -> str:
    if sandbox_problem(detail):
        return "This needs your administrator: the cluster's network could not give your server an address."
    return "If it keeps happening, ask your administrator."


def _probe_warning_sentence(container: str = "", probe: str = "", **_: str) -> str:
    return f"The {container} container passed its {probe.lower()} health check, with a warning"


def _disk_eviction_sentence(limit: str = "", climit: str = "", volume: str = "", vlimit: str = "", **_: str) -> str:
    if volume:
        return (f"Your server was stopped because its temporary folder {volume} grew past its limit of "
                f"{vlimit}")
    limit = limit or climit
    sentence = "Your server was stopped because it wrote more temporary files than it may"
    return f"{sentence} (its limit is {limit})" if limit else sentence


def _oom_sentence(process: str = "", **_: str) -> str:
    if process:
        return f"The program {process} ran out of memory and was stopped"
    return "A program ran out of memory and was stopped"


def memory_words(quantity: str) -> str:
    """A memory limit as people read it: bytes ("536870912", as KubeSpawner writes
    ``mem_limit``) in binary units ("512 MiB"); Kubernetes quantities ("1Gi") as they are."""
    if not quantity.isdigit():
        return quantity
    size = float(quantity)
    units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    while size >= 1024 and len(units) > 1:
        size /= 1024
        units.pop(0)
    unit = units[0]
    return f"{size:.0f} {unit}" if size == int(size) else f"{size:.1f} {unit}"


def _oom_killed_sentence(container: str = "", limit: str = "", **_: str) -> str:
    limit = memory_words(limit)
    if limit:
        return (f"Your server ran out of memory and was stopped: the {container} container "
                f"used more than its {limit} limit")
    return f"Your server ran out of memory and was stopped (the {container} container)"


def _terminated_sentence(container: str = "", why: str = "", code: str = "", **_: str) -> str:
    code = f" (exit code {code})" if code else ""
    if why in ("ContainerCannotRun", "StartError"):
        return f"The {container} container could not be run{code}"
    return f"The {container} container stopped with an error{code}"


def _evicted_sentence(resource: str = "", detail: str = "", **_: str) -> str:
    if resource:
        words = _RESOURCE_WORDS.get(resource.lower(), resource)
        sentence = f"Your server was stopped because its machine ran low on {words}"
        fact = eviction_fact(detail)
        return f"{sentence} ({fact})" if fact else sentence
    return "Your server was stopped by the cluster to free up its machine"


ADMISSION: list[dict[str, Any]] = [
    {
        "id": "node-affinity-mismatch",
        "match": {"reason": r"NodeAffinity\Z"},
        "template": "The machine given to your server does not match where it must run",
        "severity": "error",
        "hint": "This is likely a configuration problem; ask your administrator.",
        "phase": "scheduling",
    },
    {
        "id": "out-of-resource",
        "match": {"reason": r"OutOf(?P<resource>\S+)\Z", "message": DETAIL},
        "template": _out_of_sentence,
        "severity": "error",
        "hint": _out_of_hint,
        "phase": "scheduling",
    },
]

CONTAINERS: list[dict[str, Any]] = [
    {
        "id": "container-created",
        "match": {"reason": r"Created\Z", "message": r"Created container:? (?!with )(?P<container>\S+)"},
        "template": "Created the {container} container",
        "phase": "starting",
    },
    {
        # Older kubelets write "Created container" (docker: "... with docker id ..."), newer
        # ones "Container created": the name is then only in the fieldPath.
        "id": "container-created-field",
        "match": {"reason": r"Created\Z", "fieldPath": CONTAINER, "message": r"Created container|Container created"},
        "template": "Created the {container} container",
        "phase": "starting",
    },
    {
        "id": "container-started",
        "match": {"reason": r"Started\Z", "message": r"Started container:? (?!with )(?P<container>\S+)"},
        "template": "Started the {container} container",
        "phase": "starting",
    },
    {
        "id": "container-started-field",
        "match": {"reason": r"Started\Z", "fieldPath": CONTAINER, "message": r"Started container|Container started"},
        "template": "Started the {container} container",
        "phase": "starting",
    },
    {
        "id": "container-probe-killed",
        "match": {"reason": r"Killing\Z", "fieldPath": CONTAINER,
                  "message": r"Container \S+ failed (?P<probe>liveness|startup) probe"},
        "template": "The {container} container did not pass its {probe} health check and is being restarted",
        "severity": "error",
        "hint": "Your server stopped answering while it started. Ask your administrator to look at the "
        "server's logs; a larger server size may help.",
        "phase": "starting",
    },
    {
        "id": "container-post-start-killed",
        "match": {"reason": r"Killing\Z", "fieldPath": CONTAINER, "message": r"FailedPostStartHook"},
        "template": "The start-up command of the {container} container failed, so the container is being stopped",
        "severity": "error",
        "hint": "Ask your administrator to check the server's start-up (post-start) command.",
        "phase": "starting",
    },
    {
        "id": "container-stopping",
        "match": {"reason": r"Killing\Z", "message": r"Stopping container:? (?P<container>\S+)"},
        "template": "Stopping the {container} container",
    },
    {
        "id": "container-stopping-field",
        "match": {"reason": r"Killing\Z", "fieldPath": CONTAINER,
                  "message": r"Killing container with id |Container \S+ definition changed"},
        "template": "Stopping the {container} container",
    },
    {
        "id": "container-crash-backoff",
        "match": {"reason": r"BackOff\Z", "fieldPath": CONTAINER, "message": r"Back-off restarting failed container"},
        "template": "The {container} container keeps crashing; waiting before restarting it",
        "severity": "error",
        "fatal": True,
        "hint": "Your server crashes while starting. Try a different image or a larger server size, "
        "or ask your administrator to look at the server's logs.",
        "phase": "starting",
    },
    {
        "id": "container-unhealthy",
        "match": {"reason": r"Unhealthy\Z", "fieldPath": CONTAINER,
                  "message": r"(?P<probe>Readiness|Liveness|Startup) probe (?:failed|errored)"},
        "template": "The {container} container did not pass a health check yet ({probe} probe)",
        "severity": "warning",
        "hint": "Servers can take a while to answer at first. If it keeps failing, ask your administrator.",
        "phase": "starting",
    },
    {
        # kubelet prober.go, v1.15+: the probe passed but said something worth noting (a redirect
        # it did not follow, a body it cut short). Not a failure.
        "id": "container-probe-warning",
        "match": {"reason": r"ProbeWarning\Z", "fieldPath": CONTAINER,
                  "message": r"(?P<probe>Readiness|Liveness|Startup) probe warning"},
        "template": _probe_warning_sentence,
        "severity": "info",
        "phase": "starting",
        # a Warning-type event about a probe that passed
        "show": "quiet",
    },
    {
        "id": "container-post-start-failed",
        "match": {"reason": r"FailedPostStartHook\Z", "fieldPath": CONTAINER},
        "template": "The start-up command of the {container} container failed",
        "severity": "error",
        "hint": "Ask your administrator to check the server's start-up (post-start) command.",
        "phase": "starting",
    },
    {
        "id": "container-error",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"(?s)Error: (?P<detail>.*)"},
        "template": _container_error,
        "severity": "error",
        "hint": "Ask your administrator; the server's configuration may be wrong.",
        "phase": "starting",
    },
    # Container terminations: Kubernetes reports these only in the pod's status;
    # RichKubeSpawner makes events of them (``kubespawner.container_terminations``).
    {
        "id": "container-oom-killed",
        "match": {"reason": r"OOMKilled\Z", "fieldPath": CONTAINER,
                  "message": r"Container \S+ was killed because it ran out of memory"
                             r"(?: \(exit code -?\d+(?:, memory limit (?P<limit>[^)]+))?\))?\Z"},
        "template": _oom_killed_sentence,
        "severity": "error",
        "fatal": True,
        "hint": "Choose a bigger server size or use less memory; ask your administrator if it keeps happening.",
        "phase": "starting",
    },
    {
        "id": "container-terminated",
        "match": {"fieldPath": CONTAINER,
                  "message": r"Container \S+ terminated: (?P<why>\w+)(?: \(exit code (?P<code>-?\d+)\))?"},
        "template": _terminated_sentence,
        "severity": "error",
        "fatal": True,
        "hint": "Your server stopped while starting. Try a different image, or ask your administrator to look at "
        "the server's logs.",
        "phase": "starting",
    },
    {
        "id": "out-of-memory",
        "match": {"reason": r"OOMKill(?:ing|ed)\Z",
                  "message": r"(?:(?s:.*?)Killed process \d+ \((?P<process>[^)]*)\))?"},
        "template": _oom_sentence,
        "severity": "error",
        "hint": "Your server used more memory than it may. Choose a larger server size, or use less memory.",
        "phase": "starting",
    },
    # kubelet eviction_manager.go (v1.14-v1.30): "Pod ephemeral local storage usage exceeds the
    # total limit of containers %s. ", "Container %s exceeded its local ephemeral storage limit
    # %q. ", "Usage of EmptyDir volume %q exceeds the limit %q. ": the server's own limit, kept
    {
        "id": "evicted-disk",
        "match": {"reason": r"Evicted\Z",
                  "message": r"(?:(?:Pod|Container \S+) ephemeral local storage usage exceeds the total limit of "
                             r"containers (?P<limit>[\w.]+?)\.?\s*\Z|Container \S+ exceeded its local ephemeral "
                             r'storage limit "(?P<climit>[^"]{1,40})"|Usage of EmptyDir volume "(?P<volume>[^"]{1,253})" '
                             r'exceeds the limit "(?P<vlimit>[^"]{1,40})"|(?:Pod|Container \S+) ephemeral local storage)'},
        "template": _disk_eviction_sentence,
        "severity": "error",
        "hint": "Save large files in your home folder or delete temporary files, then start your server again.",
    },
]

#: after Karpenter's evictions: this one takes any Evicted event
EVICTIONS: list[dict[str, Any]] = [
    {
        "id": "evicted",
        "match": {"reason": r"Evicted\Z",
                  "message": r"(?s)(?:The node was low on resource: \[?(?P<resource>[\w./-]*[\w/-]))?(?P<detail>.*)"},
        "template": _evicted_sentence,
        "severity": "error",
        "hint": "Start your server again. If it keeps happening, ask your administrator.",
    },
]

SANDBOX: list[dict[str, Any]] = [
    {
        "id": "sandbox-failed",
        "match": {"reason": r"FailedCreatePodSandBox\Z", "message": DETAIL},
        "template": _sandbox_sentence,
        "severity": "warning",
        "hint": _sandbox_hint,
        "phase": "starting",
    },
    {
        "id": "network-not-ready",
        "match": {"reason": r"NetworkNotReady\Z"},
        "template": "The machine's network is not ready yet; your server will start when it is",
        "severity": "warning",
        "hint": "This is usual right after a machine was added and resolves within a minute or two. "
        "If it does not, ask your administrator.",
        "phase": "starting",
    },
    {
        "id": "sandbox-changed",
        "match": {"reason": r"SandboxChanged\Z"},
        "template": "The machine is setting up your server's sandbox again; the server will restart",
        "phase": "starting",
    },
]
