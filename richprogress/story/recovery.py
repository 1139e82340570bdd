"""Did a later success of the same kind get past a problem? (the retried pull that worked)

Which later records overcome a problem *within its own step*, for
``diagnosis.decisive_record``. Getting to a later step already overcomes a problem (a
``Scheduled`` after a ``FailedScheduling``); this covers what happens inside one step,
where the kubelet or a controller retries and the retry works:

- a failed image pull (not found, rate limited, any pull error, and its ``ErrImagePull``
  / ``ImagePullBackOff`` follow-ups) is over once the same container's image was pulled
  (``Pulled``: "Successfully pulled image" or "already present on machine") -- of the
  same image, when both name one. ``Pulling`` again after a back-off is *not* success: it
  is the retry, which may fail the same way;
- a cluster-autoscaler ``NotTriggerScaleUp`` is over once it did trigger one
  (``TriggeredScaleUp``), or Karpenter nominated a machine (``Nominated``);
- a refusal to create the pod (a full quota, an admission webhook's "no"), reported by a
  controller on its own object (a ReplicaSet's ``FailedCreate``, an operator's error on its
  custom resource), is over once the same object reports that it created it
  (``SuccessfulCreate``, or an operator's ``Created``);
- a volume that failed to attach is over once it attached (``SuccessfulAttachVolume``);
  one that failed to mount, once it mounted (``SuccessfulMountVolume``, older kubelets);
  a claim that failed to provision or bind, once it was provisioned
  (``ProvisioningSucceeded``) -- of the same volume, when both name one;
- a pod sandbox that could not be created is over once the kubelet works on the pod's
  containers (``Pulling``, ``Pulled``, ``Created``, ``Started``): the kubelet's
  ``SyncPod`` creates the sandbox before it pulls or starts any container
  (kubernetes ``pkg/kubelet/kuberuntime/kuberuntime_manager.go``, steps 4 and 6-7).

Problems with no success of their own stay until a later step (a crash loop: its
``Started`` comes again before every crash). Pure functions over EventRecords; no
JupyterHub or Kubernetes import. A problem and a success must concern the same object
(kind and name) and, when both say, the same container.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: the kind of problem (``known_failures``' names) -> the kind of success that ends it
_PROBLEM_KINDS: dict[str, str] = {
    "image-rate-limited": "image",
    "image-not-found": "image",
    "image-pull-failed": "image",
    "image-pull-follow-up": "image",
    "no-scale-up": "scale-up",
    "no-such-machine": "scale-up",
    "quota": "create",
    "admission-refused": "create",
    "volume-held": "attach",
    "volume-mount-retry": "mount",
    "volume-provisioning": "provision",
    "sandbox": "sandbox",
    "sandbox-network": "sandbox",
}

#: problems ``known_failures`` files under "volume" (by reason: attach, mount or bind)
_VOLUME_REASONS: dict[str, str] = {
    "FailedAttachVolume": "attach",
    "FailedMount": "mount",
    "FailedBinding": "provision",
}

#: the reason of a success -> the kinds of problem it ends
_SUCCESS_REASONS: dict[str, tuple[str, ...]] = {
    "Pulled": ("image", "sandbox"),
    "Pulling": ("sandbox",),
    "Created": ("sandbox", "create"),
    "SuccessfulCreate": ("create",),
    "Started": ("sandbox",),
    "TriggeredScaleUp": ("scale-up",),
    "Nominated": ("scale-up",),
    "SuccessfulAttachVolume": ("attach",),
    "SuccessfulMountVolume": ("mount",),
    "ProvisioningSucceeded": ("provision",),
}

# The image a kubelet message names: 'Failed to pull image "x"', 'Successfully pulled
# image "x"', 'Container image "x" already present', 'Back-off pulling image "x"'.
_IMAGE = re.compile(r'image "([^"]+)"', re.IGNORECASE)
# The volume: 'AttachVolume.Attach failed for volume "pvc-1"', 'Multi-Attach error for
# volume "pvc-1"', 'MountVolume.SetUp succeeded for volume "home"'.
_VOLUME = re.compile(r'volume "([^"]+)"', re.IGNORECASE)

#: what a problem or a success is about: (kind, object kind, object name, container, name
#: of the image or volume); None where the record does not say
Subject = tuple[str, str | None, str | None, str | None, str | None]


def _raw(record: Mapping[str, Any]) -> str:
    for key in ("raw_message", "message"):
        value = record.get(key)
        if isinstance(value, str):
            return value
    return ""


def _about(record: Mapping[str, Any], kind: str) -> Subject:
    obj = record.get("object")
    obj = obj if isinstance(obj, Mapping) else {}
    named = _IMAGE if kind == "image" else _VOLUME if kind in ("attach", "mount") else None
    found = named.search(_raw(record)) if named is not None else None
    return (
        kind,
        obj.get("kind") if isinstance(obj.get("kind"), str) else None,
        obj.get("name") if isinstance(obj.get("name"), str) else None,
        obj.get("container") if isinstance(obj.get("container"), str) else None,
        found.group(1) if found else None,
    )


def problem_subject(failure_name: str | None, record: Mapping[str, Any]) -> Subject | None:
    """What a problem record is about, when some later success can end it; None when only
    a later step can (``failure_name``: the kind ``known_failures.classify`` found)."""
    kind = _PROBLEM_KINDS.get(failure_name or "")
    if kind is None and failure_name == "volume":
        kind = _VOLUME_REASONS.get(str(record.get("reason") or ""))
    return None if kind is None else _about(record, kind)


def success_subjects(record: Mapping[str, Any]) -> list[Subject]:
    """What a record reports the success of (empty for most records). Only plain, good
    records count: a warning or an error never ends a problem."""
    if record.get("severity") not in (None, "info") or record.get("type") == "Warning":
        return []
    kinds = _SUCCESS_REASONS.get(str(record.get("reason") or ""), ())
    return [_about(record, kind) for kind in kinds]


def _same(a: str | None, b: str | None) -> bool:
    """Equal, or one of the two does not say."""
    return a is None or b is None or a == b


def overcomes(success: Subject, problem: Subject) -> bool:
    """Whether a success (``success_subjects``) ends a problem (``problem_subject``): the
    same kind, the same object, and the same container and image or volume where both
    name one."""
    return (
        success[0] == problem[0]
        and success[1] == problem[1]
        and success[2] == problem[2]
        and _same(success[3], problem[3])
        and _same(success[4], problem[4])
    )
