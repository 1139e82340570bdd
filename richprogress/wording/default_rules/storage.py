"""Default rules for storage: the volume controllers and provisioners creating, binding and
attaching a disk, and kubelet mounting it."""

from __future__ import annotations

from typing import Any

from richprogress.wording.decisive_facts import mount_fact, multi_attach_holder


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


def _resize_failed_sentence(**_: str) -> str:
    return "Making your disk bigger failed; the cluster will try again"


def _missing_config(what: str = "", **_: str) -> bool:
    # a PVC KubeSpawner creates itself may still be on its way; a secret or config map not
    return what in ("secret", "configmap")


STORAGE: list[dict[str, Any]] = [
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
        "fatal": _missing_config,
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
    # Volume expansion, part of the storage step: kubernetes-csi/external-resizer ("External
    # resizer is resizing volume %s", "Require file system resize of volume on node", "resize
    # volume %q by resizer %q failed: %v", "Resize volume succeeded"), kubelet
    # ("MountVolume.NodeExpandVolume succeeded for volume %q"), the expand controller ("Ignoring
    # the PVC: didn't find a plugin capable of expanding the volume; waiting for an external
    # controller to process this PVC.")
    {
        "id": "volume-resizing",
        "match": {"reason": r"Resizing\Z|ExternalExpanding\Z"},
        "template": "Your disk is being made bigger",
        "phase": "volume",
    },
    {
        "id": "volume-resize-fs-required",
        "match": {"reason": r"FileSystemResizeRequired\Z"},
        "template": "Your disk is bigger; its file system will grow when it is mounted",
        "phase": "volume",
    },
    {
        "id": "volume-resized",
        "match": {"reason": r"FileSystemResizeSuccessful\Z|VolumeResizeSuccessful\Z"},
        "template": "Your disk has been made bigger",
        "phase": "volume",
    },
    {
        "id": "volume-resize-failed",
        "match": {"reason": r"VolumeResizeFailed\Z|FileSystemResizeFailed\Z"},
        "template": _resize_failed_sentence,
        "severity": "warning",
        "hint": "Your files are safe; the disk keeps its old size for now. If it keeps failing, ask your administrator.",
        "phase": "volume",
    },
]
