"""Our default formatting rules, as data, in plain words for people new to Kubernetes.

One and only purpose: the wording. Each rule says what is happening in one short sentence;
rules for problems also say what it means for the user (``hint``). Rule order matters: the
first match wins, so specific rules come before general ones of the same reason. Event
wording comes from kubelet (events.go, images/image_manager.go), the scheduler, the volume
controllers, cluster-autoscaler and Karpenter, and from events captured on real clusters.

Callable templates (and hints) are called as ``f(**groups)`` like any rule template.
"""

from __future__ import annotations

import re
from typing import Any

from richprogress.wording.decisive_facts import (
    admission_fact,
    container_error_sentence,
    eviction_fact,
    karpenter_summary,
    mount_fact,
    multi_attach_holder,
    sandbox_problem,
)
from richprogress.wording.scheduling import summarize_scale_up_failure, summarize_scheduling

# The container an event is about, from involvedObject.fieldPath.
CONTAINER = r"spec\.(?:initContainers|containers|ephemeralContainers)\{(?P<container>[^}]+)\}"
# Kubelet quotes image names with Go's %q: a quote inside the name is escaped, so a hostile
# name ("<iframe srcdoc=\"...\">") is read whole, never cut at its first quote.
IMAGE = r'"(?P<image>(?=[^"])[^"\\]*(?:\\.[^"\\]*)*)"'  # unrolled: linear, fast on a 100 kB name

# Everything after the first line of a message is detail: (?s) lets ".*" take newlines.
_DETAIL = r"(?s)(?P<detail>.*)"
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


def _scale_up_failure_sentence(detail: str = "", **_: str) -> str:
    return summarize_scale_up_failure(detail).sentence


def _scale_up_failure_hint(detail: str = "", **_: str) -> str:
    return summarize_scale_up_failure(detail).hint or ""


_DURATION_RE = re.compile(r"(?:(\d+)h)?(?:(\d+)m(?!s))?(?:([\d.]+)s)?(?:([\d.]+)ms)?\Z")


def human_duration(text: str) -> str:
    """Go durations ("2m32.639s", "498ms", "1h2m3s") in words ("2 min 33 s", "0.5 s")."""
    found = _DURATION_RE.match(text)
    if not text or found is None:
        return text
    hours, minutes, seconds, millis = found.groups()
    total = float(seconds or 0) + float(millis or 0) / 1000
    if hours or minutes:
        secs = round(total)
        mins = int(minutes or 0) + int(hours or 0) * 60
        if secs == 60:
            mins, secs = mins + 1, 0
        return f"{mins} min {secs} s" if secs else f"{mins} min"
    if total < 10:
        return f"{total:.1f} s"
    return f"{round(total)} s"


def human_size(text: str) -> str:
    """A byte count in words ("3922990416" -> "3.9 GB")."""
    try:
        size = float(text)
    except ValueError:
        return text
    for unit in ("bytes", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1000
    return text  # pragma: no cover - the loop always returns


def _pulled_sentence(image: str = "", container: str = "", duration: str = "", size: str = "", **_: str) -> str:
    sentence = f"Downloaded the image {image} for the {container} container"
    if duration:
        sentence += f" in {human_duration(duration)}"
    if size:
        sentence += f" ({human_size(size)})"
    return sentence


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


def _karpenter_sentence(detail: str = "", **_: str) -> str:
    return karpenter_summary(detail)[0]


def _karpenter_hint(detail: str = "", **_: str) -> str:
    return karpenter_summary(detail)[1]


def _multi_attach_sentence(detail: str = "", **_: str) -> str:
    holder = multi_attach_holder(detail)
    if holder:
        return f"Your disk is still in use by {holder}, so it cannot be connected to this machine"
    return "Your disk is still connected to another machine"


def _mount_failed_sentence(volume: str = "", detail: str = "", **_: str) -> str:
    fact = mount_fact(detail)
    what = f"your storage ({volume})" if volume else "your storage"
    if fact:
        return f"Mounting {what} failed: {fact}; the cluster will try again"
    return f"Mounting {what} into your server failed; the cluster will try again"


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


def _unset_image(image: str) -> bool:
    """KubeSpawner writes an unset image as "None" (or "None:None"): the admin's config."""
    return image.split(":")[0].strip().lower() in ("", "none", "null")


def _invalid_image_sentence(image: str = "", **_: str) -> str:
    if _unset_image(image):
        return f"No image is set for this server (its image name is {image or 'empty'})"
    return f"The image name {image} is not a valid image name"


def _invalid_image_hint(image: str = "", **_: str) -> str:
    if _unset_image(image):
        return "Ask your administrator: this server option has no image set."
    return "Check the image name for typos (spaces, capital letters, a missing tag)."


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


_DISRUPTION_WHY = {
    "underutilized": "it was underused",
    "empty": "it was empty",
    "drifted": "its configuration changed",
    "expired": "it reached its maximum age",
    "emptiness": "it was empty",
    "consolidation": "it was underused",
    "drift": "its configuration changed",
    "expiration": "it reached its maximum age",
}


def _karpenter_evicted_sentence(why: str = "", **_: str) -> str:
    reason = _DISRUPTION_WHY.get(why.lower())
    sentence = "Your server was stopped because the cluster is removing its machine"
    return f"{sentence} ({reason})" if reason else sentence


def _karpenter_disrupting_sentence(why: str = "", **_: str) -> str:
    # A Node or NodeClaim event: about a machine, never "your server".
    reason = _DISRUPTION_WHY.get(why.lower())
    return "The cluster is removing a machine" + (f" ({reason})" if reason else "")


def _evicted_sentence(resource: str = "", detail: str = "", **_: str) -> str:
    if resource:
        words = _RESOURCE_WORDS.get(resource.lower(), resource)
        sentence = f"Your server was stopped because its machine ran low on {words}"
        fact = eviction_fact(detail)
        return f"{sentence} ({fact})" if fact else sentence
    return "Your server was stopped by the cluster to free up its machine"


def _scale_up_sentence(group: str = "", to: str = "", **_: str) -> str:
    if group:
        size = f"{to} machine" if to == "1" else f"{to} machines"
        return f"Adding a machine to the cluster for your server (machine group {group}, growing to {size})"
    return "Adding a machine to the cluster for your server"


# The pull-failure patterns are case-sensitive on purpose: registries and runtimes word these
# errors in fixed case, and case-insensitive scanning of long messages costs twice as much.
_PULL_HINT_MISSING = (
    "Check the image name and tag for typos, or choose another image. "
    "Your server cannot start with this image."
)
_PULL_HINT_DENIED = (
    "Check the image name for typos. If the image is private, ask your administrator "
    "to give the cluster access to it."
)

DEFAULT_RULES: list[dict[str, Any]] = [
    # ---- scheduling -------------------------------------------------------------------
    {
        "id": "scheduled",
        "match": {"reason": r"Scheduled\Z", "message": r".*?assigned \S+ to (?P<node>\S+)"},
        "template": "Found a machine for your server ({node})",
        "phase": "scheduled",
    },
    {
        "id": "karpenter-failed-scheduling",
        "match": {"reason": r"FailedScheduling\Z", "reportingComponent": r"karpenter",
                  "message": r"(?s)Failed to schedule pod, (?P<detail>.*)"},
        "template": _karpenter_sentence,
        "severity": "error",
        "hint": _karpenter_hint,
        "phase": "scheduling",
    },
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
        "match": {"reason": r"FailedScheduling\Z", "message": _DETAIL},
        "template": _scheduling_sentence,
        "severity": "warning",
        "hint": _scheduling_hint,
        "phase": "scheduling",
    },
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
        "match": {"reason": r"OutOf(?P<resource>\S+)\Z", "message": _DETAIL},
        "template": _out_of_sentence,
        "severity": "error",
        "hint": _out_of_hint,
        "phase": "scheduling",
    },
    # ---- autoscaling ------------------------------------------------------------------
    {
        "id": "triggered-scale-up",
        "match": {"reason": r"TriggeredScaleUp\Z",
                  "message": r"(?i)(?:pod triggered scale-up: \[\{(?:\S*/)?(?P<group>[^/\s]+) "
                             r"(?P<from>\d+)->(?P<to>\d+))?"},
        "template": _scale_up_sentence,
        "phase": "scaling",
    },
    {
        "id": "not-triggered-scale-up",
        "match": {"reason": r"NotTriggerScaleUp\Z", "message": _DETAIL},
        "template": _scale_up_failure_sentence,
        "severity": "warning",
        "hint": _scale_up_failure_hint,
        "phase": "scaling",
    },
    {
        "id": "karpenter-nominated",
        "match": {"reason": r"Nominated\Z",
                  "message": r"Pod should schedule on:? (?:node: )?(?:\w+/)?(?P<node>\S+)"},
        "template": "A new machine ({node}) is being prepared for your server",
        "phase": "scaling",
    },
    {
        "id": "karpenter-launched",
        "match": {"reason": r"Launched\Z", "reportingComponent": r"karpenter"},
        "template": "The cloud has started a new machine for the cluster",
        "phase": "scaling",
    },
    {
        "id": "karpenter-registered",
        "match": {"reason": r"Registered\Z", "reportingComponent": r"karpenter"},
        "template": "The new machine has joined the cluster",
        "phase": "scaling",
    },
    {
        "id": "karpenter-initialized",
        "match": {"reason": r"Initialized\Z", "reportingComponent": r"karpenter"},
        "template": "The new machine is ready to run servers",
        "phase": "scaling",
    },
    # ---- storage ----------------------------------------------------------------------
    {
        "id": "volume-wait-for-consumer",
        "match": {"reason": r"WaitForFirstConsumer\Z"},
        "template": "Your storage will be created once a machine is chosen for your server",
        "phase": "volume",
    },
    {
        "id": "volume-external-provisioning",
        "match": {"reason": r"ExternalProvisioning\Z",
                  "message": r"(?:.*?external provisioner ['\"](?P<provisioner>[^'\"]+)['\"])?"},
        "template": "Waiting for the storage service to create your disk",
        "phase": "volume",
    },
    {
        "id": "volume-provisioning",
        "match": {"reason": r"Provisioning\Z"},
        "template": "Creating a disk for your storage",
        "phase": "volume",
    },
    {
        "id": "volume-provisioned",
        "match": {"reason": r"ProvisioningSucceeded\Z"},
        "template": "Your disk has been created",
        "phase": "volume",
    },
    {
        "id": "volume-provisioning-failed",
        "match": {"reason": r"ProvisioningFailed\Z"},
        "template": "Creating a disk for your storage failed; the cluster will try again",
        "severity": "warning",
        "hint": "If this keeps happening, ask your administrator: the storage service reported an error.",
        "phase": "volume",
    },
    {
        "id": "volume-failed-binding",
        "match": {"reason": r"FailedBinding\Z"},
        "template": "No disk is available for your storage, and none can be created automatically",
        "severity": "error",
        "hint": "Ask your administrator: the cluster may have no storage class for user disks.",
        "phase": "volume",
    },
    {
        "id": "volume-attached",
        "match": {"reason": r"SuccessfulAttachVolume\Z"},
        "template": "Your disk is connected to the machine",
        "phase": "volume",
    },
    {
        "id": "volume-multi-attach",
        "match": {"reason": r"FailedAttachVolume\Z", "message": r"(?s)(?P<detail>Multi-Attach error.*)"},
        "template": _multi_attach_sentence,
        "severity": "warning",
        "hint": "A previous server of yours may still be stopping. Wait a few minutes and try again.",
        "phase": "volume",
    },
    {
        "id": "volume-attach-failed",
        "match": {"reason": r"FailedAttachVolume\Z"},
        "template": "Connecting your disk to the machine failed; the cluster will try again",
        "severity": "warning",
        "hint": "If this keeps happening for more than a few minutes, ask your administrator.",
        "phase": "volume",
    },
    {
        "id": "volume-mount-missing",
        "match": {"reason": r"FailedMount\Z",
                  "message": r"(?s).*?(?P<what>configmap|secret|persistentvolumeclaim) "
                             r"\"(?P<missing>[^\"]+)\" not found"},
        "template": "Storage your server needs is missing ({what} {missing} not found)",
        "severity": "error",
        "hint": "Ask your administrator: the server refers to a {what} that does not exist.",
        "phase": "volume",
    },
    {
        "id": "volume-mount-timeout",
        "match": {"reason": r"FailedMount\Z",
                  # the wait ends in "timed out waiting for the condition" up to v1.27 and in
                  # "context deadline exceeded" from v1.28 (volume_manager.go's PollUntilContextTimeout)
                  "message": r"(?s)Unable to (?:attach or )?mount volumes: unmounted volumes="
                             r"\[(?P<volumes>[^\]]*)\].*(?:timed out|context deadline exceeded)"},
        "template": "Your storage ({volumes}) is not mounted yet; still trying",
        "severity": "warning",
        "hint": "Storage can take a few minutes to become available. If it keeps failing, "
        "ask your administrator.",
        "phase": "volume",
    },
    {
        "id": "volume-mounted",
        "match": {"reason": r"SuccessfulMountVolume\Z",
                  "message": r'(?:MountVolume\.\w+ succeeded for volume "(?P<volume>[^"]+)")?'},
        "template": "Your storage is mounted",
        "phase": "volume",
    },
    {
        "id": "volume-mount-failed",
        "match": {"reason": r"FailedMount\Z",
                  "message": r'(?s)(?:MountVolume\.\w+ failed for volume "(?P<volume>[^"]{1,253})")?(?P<detail>.*)'},
        "template": _mount_failed_sentence,
        "severity": "warning",
        "hint": "If this keeps happening for more than a few minutes, ask your administrator.",
        "phase": "volume",
    },
    # ---- images -----------------------------------------------------------------------
    {
        "id": "image-pulling",
        "match": {"reason": r"Pulling\Z", "fieldPath": CONTAINER, "message": r"[Pp]ulling image " + IMAGE},
        "template": "Downloading the image {image} for the {container} container",
        "phase": "image",
    },
    {
        "id": "image-cached",
        "match": {"reason": r"Pulled\Z", "fieldPath": CONTAINER,
                  "message": r"Container image " + IMAGE + r" already present on machine"},
        "template": "The image {image} for the {container} container is already on the machine "
        "(no download needed)",
        "phase": "image",
    },
    {
        "id": "image-pulled",
        "match": {"reason": r"Pulled\Z", "fieldPath": CONTAINER,
                  "message": r"Successfully pulled image " + IMAGE
                             + r"(?: in (?P<duration>[\d.hms]+))?(?:.*?Image size: (?P<size>\d+) bytes)?"},
        "template": _pulled_sentence,
        "phase": "image",
    },
    {
        "id": "image-not-found",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER,
                  "message": r"(?s)Failed to pull image " + IMAGE
                             + r"(?:.{0,2000}?)(?:: not found|code = NotFound|manifest unknown|name unknown)"},
        "template": "The image {image} for the {container} container does not exist",
        "severity": "error",
        "hint": _PULL_HINT_MISSING,
        "phase": "image",
    },
    {
        "id": "image-access-denied",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER,
                  "message": r"(?s)Failed to pull image " + IMAGE
                             + r"(?:.{0,2000}?)(?:access denied|[Uu]nauthorized|failed to authorize|[Ff]orbidden"
                               r"|authentication required|denied: |\b40[13]\b)"},
        "template": "The image {image} for the {container} container could not be downloaded: "
        "it does not exist or is private",
        "severity": "error",
        "hint": _PULL_HINT_DENIED,
        "phase": "image",
    },
    {
        "id": "image-rate-limited",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER,
                  "message": r"(?s)Failed to pull image " + IMAGE
                             + r"(?:.{0,2000}?)(?:toomanyrequests|[Tt]oo [Mm]any [Rr]equests|rate limit)"},
        "template": "The image registry is limiting downloads of {image} right now; the cluster will try again",
        "severity": "warning",
        "hint": "Wait a few minutes. If it keeps happening, ask your administrator "
        "(the cluster may need a registry login or a mirror).",
        "phase": "image",
    },
    {
        "id": "image-pull-failed",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"Failed to pull image " + IMAGE},
        "template": "Downloading the image {image} for the {container} container failed; "
        "the cluster will try again",
        "severity": "warning",
        "hint": "If it keeps failing, check the image name or ask your administrator.",
        "phase": "image",
    },
    {
        "id": "image-invalid-name",
        "match": {"reason": r"InspectFailed\Z|InvalidImageName\Z",
                  "message": r"(?s)(?:Failed to apply default image tag " + IMAGE + r")?"},
        "template": _invalid_image_sentence,
        "severity": "error",
        "hint": _invalid_image_hint,
        "phase": "image",
    },
    {
        "id": "image-invalid-name-error",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"Error: InvalidImageName"},
        "template": "The image name for the {container} container is not valid",
        "severity": "error",
        "hint": "Check the image name for typos (spaces, capital letters, a missing tag).",
        "phase": "image",
    },
    {
        "id": "image-never-pull",
        "match": {"reason": r"ErrImageNeverPull\Z", "fieldPath": CONTAINER,
                  "message": r"(?:Container image " + IMAGE + ")?"},
        "template": "The image {image} for the {container} container is not on the machine, "
        "and the server is set never to download it",
        "severity": "error",
        "hint": "Ask your administrator: the image pull policy is 'Never'.",
        "phase": "image",
    },
    {
        "id": "image-err-pull",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"Error: ErrImagePull"},
        "template": "Could not download the image for the {container} container",
        "severity": "error",
        "hint": "See the message above about the image for the reason.",
        "phase": "image",
    },
    {
        "id": "image-pull-backoff",
        "match": {"reason": r"Failed\Z", "fieldPath": CONTAINER, "message": r"Error: ImagePullBackOff"},
        "template": "Waiting before trying again to download the image for the {container} container",
        "severity": "warning",
        "hint": "Downloading the image failed before; see the earlier message for why.",
        "phase": "image",
    },
    {
        "id": "image-backoff-pulling",
        "match": {"reason": r"BackOff\Z", "fieldPath": CONTAINER, "message": r"Back-off pulling image " + IMAGE},
        "template": "Waiting before trying again to download the image {image} for the {container} container",
        "severity": "warning",
        "hint": "Downloading the image failed before; see the earlier message for why.",
        "phase": "image",
    },
    # ---- containers -------------------------------------------------------------------
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
        "hint": "Choose a bigger server size or use less memory; ask your administrator if it keeps happening.",
        "phase": "starting",
    },
    {
        "id": "container-terminated",
        "match": {"fieldPath": CONTAINER,
                  "message": r"Container \S+ terminated: (?P<why>\w+)(?: \(exit code (?P<code>-?\d+)\))?"},
        "template": _terminated_sentence,
        "severity": "error",
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
    {
        "id": "evicted-disk",
        "match": {"reason": r"Evicted\Z", "message": r"(?:Pod|Container \S+) ephemeral local storage usage exceeds"},
        "template": "Your server was stopped because it wrote more temporary files than it may",
        "severity": "error",
        "hint": "Save large files in your home folder or delete temporary files, then start your server again.",
    },
    {
        # Karpenter's disruption (consolidation, drift, expiry) evicts the pods of a machine
        # it removes: kubernetes-sigs/karpenter pkg/controllers/node/termination, v0.3x-v1.x.
        "id": "karpenter-evicted",
        # "Evicted pod" alone up to v1.1; "Evicted pod: <reason>" from v1.2 (terminator/events).
        "match": {"reason": r"Evicted\Z", "message": r"Evicted pod(?:: ?(?P<why>\w*))?\Z"},
        "template": _karpenter_evicted_sentence,
        "severity": "error",
        "hint": "Start your server again: it will start on another machine.",
    },
    {
        "id": "karpenter-disrupting",
        "match": {"reason": r"DisruptionTerminating\Z|Disrupting\Z",
                  "message": r"Disrupting (?:NodeClaim|Node|Machine)(?:: (?P<why>\w+))?"},
        "template": _karpenter_disrupting_sentence,
    },
    {
        "id": "evicted",
        "match": {"reason": r"Evicted\Z",
                  "message": r"(?s)(?:The node was low on resource: \[?(?P<resource>[\w./-]*[\w/-]))?(?P<detail>.*)"},
        "template": _evicted_sentence,
        "severity": "error",
        "hint": "Start your server again. If it keeps happening, ask your administrator.",
    },
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
    {
        "id": "pod-node-not-ready",
        "match": {"reason": r"NodeNotReady\Z", "kind": r"Pod\Z"},
        "template": "The machine running your server stopped responding",
        "severity": "warning",
        "hint": "If your server does not come back within a few minutes, start it again or ask your administrator.",
    },
    {
        "id": "scale-down-eviction",
        "match": {"reason": r"ScaleDown\Z", "kind": r"Pod\Z", "message": r"deleting pod for node scale down"},
        "template": "The cluster is removing the machine your server runs on, so the server will be stopped",
        "severity": "warning",
        "hint": "Start your server again once it has stopped.",
    },
    {
        "id": "sandbox-failed",
        "match": {"reason": r"FailedCreatePodSandBox\Z", "message": _DETAIL},
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
    {
        "id": "taint-eviction-cancelled",
        "match": {"reason": r"TaintManagerEviction\Z", "message": r"Cancelling deletion"},
        "template": "Your server can stay on its machine: a planned removal was cancelled",
    },
    {
        "id": "taint-eviction",
        "match": {"reason": r"TaintManagerEviction\Z", "message": r"Marking for deletion"},
        "template": "Your server's machine is being taken out of service, so the server will be stopped",
        "severity": "warning",
        "hint": "Start your server again once it has stopped.",
    },
]


# ---- causes no amount of waiting fixes (DESIGN.md contract 7) -------------------------------
# Kept apart from the wording above: which causes are fatal is a separate decision from how
# they read. ``richprogress.story.fail_fast`` ends a spawn only after a fatal cause has held (it
# repeated, or lasted); see the README's "Fail fast" section for why each one is here and
# what is deliberately not (scale-ups, slow pulls, storage, quotas, rate limits, 5xx).

# cluster-autoscaler's NotTriggerScaleUp lists one reason per machine group
# (core/scaleup/orchestrator, "pod didn't trigger scale-up: 2 Insufficient cpu, 1 max node
# group size reached"). Only reasons that a new machine of that group can never overcome
# count; one group at its maximum size or in back-off may still free up.
_NEVER_FITS_ITEM = re.compile(
    r"\s*(?:\d+\s+)?(?:Insufficient \S+|node\(s\) didn't match Pod's node affinity(?:/selector)?"
    r"|node\(s\) didn't match node selector)\s*\Z"
)
_SCALE_UP_BODY = re.compile(r"\s*pod didn't trigger scale-up(?:\s*\([^)]*\))?:?(.*)", re.S)


def never_fits(detail: str = "", **_: str) -> bool:
    """Whether a NotTriggerScaleUp says that no machine group could ever take the pod."""
    found = _SCALE_UP_BODY.match(detail)
    body = (found.group(1) if found else detail).strip().rstrip(".")
    items = [item for item in re.split(r",\s*", body) if item.strip()]
    return bool(items) and all(_NEVER_FITS_ITEM.match(item) for item in items)


def karpenter_never_fits(detail: str = "", **_: str) -> bool:
    """Whether Karpenter says no instance type of any node pool fits (a node pool at its
    limits may free up, so "exceed limits" is not fatal). Up to v1.4 each node pool's reason
    starts "incompatible with nodepool"; from v1.5 the reason stands alone ("no instance type
    has enough resources, requirements=..., resources=...", "incompatible requirements, ...")."""
    return "exceed limits" not in detail and (
        "no instance type satisfied" in detail or "incompatible with nodepool" in detail
        or "no instance type has enough resources" in detail or detail.startswith("incompatible requirements")
    )


def _missing_config(what: str = "", **_: str) -> bool:
    # a PVC KubeSpawner creates itself may still be on its way; a secret or config map not
    return what in ("secret", "configmap")


#: rule id -> ``fatal`` (True, or a function of the rule's groups like a template)
FATAL_RULES: dict[str, Any] = {
    "image-not-found": True,
    "image-access-denied": True,
    "image-invalid-name": True,
    "image-invalid-name-error": True,
    "image-never-pull": True,
    "not-triggered-scale-up": never_fits,
    "karpenter-failed-scheduling": karpenter_never_fits,
    "volume-mount-missing": _missing_config,
    "container-crash-backoff": True,
    "container-oom-killed": True,
    "container-terminated": True,
}

for _rule in DEFAULT_RULES:
    if _rule["id"] in FATAL_RULES:
        _rule["fatal"] = FATAL_RULES[_rule["id"]]
