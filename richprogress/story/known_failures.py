"""The known kinds of failure: how to recognise each from a record's reason and its own
words, how telling it is (its weight), the step it belongs to and the hint it gives.

``classify`` finds a record's kind; the diagnosis weighs candidates by it, ``recovery``
names what ends it, and a record with no ``phase`` of its own is filed under its step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from richprogress.story.hints import (
    HINT_ADMIN,
    HINT_CRASH,
    HINT_IMAGE_NAME,
    HINT_MACHINE_GONE,
    HINT_MEMORY,
    HINT_NO_SUCH_MACHINE,
    HINT_QUOTA,
    HINT_RETRY,
    HINT_SMALLER,
    HINT_WEBHOOK,
    HINT_WRONG_PLATFORM,
)
from richprogress.story.record_text import text_field


@dataclass(frozen=True)
class Failure:
    """One known kind of failure: how to recognise it and how telling it is."""

    name: str
    reasons: frozenset[str]  # empty = any reason
    pattern: re.Pattern[str] | None  # searched in the raw message; None = any message
    weight: int  # higher explains more; the image-not-found beats the back-off after it
    phase: str
    hint: str


def _failure(
    name: str, reasons: str, pattern: str | None, weight: int, phase: str, hint: str
) -> Failure:
    return Failure(
        name,
        frozenset(reasons.split()),
        re.compile(pattern, re.IGNORECASE | re.DOTALL) if pattern else None,
        weight,
        phase,
        hint,
    )


#: First match wins; weights order them when several records match. An unknown error
#: weighs 70 and an unknown warning 20, so known follow-ups (back-offs) rank below a
#: surprising error and specific causes rank above it.
_FAILURES: tuple[Failure, ...] = (
    # The API server refused to create the pod (any object reports it: an operator's custom
    # resource, a ReplicaSet's FailedCreate): the ResourceQuota admission plugin's text, and
    # an admission webhook's (see wording/default_rules/refusals.py).
    _failure("quota", "", r"exceeded quota:\s*[^,\s]+,\s*requested:", 88, "requested", HINT_QUOTA),
    _failure("admission-refused", "", r'admission webhook \\*"[^"]+\\*" denied the request', 85, "requested",
             HINT_WEBHOOK),
    _failure(
        "image-rate-limited",
        "Failed",
        r"Failed to pull image.*?(toomanyrequests|too many requests|rate limit|\b429\b)",
        85,
        "image",
        HINT_RETRY,
    ),
    # the image exists, not for this machine's platform (containerd's "no match for platform in
    # manifest: not found" ends like a missing image; the Docker daemon's "no matching manifest")
    _failure(
        "image-wrong-platform",
        "Failed",
        r"Failed to pull image.*?(no match for (current )?platform|no matching manifest for|no supported platform)",
        90,
        "image",
        HINT_WRONG_PLATFORM,
    ),
    _failure(
        "image-not-found",
        "Failed",
        r"Failed to pull image.*?(not ?found|manifest unknown|name unknown|does not exist|"
        r"access denied|unauthorized|failed to authorize|forbidden|authentication required|"
        r"\b40[013]\b)",
        90,
        "image",
        HINT_IMAGE_NAME,
    ),
    # the runtime could not read an image it has: the name is set, the machine is at fault
    _failure("image-inspect-failed", "InspectFailed", r"\AFailed to inspect image", 85, "image", HINT_ADMIN),
    _failure("image-inspect-failed", "Failed", r"Error: ImageInspectError", 30, "image", HINT_ADMIN),
    _failure(
        "image-invalid",
        "InspectFailed InvalidImageName ErrImageNeverPull",
        None,
        90,
        "image",
        HINT_IMAGE_NAME,
    ),
    _failure(
        "image-invalid",
        "Failed",
        r"Error: (InvalidImageName|ErrImageNeverPull)",
        90,
        "image",
        HINT_IMAGE_NAME,
    ),
    _failure("image-pull-failed", "Failed", r"Failed to pull image", 80, "image", HINT_IMAGE_NAME),
    _failure(
        "image-pull-follow-up",
        "Failed BackOff",
        r"Error: (ErrImagePull|ImagePullBackOff)|Back-off pulling image",
        30,
        "image",
        HINT_IMAGE_NAME,
    ),
    _failure("out-of-memory", "OOMKilling OOMKilled", None, 90, "starting", HINT_MEMORY),
    _failure(
        "out-of-memory", "", r"OOMKilled|OOM[- ]?kill|out of memory", 90, "starting", HINT_MEMORY
    ),
    _failure(
        "node-out-of-resources",
        "OutOfcpu OutOfmemory OutOfpods OutOfephemeral-storage",
        None,
        85,
        "scheduled",
        HINT_RETRY,
    ),
    _failure("crash-loop", "BackOff", r"restarting failed container", 40, "starting", HINT_CRASH),
    # the container's own exit, read from the pod's status (kube.pod_status): its exit code
    # and how often say more than the back-off after it, or the kubelet's "Error: ..." of
    # the same start
    _failure(
        "container-exit", "Error StartError ContainerCannotRun DeadlineExceeded", r"\AContainer \S+ terminated:", 86,
        "starting", HINT_CRASH,
    ),
    # the cause the server's own log names (kube.container_log): why the container exited,
    # or never answered, says more than the exit code; a kind that only may explain it is
    # a warning (the exit, an error, then stays the cause)
    _failure("server-log", "ServerLog", None, 88, "starting", HINT_CRASH),
    # The definitive error beats the generic retries after it ("did not pass a health check
    # yet", "not mounted yet; still trying"): a probe that killed the server, a disk held by
    # another pod, Karpenter saying no machine type fits.
    _failure("probe-killed", "Killing", r"failed (liveness|startup) probe", 85, "starting", HINT_CRASH),
    _failure("post-start-hook", "Killing", r"FailedPostStartHook", 80, "starting", HINT_ADMIN),
    _failure("post-start-hook", "FailedPostStartHook", None, 75, "starting", HINT_ADMIN),
    _failure("evicted", "Evicted Preempted Preempting", None, 80, "starting", HINT_RETRY),
    # the machine goes away under the server: the cloud takes it back, or it shuts down
    _failure(
        "machine-gone",
        "SpotInterrupted InstanceSpotInterrupted InstanceStopping InstanceTerminating TerminatingOnInterruption "
        "NodeShutdown",
        None,
        85,
        "starting",
        HINT_MACHINE_GONE,
    ),
    _failure("machine-gone", "", r"imminent node shutdown", 85, "starting", HINT_MACHINE_GONE),
    _failure("node-affinity", "NodeAffinity", None, 80, "scheduling", HINT_ADMIN),
    _failure(
        "no-machine-type-fits",
        "FailedScheduling",
        r"no instance type (has enough resources|satisfied resources)|exceed limits for (nodepool|provisioner)",
        88,
        "scheduling",
        HINT_SMALLER,
    ),
    # cluster-autoscaler added no machine: the scheduling step goes on (no machine is being
    # added). Every machine group of the wrong kind: no machine the cluster can add matches.
    _failure(
        "no-such-machine",
        "NotTriggerScaleUp",
        r"\Apod didn't trigger scale-up[^:]*:\s*(?:\d+ node\(s\) didn't match (?:Pod's node affinity(?:/selector)?"
        r"|node selector)(?:,\s*|\.?\s*\Z))+\Z",
        78,
        "scheduling",
        HINT_NO_SUCH_MACHINE,
    ),
    _failure("no-scale-up", "NotTriggerScaleUp", None, 75, "scheduling", HINT_SMALLER),
    _failure(
        "nothing-fits",
        "FailedScheduling",
        r"Insufficient|didn't match|untolerated taint|had taint|unbound|Too many pods|"
        r"volume node affinity conflict|didn't find available persistent volumes",
        60,
        "scheduling",
        HINT_RETRY,
    ),
    _failure("not-scheduled", "FailedScheduling", None, 45, "scheduling", HINT_RETRY),
    _failure("volume-provisioning", "ProvisioningFailed", None, 80, "volume", HINT_ADMIN),
    _failure("volume-held", "FailedAttachVolume", r"Multi-Attach error", 85, "volume", HINT_ADMIN),
    _failure(
        "volume-mount-retry",
        "FailedMount",
        r"Unable to (attach or )?mount volumes.*timed out",
        50,
        "volume",
        HINT_ADMIN,
    ),
    _failure(
        "volume", "FailedBinding FailedAttachVolume FailedMount VolumeResizeFailed FileSystemResizeFailed", None, 70,
        "volume", HINT_ADMIN
    ),
    _failure(
        "sandbox-network",
        "FailedCreatePodSandBox",
        r"no IP addresses available|failed to assign an IP address|failed to setup network|plugin type=",
        75,
        "starting",
        HINT_ADMIN,
    ),
    _failure("sandbox", "FailedCreatePodSandBox", None, 60, "starting", HINT_RETRY),
    _failure("unhealthy", "Unhealthy", None, 35, "starting", HINT_CRASH),
)

#: The weight of an error, and of a warning, of no known kind.
UNKNOWN_ERROR_WEIGHT = 70
UNKNOWN_WARNING_WEIGHT = 20
#: A record of no known kind whose cause the cause reader read (rule ``cause-<class>``): it
#: says why, so it outweighs the follow-ups (back-offs) and an unknown error that does not
READ_CAUSE_WEIGHT = 75
#: Added to any error's weight: among equally telling records, an error explains more.
ERROR_BONUS = 10


def classify(record: Mapping[str, Any]) -> Failure | None:
    """The first known kind of failure the record matches, or None."""
    reason = text_field(record, "reason") or ""
    # The event's own words: rules may reword the sentence in any way.
    raw = text_field(record, "raw_message") or text_field(record, "message") or ""
    for failure in _FAILURES:
        if failure.reasons and reason not in failure.reasons:
            continue
        if failure.pattern is not None and not failure.pattern.search(raw):
            continue
        return failure
    return None

