"""The default rules, family by family, on real event text: what the user reads.

Each case is an event as Kubernetes, cluster-autoscaler or Karpenter word it (from their
sources and from events captured on clusters), and the sentence, severity and step we show.
"""

from __future__ import annotations

from typing import Any

import pytest

from richprogress.model.records import PHASE_NAMES, SEVERITIES
from richprogress.wording.default_rules.images import human_duration, human_size
from richprogress.wording.default_rules.kubelet import memory_words
from richprogress.wording.default_rules.operators import OPERATOR_RULES
from richprogress.wording.default_rules.server_log import SERVER_LOG
from richprogress.wording.formatter import EventFormatter
from richprogress.wording.scheduling import summarize_scheduling

KUBELET = "kubelet"
NOTEBOOK = "spec.containers{notebook}"
INIT = "spec.initContainers{block-nfs-access}"


def ev(
    reason: str,
    message: str,
    *,
    component: str = KUBELET,
    field_path: str | None = None,
    type: str = "Normal",
    kind: str = "Pod",
    name: str = "jupyter-alice",
) -> dict[str, Any]:
    """A core/v1 Event shaped as `kubectl get events -o json` returns it."""
    involved: dict[str, Any] = {"kind": kind, "namespace": "jhub", "name": name, "uid": "u-1"}
    if field_path:
        involved["fieldPath"] = field_path
    return {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {"name": f"{name}.1", "namespace": "jhub", "uid": f"uid-{reason}"},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": "2026-11-29T21:33:30Z",
        "lastTimestamp": "2026-11-29T21:33:30Z",
        "count": 1,
        "type": type,
    }


W = "Warning"
PREEMPT = " preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."

CASES = [
    # ---- scheduling ----
    pytest.param(
        ev("Scheduled", "Successfully assigned jhub/jupyter-alice to node-a1", component="default-scheduler"),
        "Found a machine for your server (node-a1)", "info", "scheduled", id="scheduled-default-scheduler",
    ),
    pytest.param(
        ev("Scheduled", "Successfully assigned prod/jupyter-alice to ip-10-0-1-2.ec2.internal",
           component="prod-user-scheduler"),
        "Found a machine for your server (ip-10-0-1-2.ec2.internal)", "info", "scheduled",
        id="scheduled-user-scheduler",
    ),
    pytest.param(
        ev("Scheduled", "Successfully assigned prod/jupyter-alice to gke-c-pool-1a1a-rc5d",
           component="gke.io/optimize-utilization-scheduler"),
        "Found a machine for your server (gke-c-pool-1a1a-rc5d)", "info", "scheduled", id="scheduled-gke",
    ),
    pytest.param(
        ev("FailedScheduling", "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) didn't match Pod's node "
           "affinity/selector." + PREEMPT, component="default-scheduler", type=W),
        "No machine has enough free CPU, and 3 don't match this server's machine type", "warning", "scheduling",
        id="failed-scheduling-cpu-and-selector",
    ),
    pytest.param(
        ev("FailedScheduling", "0/3 nodes are available: 3 Insufficient memory." + PREEMPT,
           component="jhub-user-scheduler", type=W),
        "No machine has enough free memory", "warning", "scheduling", id="failed-scheduling-memory",
    ),
    pytest.param(
        ev("FailedScheduling", "0/4 nodes are available: 1 Insufficient nvidia.com/gpu, 3 node(s) had untolerated "
           "taint {nvidia.com/gpu: present}." + PREEMPT, component="default-scheduler", type=W),
        "No machine has enough free GPU, and 3 are reserved for other work", "warning", "scheduling",
        id="failed-scheduling-gpu-and-taint",
    ),
    pytest.param(
        ev("FailedScheduling", "0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/"
           "not-ready: }, 2 node(s) didn't match Pod's node affinity/selector." + PREEMPT,
           component="gke.io/optimize-utilization-scheduler", type=W),
        "No machine can take your server yet: 1 is not ready and 2 don't match this server's machine type",
        "warning", "scheduling", id="failed-scheduling-node-starting",
    ),
    pytest.param(
        ev("FailedScheduling", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
           + PREEMPT, component="gke.io/optimize-utilization-scheduler", type=W),
        "No running machine matches this server's machine type", "warning", "scheduling",
        id="failed-scheduling-selector-only",
    ),
    pytest.param(
        ev("FailedScheduling", "0/3 nodes are available: 3 node(s) had taint {hub.jupyter.org/dedicated: user}, "
           "that the pod didn't tolerate.", component="default-scheduler", type=W),
        "All machines are reserved for other work", "warning", "scheduling", id="failed-scheduling-old-taint-format",
    ),
    pytest.param(
        ev("FailedScheduling", "0/4 nodes are available: 4 node(s) had volume node affinity conflict." + PREEMPT,
           component="default-scheduler", type=W),
        "No machine that can reach your existing disk can take your server", "warning", "volume", id="failed-scheduling-volume-zone",
    ),
    pytest.param(
        ev("FailedScheduling", "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."
           + PREEMPT, component="default-scheduler", type=W),
        "Your storage is not ready yet", "warning", "volume", id="failed-scheduling-unbound-pvc",
    ),
    pytest.param(
        ev("FailedScheduling", "0/2 nodes are available: 2 Too many pods." + PREEMPT,
           component="default-scheduler", type=W),
        "No machine has enough free room", "warning", "scheduling", id="failed-scheduling-too-many-pods",
    ),
    pytest.param(
        ev("FailedScheduling", "no nodes available to schedule pods", component="default-scheduler", type=W),
        "The cluster has no machines running right now", "warning", "scheduling", id="failed-scheduling-no-nodes",
    ),
    pytest.param(
        ev("FailedScheduling", "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu.",
           component="default-scheduler", type=W),
        "No machine has enough free CPU, and 1 is closed to new servers", "warning", "scheduling",
        id="failed-scheduling-unschedulable",
    ),
    pytest.param(
        ev("FailedScheduling", 'Failed to schedule pod, incompatible with nodepool "default", daemonset overhead='
           '{"cpu":"150m","pods":"3"}, no instance type satisfied resources {"cpu":"200","pods":"4"}',
           component="karpenter", type=W),
        "No type of machine the cluster can add is big enough for your server (it asks for 200 CPUs)", "error", "scheduling",
        id="failed-scheduling-karpenter",
    ),
    pytest.param(
        ev("NodeAffinity", "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector", type=W),
        "The machine given to your server does not match where it must run", "error", "scheduling",
        id="node-affinity-predicate",
    ),
    pytest.param(
        ev("OutOfcpu", "Node didn't have enough resource: cpu, requested: 200000, used: 662, capacity: 3920", type=W),
        "The machine chosen for your server did not have enough free CPU (it asks for 200 CPUs; the machine has 3.9 CPUs)", "error", "scheduling", id="out-of-cpu",
    ),
    pytest.param(
        ev("OutOfmemory", "Node didn't have enough resource: memory, requested: 200000000000, used: 4196441039, "
           "capacity: 32221597696", type=W),
        "The machine chosen for your server did not have enough free memory (it asks for 186 GiB; the machine "
        "has 30 GiB)", "error", "scheduling", id="out-of-memory-admission",
    ),
    # ---- autoscaling ----
    pytest.param(
        ev("TriggeredScaleUp", "pod triggered scale-up: [{eks-user-nodes-abc 1->2 (max: 10)}]",
           component="cluster-autoscaler"),
        "Adding a machine to the cluster for your server (machine group eks-user-nodes-abc, growing to 2 machines)",
        "info", "scaling", id="triggered-scale-up-eks",
    ),
    pytest.param(
        ev("TriggeredScaleUp", "Pod triggered scale-up: [{https://www.googleapis.com/compute/v1/projects/p/zones/"
           "us-central1-a/instanceGroups/gke-c-pool-1a1a-grp 0->1 (max: 100)}]", component="cluster-autoscaler"),
        "Adding a machine to the cluster for your server (machine group gke-c-pool-1a1a-grp, growing to 1 machine)",
        "info", "scaling", id="triggered-scale-up-gke",
    ),
    pytest.param(
        ev("NotTriggerScaleUp", "pod didn't trigger scale-up: 2 node(s) didn't match Pod's node affinity/selector, "
           "1 max node group size reached", component="cluster-autoscaler"),
        "The cluster cannot add a machine that fits your server: 2 machine groups don't match this server's "
        "machine type and 1 machine group is already at its maximum size", "warning", "scheduling",
        id="not-triggered-scale-up",
    ),
    pytest.param(
        ev("NotTriggerScaleUp", "pod didn't trigger scale-up (it wouldn't fit if a new node is added): "
           "1 Insufficient nvidia.com/gpu", component="cluster-autoscaler"),
        "The cluster cannot add a machine that fits your server: no machine type has enough GPU", "warning",
        "scheduling", id="not-triggered-scale-up-old-format",
    ),
    pytest.param(
        # cluster-autoscaler 1.20-1.34 "max cluster %s limit reached", 1.20+ "not ready for scale-up"
        ev("NotTriggerScaleUp", "pod didn't trigger scale-up: 1 not ready for scale-up, 2 max cluster cpu, memory "
           "limit reached", component="cluster-autoscaler"),
        "The cluster cannot add a machine that fits your server: 1 machine group is not ready to add machines and "
        "2 machine groups would exceed the cluster's size limit", "warning", "scheduling",
        id="not-triggered-scale-up-limits",
    ),
    pytest.param(
        # cluster-autoscaler 1.35+ quotas: the reason holds commas of its own
        ev("NotTriggerScaleUp", 'pod didn\'t trigger scale-up: 3 exceeded quota: "cluster-wide", resources: cpu, memory',
           component="cluster-autoscaler"),
        "The cluster cannot add a machine that fits your server: 3 machine groups would exceed the cluster's quota",
        "warning", "scheduling", id="not-triggered-scale-up-quota",
    ),
    pytest.param(
        # cluster-autoscaler 1.33+: a limit on the whole cluster, no per-group count
        ev("NotTriggerScaleUp", "pod didn't trigger scale-up: max total nodes in cluster reached",
           component="cluster-autoscaler"),
        "The cluster cannot add a machine that fits your server: the cluster already has as many machines as it may",
        "warning", "scheduling", id="not-triggered-scale-up-max-total",
    ),
    pytest.param(
        ev("Nominated", "Pod should schedule on: nodeclaim/default-x7k2p", component="karpenter"),
        "A new machine (default-x7k2p) is being prepared for your server", "info", "scaling",
        id="karpenter-nominated",
    ),
    pytest.param(
        ev("Launched", "Status condition transitioned, Type: Launched, Status: Unknown -> True, Reason: Launched",
           component="karpenter", kind="NodeClaim", name="default-x7k2p"),
        "The cloud has started a new machine for the cluster", "info", "scaling", id="karpenter-launched",
    ),
    pytest.param(
        ev("Registered", "Status condition transitioned, Type: Registered, Status: Unknown -> True, Reason: "
           "Registered", component="karpenter", kind="NodeClaim", name="default-x7k2p"),
        "The new machine has joined the cluster", "info", "scaling", id="karpenter-registered",
    ),
    pytest.param(
        ev("Initialized", "Status condition transitioned, Type: Initialized, Status: Unknown -> True, Reason: "
           "Initialized", component="karpenter", kind="NodeClaim", name="default-x7k2p"),
        "The new machine is ready to run servers", "info", "scaling", id="karpenter-initialized",
    ),
    # ---- storage ----
    pytest.param(
        ev("WaitForFirstConsumer", "waiting for first consumer to be created before binding",
           component="persistentvolume-controller", kind="PersistentVolumeClaim", name="claim-alice"),
        "Your storage will be created once a machine is chosen for your server", "info", "volume",
        id="pvc-wait-for-first-consumer",
    ),
    pytest.param(
        ev("ExternalProvisioning", "Waiting for a volume to be created either by the external provisioner "
           "'ebs.csi.aws.com' or manually by the system administrator. If volume creation is delayed, please verify "
           "that the provisioner is running and correctly registered.", component="persistentvolume-controller",
           kind="PersistentVolumeClaim", name="claim-alice"),
        "Waiting for the storage service to create your disk", "info", "volume", id="pvc-external-provisioning",
    ),
    pytest.param(
        ev("Provisioning", 'External provisioner is provisioning volume for claim "jhub/claim-alice"',
           component="ebs.csi.aws.com_ebs-csi-controller-7d9c_1a2b", kind="PersistentVolumeClaim", name="claim-alice"),
        "Creating a disk for your storage", "info", "volume", id="pvc-provisioning",
    ),
    pytest.param(
        ev("ProvisioningSucceeded", "Successfully provisioned volume pvc-8c1b2f0e-3c4d-4e5f-9a0b-1c2d3e4f5a6b",
           component="ebs.csi.aws.com_ebs-csi-controller-7d9c_1a2b", kind="PersistentVolumeClaim", name="claim-alice"),
        "Your disk has been created", "info", "volume", id="pvc-provisioning-succeeded",
    ),
    pytest.param(
        ev("ProvisioningFailed", 'failed to provision volume with StorageClass "gp3": rpc error: code = Internal '
           "desc = Could not create volume: UnauthorizedOperation", type=W,
           component="ebs.csi.aws.com_ebs-csi-controller-7d9c_1a2b", kind="PersistentVolumeClaim", name="claim-alice"),
        "Creating a disk of storage class gp3 failed: the storage service is not allowed to do it (its credentials "
        "or permissions) (UnauthorizedOperation)", "warning", "volume",
        id="pvc-provisioning-failed",
    ),
    pytest.param(
        # a cause the cause reader has no class for: the rule's own words
        ev("ProvisioningFailed", 'failed to provision volume with StorageClass "gp3": rpc error: code = Internal '
           "desc = Could not create volume: InvalidParameterCombination", type=W,
           component="ebs.csi.aws.com_ebs-csi-controller-7d9c_1a2b", kind="PersistentVolumeClaim", name="claim-alice"),
        "Creating a disk for your storage failed; the cluster will try again", "warning", "volume",
        id="pvc-provisioning-failed-unknown",
    ),
    pytest.param(
        ev("FailedBinding", "no persistent volumes available for this claim and no storage class is set", type=W,
           component="persistentvolume-controller", kind="PersistentVolumeClaim", name="claim-alice"),
        "No disk is available for your storage, and none can be created automatically", "error", "volume",
        id="pvc-failed-binding",
    ),
    pytest.param(
        ev("SuccessfulAttachVolume", 'AttachVolume.Attach succeeded for volume "pvc-8c1b2f0e"',
           component="attachdetach-controller"),
        "Your disk is connected to the machine", "info", "volume", id="volume-attached",
    ),
    pytest.param(
        ev("FailedAttachVolume", 'Multi-Attach error for volume "pvc-8c1b2f0e" Volume is already exclusively '
           "attached to one node and can't be attached to another", component="attachdetach-controller", type=W),
        "Your disk is still connected to another machine", "warning", "volume", id="volume-multi-attach",
    ),
    pytest.param(
        ev("FailedAttachVolume", 'AttachVolume.Attach failed for volume "pvc-8c1b2f0e" : rpc error: code = '
           "DeadlineExceeded desc = context deadline exceeded", component="attachdetach-controller", type=W),
        "Attaching the disk pvc-8c1b2f0e to the machine failed: the storage service did not answer in time "
        "(deadline exceeded)", "warning", "volume",
        id="volume-attach-failed",
    ),
    pytest.param(
        ev("FailedAttachVolume", 'AttachVolume.Attach failed for volume "pvc-8c1b2f0e" : rpc error: code = '
           "Internal desc = could not attach volume: IncorrectState", component="attachdetach-controller", type=W),
        "Connecting your disk to the machine failed; the cluster will try again", "warning", "volume",
        id="volume-attach-failed-unknown",
    ),
    pytest.param(
        ev("FailedMount", "Unable to attach or mount volumes: unmounted volumes=[home], unattached volumes="
           "[home kube-api-access-x2x]: timed out waiting for the condition", type=W),
        "Your storage (home) is not mounted yet; still trying", "warning", "volume", id="volume-mount-timeout",
    ),
    pytest.param(
        # v1.28+: the volume manager's wait ends with the context's error (volume_manager.go)
        ev("FailedMount", "Unable to attach or mount volumes: unmounted volumes=[home], unattached volumes=[], "
           "failed to process volumes=[]: context deadline exceeded", type=W),
        "Your storage (home) is not mounted yet; still trying", "warning", "volume", id="volume-mount-timeout-1.28",
    ),
    pytest.param(
        ev("FailedMount", 'MountVolume.SetUp failed for volume "config" : configmap "user-config" not found', type=W),
        "Storage your server needs is missing (configmap user-config not found)", "error", "volume",
        id="volume-mount-missing-configmap",
    ),
    pytest.param(
        ev("FailedMount", 'MountVolume.SetUp failed for volume "home" : mount failed: exit status 32', type=W),
        "Mounting your storage (home) into your server failed; the cluster will try again", "warning", "volume",
        id="volume-mount-failed-other",
    ),
    # ---- images ----
    pytest.param(
        ev("Pulling", 'Pulling image "quay.io/jupyter/scipy-notebook:2025-11-10"', field_path=NOTEBOOK),
        "Downloading the image quay.io/jupyter/scipy-notebook:2025-11-10 for the notebook container", "info",
        "image", id="image-pulling",
    ),
    pytest.param(
        ev("Pulled", 'Successfully pulled image "quay.io/cryointhecloud/cryo-hub-image:d624b28e39c4" in 2m32.639s '
           "(2m32.64s including waiting). Image size: 3922990416 bytes.", field_path=NOTEBOOK),
        "Downloaded the image quay.io/cryointhecloud/cryo-hub-image:d624b28e39c4 for the notebook container in "
        "2 min 33 s (3.9 GB)", "info", "image", id="image-pulled-with-duration",
    ),
    pytest.param(
        ev("Pulled", 'Successfully pulled image "pangeo/base-notebook:2024.01.01" in 3.2s', field_path=NOTEBOOK),
        "Downloaded the image pangeo/base-notebook:2024.01.01 for the notebook container in 3.2 s", "info",
        "image", id="image-pulled-older-format",
    ),
    pytest.param(
        ev("Pulled", 'Container image "quay.io/jupyterhub/k8s-network-tools:4.1.0" already present on machine',
           field_path=INIT),
        "The image quay.io/jupyterhub/k8s-network-tools:4.1.0 for the block-nfs-access container is already on the "
        "machine (no download needed)", "info", "image", id="image-cached",
    ),
    pytest.param(
        ev("Failed", 'Failed to pull image "jupyter/does-not-exist:latest": rpc error: code = NotFound desc = failed '
           'to pull and unpack image "docker.io/jupyter/does-not-exist:latest": failed to resolve reference '
           '"docker.io/jupyter/does-not-exist:latest": docker.io/jupyter/does-not-exist:latest: not found',
           field_path=NOTEBOOK, type=W),
        "The image jupyter/does-not-exist:latest for the notebook container was not found in its registry", "error", "image",
        id="image-not-found",
    ),
    pytest.param(
        ev("Failed", 'Failed to pull image "quay.io/jupyter/minimal-notebook:nope": rpc error: code = Unknown desc = '
           "Error response from daemon: manifest for quay.io/jupyter/minimal-notebook:nope not found: manifest "
           "unknown: manifest unknown", field_path=NOTEBOOK, type=W),
        "The image quay.io/jupyter/minimal-notebook:nope for the notebook container was not found in its registry", "error",
        "image", id="image-manifest-unknown",
    ),
    pytest.param(
        ev("Failed", 'Failed to pull image "private/thing:1": rpc error: code = Unknown desc = failed to pull and '
           'unpack image "docker.io/private/thing:1": failed to resolve reference "docker.io/private/thing:1": pull '
           "access denied, repository does not exist or may require authorization: server message: "
           "insufficient_scope: authorization failed", field_path=NOTEBOOK, type=W),
        "The image private/thing:1 for the notebook container could not be downloaded: it does not exist or is "
        "private", "error", "image", id="image-access-denied",
    ),
    pytest.param(
        ev("Failed", 'Failed to pull image "ghcr.io/foo:bat": failed to pull and unpack image "ghcr.io/foo:bat": '
           'failed to resolve reference "ghcr.io/foo:bat": failed to authorize: failed to fetch anonymous token: '
           "unexpected status from GET request to https://ghcr.io/token?scope=repository%3Afoo%3Apull: 401 "
           "Unauthorized", field_path=NOTEBOOK, type=W),
        "The image ghcr.io/foo:bat for the notebook container could not be downloaded: it does not exist or is "
        "private", "error", "image", id="image-unauthorized",
    ),
    pytest.param(
        ev("Failed", 'Failed to pull image "jupyter/base-notebook:latest": rpc error: code = Unknown desc = failed '
           'to pull and unpack image "docker.io/jupyter/base-notebook:latest": failed to copy: httpReadSeeker: '
           "failed open: unexpected status code https://registry-1.docker.io/v2/jupyter/base-notebook/manifests/"
           "sha256:4013a: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate "
           "limit.", field_path=NOTEBOOK, type=W),
        "The image registry is limiting downloads of jupyter/base-notebook:latest right now; the cluster will try "
        "again", "warning", "image", id="image-rate-limited",
    ),
    pytest.param(
        ev("InspectFailed", 'Failed to apply default image tag "Jupyter/Base Notebook": couldn\'t parse image '
           'reference "Jupyter/Base Notebook": invalid reference format', field_path=NOTEBOOK, type=W),
        "The image name Jupyter/Base Notebook is not a valid image name", "error", "image", id="image-invalid-name",
    ),
    pytest.param(
        ev("Failed", "Error: InvalidImageName", field_path=NOTEBOOK, type=W),
        "The image name for the notebook container is not valid", "error", "image", id="image-invalid-name-error",
    ),
    pytest.param(
        ev("Failed", 'Failed to pull image "quay.io/x/y:1": rpc error: code = Unknown desc = failed to pull and '
           'unpack image "quay.io/x/y:1": failed to copy: read tcp 10.0.0.5:51234->1.2.3.4:443: read: connection '
           "reset by peer", field_path=NOTEBOOK, type=W),
        "Downloading the image quay.io/x/y:1 for the notebook container failed: the connection to the registry was "
        "cut (connection reset by peer)", "warning", "image", id="image-pull-failed-other",
    ),
    pytest.param(
        ev("Failed", 'Failed to pull image "quay.io/x/y:1": rpc error: code = Unknown desc = failed to pull and '
           'unpack image "quay.io/x/y:1": failed to unpack image on snapshotter overlayfs', field_path=NOTEBOOK, type=W),
        "Downloading the image quay.io/x/y:1 for the notebook container failed; the cluster will try again",
        "warning", "image", id="image-pull-failed-unknown",
    ),
    pytest.param(
        # containerd images/image.go: the image exists, but not for this platform
        ev("Failed", 'Failed to pull image "ghcr.io/x/y:1": rpc error: code = NotFound desc = failed to pull and '
           'unpack image "ghcr.io/x/y:1": no match for platform in manifest: not found', field_path=NOTEBOOK, type=W),
        "The image ghcr.io/x/y:1 for the notebook container has no build for this kind of machine: it exists, but "
        "not for this platform", "error", "image", id="image-wrong-platform",
    ),
    pytest.param(
        # the Docker daemon's wording (distribution/pull_v2.go), through dockershim or cri-dockerd
        ev("Failed", 'Failed to pull image "x/y:1": rpc error: code = Unknown desc = Error response from daemon: '
           "no matching manifest for linux/arm64/v8 in the manifest list entries", field_path=NOTEBOOK, type=W),
        "The image x/y:1 for the notebook container has no build for this kind of machine (linux/arm64/v8): it "
        "exists, but not for this platform", "error", "image", id="image-wrong-platform-docker",
    ),
    pytest.param(
        ev("Failed", 'Failed to pull image "x/y:1"": rpc error: code = Unknown desc = invalid reference format',
           field_path=NOTEBOOK, type=W),
        'The image name x/y:1" for the notebook container is not a valid image name', "error", "image",
        id="image-invalid-reference",
    ),
    pytest.param(
        # kubelet image_manager.go: the runtime could not read an image it has; the name is set
        ev("InspectFailed", 'Failed to inspect image "x/y:1": rpc error: code = Unknown desc = Error response from '
           "daemon: readlink /var/lib/docker/overlay2/l: invalid argument", field_path=NOTEBOOK, type=W),
        "The container runtime on the machine could not read the image x/y:1", "error", "image",
        id="image-inspect-failed",
    ),
    pytest.param(
        ev("Failed", "Error: ImageInspectError", field_path=NOTEBOOK, type=W),
        "The container runtime on the machine could not read the image for the notebook container", "error", "image",
        id="image-inspect-error",
    ),
    pytest.param(
        ev("ErrImageNeverPull", 'Container image "x/y:1" is not present with pull policy of Never',
           field_path=NOTEBOOK, type=W),
        "The image x/y:1 for the notebook container is not on the machine, and the server is set never to "
        "download it", "error", "image", id="image-never-pull",
    ),
    pytest.param(
        ev("Failed", "Error: ErrImagePull", field_path=NOTEBOOK, type=W),
        "Could not download the image for the notebook container", "error", "image", id="err-image-pull",
    ),
    pytest.param(
        ev("Failed", "Error: ImagePullBackOff", field_path=NOTEBOOK, type=W),
        "Waiting before trying again to download the image for the notebook container", "warning", "image",
        id="image-pull-backoff",
    ),
    pytest.param(
        ev("BackOff", 'Back-off pulling image "ghcr.io/foo:bat"', field_path=NOTEBOOK, type="Normal"),
        "Waiting before trying again to download the image ghcr.io/foo:bat for the notebook container", "warning",
        "image", id="backoff-pulling",
    ),
    # ---- containers ----
    pytest.param(
        ev("Created", "Created container: notebook", field_path=NOTEBOOK),
        "Created the notebook container", "info", "starting", id="container-created",
    ),
    pytest.param(
        ev("Created", "Created container block-nfs-access", field_path=INIT),
        "Created the block-nfs-access container", "info", "starting", id="container-created-older-format",
    ),
    pytest.param(
        ev("Started", "Started container notebook", field_path=NOTEBOOK),
        "Started the notebook container", "info", "starting", id="container-started",
    ),
    pytest.param(
        ev("Killing", "Stopping container notebook", field_path=NOTEBOOK),
        "Stopping the notebook container", "info", None, id="container-killing",
    ),
    pytest.param(
        ev("BackOff", "Back-off restarting failed container notebook in pod jupyter-alice_jhub(0c1d2e3f)",
           field_path=NOTEBOOK, type=W),
        "The notebook container keeps crashing; waiting before restarting it", "error", "starting",
        id="crash-loop-backoff",
    ),
    pytest.param(
        ev("Unhealthy", 'Readiness probe failed: Get "http://10.0.0.5:8888/user/alice/api": dial tcp 10.0.0.5:8888: '
           "connect: connection refused", field_path=NOTEBOOK, type=W),
        "The notebook container did not pass a health check yet (Readiness probe): your server 10.0.0.5:8888 "
        "refused the connection (nothing is listening there)", "warning", "starting",
        id="unhealthy-readiness",
    ),
    pytest.param(
        # an exec probe whose command printed nothing: no cause to add
        ev("Unhealthy", "Readiness probe failed: ", field_path=NOTEBOOK, type=W),
        "The notebook container did not pass a health check yet (Readiness probe)", "warning", "starting",
        id="unhealthy-readiness-no-output",
    ),
    pytest.param(
        # kubelet probe/http/http.go: the status code is the cause
        ev("Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 500", field_path=NOTEBOOK, type=W),
        "The notebook container did not pass a health check yet (Readiness probe): it answered with HTTP status 500",
        "warning", "starting", id="unhealthy-status-code",
    ),
    pytest.param(
        # kubelet prober.go v1.15+: the probe passed, with a remark (wording read in its source)
        ev("ProbeWarning", "Readiness probe warning: Probe terminated redirects, Response body: ",
           field_path=NOTEBOOK, type=W),
        "The notebook container passed its readiness health check, with a warning", "info", "starting",
        id="probe-warning",
    ),
    pytest.param(
        ev("FailedPostStartHook", 'Exec lifecycle hook ([sh -c cp -r /tmp/x ~]) for Container "notebook" in Pod '
           '"jupyter-alice_jhub(0c1d)" failed - error: command \'sh -c cp -r /tmp/x ~\' exited with 1: , message: ""',
           field_path=NOTEBOOK, type=W),
        "The start-up command of the notebook container failed", "error", "starting", id="failed-post-start-hook",
    ),
    pytest.param(
        ev("Failed", 'Error: configmap "user-env" not found', field_path=NOTEBOOK, type=W),
        "The notebook container could not start: it needs the configmap user-env, which does not exist", "error", "starting",
        id="container-config-error",
    ),
    pytest.param(
        # the API server's own NotFound (kubelet's older TTL-cache manager passed it on) is plural
        ev("Failed", 'Error: secrets "registry-creds" not found', field_path=NOTEBOOK, type=W),
        "The notebook container could not start: it needs the secret registry-creds, which does not exist", "error",
        "starting", id="container-config-error-plural",
    ),
    # container terminations, as RichKubeSpawner makes them from the pod's status
    pytest.param(
        ev("OOMKilled", "Container notebook was killed because it ran out of memory (exit code 137, memory limit 1Gi)",
           component="richprogress", field_path=NOTEBOOK, type=W),
        "Your server ran out of memory and was stopped: the notebook container used more than its 1Gi limit",
        "error", "starting", id="container-oom-killed-with-limit",
    ),
    pytest.param(
        ev("OOMKilled", "Container notebook was killed because it ran out of memory (exit code 137)",
           component="richprogress", field_path=NOTEBOOK, type=W),
        "Your server ran out of memory and was stopped (the notebook container)", "error", "starting",
        id="container-oom-killed-no-limit",
    ),
    pytest.param(
        ev("Error", "Container notebook terminated: Error (exit code 1)", component="richprogress",
           field_path=NOTEBOOK, type=W),
        "The server's program exited with code 1", "error", "starting",
        id="container-terminated-error",
    ),
    pytest.param(
        ev("ContainerCannotRun", 'Container notebook terminated: ContainerCannotRun (exit code 128): exec: '
           '"jupyterhub-singleuser": executable file not found in $PATH', component="richprogress",
           field_path=NOTEBOOK, type=W),
        "The command jupyterhub-singleuser is not in the server's image, so it could not start", "error",
        "starting", id="container-cannot-run",
    ),
    pytest.param(
        ev("OOMKilling", "Memory cgroup out of memory: Killed process 4242 (python3) total-vm:8123456kB, "
           "anon-rss:2000000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:4000kB oom_score_adj:999",
           component="kernel-monitor", kind="Node", name="node-a1", type=W),
        "The program python3 ran out of memory and was stopped", "error", "starting", id="oom-killing",
    ),
    pytest.param(
        ev("Evicted", "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container "
           "notebook was using 3Gi, request is 1Gi, has larger consumption of memory.", type=W),
        "Your server was stopped because its machine ran low on memory (the notebook container used 3 GiB; it asked "
        "for 1 GiB)", "error", None, id="evicted-memory",
    ),
    pytest.param(
        ev("Evicted", "Pod ephemeral local storage usage exceeds the total limit of containers 10Gi.", type=W),
        "Your server was stopped because it wrote more temporary files than it may (its limit is 10Gi)", "error",
        None, id="evicted-ephemeral-storage",
    ),
    pytest.param(
        # kubelet eviction_manager.go: a container's own limit, and an emptyDir's
        ev("Evicted", 'Container notebook exceeded its local ephemeral storage limit "1Gi". ', type=W),
        "Your server was stopped because it wrote more temporary files than it may (its limit is 1Gi)", "error",
        None, id="evicted-container-ephemeral-storage",
    ),
    pytest.param(
        ev("Evicted", 'Usage of EmptyDir volume "scratch" exceeds the limit "2Gi". ', type=W),
        "Your server was stopped because its temporary folder scratch grew past its limit of 2Gi", "error",
        None, id="evicted-empty-dir",
    ),
    pytest.param(
        ev("Preempted", "Preempted by pod 5c9d0e1f-aaaa-bbbb-cccc-000000000000 on node gke-c-pool-1a1a-rc5d",
           component="default-scheduler", type="Normal"),
        "The server jupyter-alice was stopped to make room for more important work", "error", None, id="preempted",
    ),
    pytest.param(
        ev("FailedCreatePodSandBox", 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup '
           'network for sandbox "abc": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign '
           "an IP address to container", type=W),
        "The machine has no IP addresses left for your server", "warning", "starting", id="failed-create-pod-sandbox",
    ),
    pytest.param(
        ev("NetworkNotReady", "network is not ready: container runtime network not ready: NetworkReady=false "
           "reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized", type=W),
        "The machine's network is not ready yet; your server will start when it is", "warning", "starting",
        id="network-not-ready",
    ),
    pytest.param(
        ev("SandboxChanged", "Pod sandbox changed, it will be killed and re-created."),
        "The machine is setting up your server's sandbox again; the server will restart", "info", "starting",
        id="sandbox-changed",
    ),
    pytest.param(
        ev("TaintManagerEviction", "Cancelling deletion of Pod prod/jupyter-alice",
           component="taint-eviction-controller"),
        "Your server can stay on its machine: a planned removal was cancelled", "info", None,
        id="taint-eviction-cancelled",
    ),
    pytest.param(
        ev("TaintManagerEviction", "Marking for deletion Pod prod/jupyter-alice",
           component="taint-eviction-controller"),
        "Your server's machine is being taken out of service, so the server will be stopped", "warning", None,
        id="taint-eviction-marked",
    ),
    # ---- the classes of wrong causes, and older/newer wordings ----
    pytest.param(
        ev("FailedScheduling", "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind."
           + PREEMPT, component="default-scheduler", type=W),
        "No disk is available for your storage", "warning", "volume", id="storage-no-pv-is-storage",
    ),
    pytest.param(
        ev("FailedScheduling", 'running PreBind plugin "VolumeBinding": binding volumes: timed out waiting for the '
           "condition", component="default-scheduler", type=W),
        "Your storage could not be connected in time; the cluster will try again", "warning", "volume",
        id="storage-prebind-timeout",
    ),
    pytest.param(
        ev("FailedScheduling", "0/4 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/"
           "unreachable: }, 2 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }." + PREEMPT,
           component="default-scheduler", type=W),
        "No machine can take your server yet: 2 cannot be reached and 2 are short of disk space", "warning",
        "scheduling", id="taint-health-is-not-reserved",
    ),
    pytest.param(
        ev("FailedScheduling", "0/3 nodes are available: 3 node(s) had taint {node.kubernetes.io/memory-pressure: }, "
           "that the pod didn't tolerate.", component="default-scheduler", type=W),
        "No machine can take your server yet: 3 are short of memory", "warning", "scheduling",
        id="taint-health-old-format",
    ),
    pytest.param(
        ev("FailedScheduling", "0/2 nodes are available: 2 node(s) didn't match pod affinity rules." + PREEMPT,
           component="default-scheduler", type=W),
        "No machine runs what this server must run next to", "warning", "scheduling", id="affinity-not-anti",
    ),
    pytest.param(
        ev("FailedScheduling", "0/3 nodes are available: 1 Insufficient memory, 2 node(s) didn't match pod "
           "anti-affinity rules." + PREEMPT, component="default-scheduler", type=W),
        "No machine has enough free memory, and 2 run something this server must not share a machine with",
        "warning", "scheduling", id="anti-affinity",
    ),
    pytest.param(
        ev("Pulling", 'pulling image "jupyter/base-notebook:2019-10"', field_path=NOTEBOOK),
        "Downloading the image jupyter/base-notebook:2019-10 for the notebook container", "info", "image",
        id="pulling-lower-case-k8s-1.1x",
    ),
    pytest.param(
        ev("Created", "Created container", field_path=NOTEBOOK),
        "Created the notebook container", "info", "starting", id="created-without-name-k8s-1.1x",
    ),
    pytest.param(
        ev("Created", "Container created", field_path=NOTEBOOK),
        "Created the notebook container", "info", "starting", id="container-created-newer-kubelet",
    ),
    pytest.param(
        ev("Started", "Container started", field_path=NOTEBOOK),
        "Started the notebook container", "info", "starting", id="container-started-newer-kubelet",
    ),
    pytest.param(
        ev("SuccessfulMountVolume", 'MountVolume.SetUp succeeded for volume "home"'),
        "Your storage is mounted", "info", "volume", id="successful-mount-volume-k8s-1.1x",
    ),
    pytest.param(
        ev("Killing", "Killing container with id docker://notebook:Need to kill Pod", field_path=NOTEBOOK),
        "Stopping the notebook container", "info", None, id="killing-docker-era",
    ),
    pytest.param(
        ev("Killing", "Container notebook failed liveness probe, will be restarted", field_path=NOTEBOOK),
        "The notebook container did not pass its liveness health check and is being restarted", "error",
        "starting", id="killing-liveness-probe",
    ),
    pytest.param(
        ev("Killing", "FailedPostStartHook", field_path=NOTEBOOK, type=W),
        "The start-up command of the notebook container failed, so the container is being stopped", "error",
        "starting", id="killing-failed-post-start-hook",
    ),
    pytest.param(
        ev("Preempted", "Preempted by pod 2bc1e0a4-0f4c-4c2e-9d1b-9e1f0a8e5c11 on node gke-user-pool-1",
           component="default-scheduler", name="user-placeholder-3"),
        "Room was made for a server: a placeholder gave up its place", "info", "scheduling",
        id="placeholder-preempted-is-good-news",
    ),
    pytest.param(
        ev("NodeNotReady", "Node is not ready", component="node-controller", type=W),
        "The machine running your server stopped responding", "warning", None, id="pod-node-not-ready",
    ),
    pytest.param(
        ev("ScaleDown", "deleting pod for node scale down", component="cluster-autoscaler"),
        "The cluster is removing the machine your server runs on, so the server will be stopped", "warning", None,
        id="cluster-autoscaler-scale-down",
    ),
    pytest.param(
        ev("Failed", 'Error: failed to create containerd task: failed to create shim task: OCI runtime create '
           'failed: runc create failed: unable to start container process: exec: "start-notebook.sh": executable '
           "file not found in $PATH: unknown", field_path=NOTEBOOK, type=W),
        "The notebook container could not start: the program start-notebook.sh is not in the image", "error",
        "starting", id="container-missing-program",
    ),
    pytest.param(
        ev("FailedAttachVolume", 'Multi-Attach error for volume "pvc-5b1c" Volume is already used by pod(s) '
           "jupyter-alice-old", component="attachdetach-controller", type=W),
        "Your disk is still in use by jupyter-alice-old, so it cannot be connected to this machine", "warning",
        "volume", id="multi-attach-names-the-holder",
    ),
    pytest.param(
        ev("FailedMount", 'MountVolume.SetUp failed for volume "home-nfs" : mount failed: exit status 32\nMounting '
           "command: mount\nOutput: mount.nfs: Connection timed out", type=W),
        "Mounting your storage (home-nfs) failed: the file server did not answer; the cluster will try again",
        "warning", "volume", id="nfs-did-not-answer",
    ),
    pytest.param(
        ev("InspectFailed", 'Failed to apply default image tag "None:None": couldn\'t parse image reference '
           '"None:None": invalid reference format: repository name must be lowercase', field_path=NOTEBOOK, type=W),
        "No image is set for this server (its image name is None:None)", "error", "image", id="image-unset-none",
    ),
    pytest.param(
        ev("Evicted", "Evicted pod: Underutilized", component="karpenter"),
        "Your server was stopped because the cluster is removing its machine (it was underused)", "error", None,
        id="karpenter-evicted",
    ),
    pytest.param(
        # Karpenter v1.5+ (scheduling/nodeclaim.go InstanceTypeFilterError): no "incompatible with nodepool" prefix
        ev("FailedScheduling", "Failed to schedule pod, no instance type has enough resources, requirements="
           "karpenter.sh/nodepool In [default], resources={\"cpu\":\"200210m\",\"memory\":\"1264Mi\",\"pods\":\"6\"}",
           component="karpenter", type=W),
        "No type of machine the cluster can add is big enough for your server (it asks for 200 CPUs and 1.2 GiB)",
        "error", "scheduling", id="karpenter-no-fit-v1.5",
    ),
    pytest.param(
        # Karpenter v0.21-v1.1 (terminator/events/events.go) gave no reason
        ev("Evicted", "Evicted pod", component="karpenter"),
        "Your server was stopped because the cluster is removing its machine", "error", None,
        id="karpenter-evicted-no-reason",
    ),
    pytest.param(
        ev("DisruptionTerminating", "Disrupting NodeClaim: Drifted", component="karpenter", kind="NodeClaim",
           name="default-x7k2p"),
        "The cluster is removing a machine (its configuration changed)", "info", None, id="karpenter-disrupting",
    ),
    pytest.param(
        ev("OutOfcpu", "Node didn't have enough resource: cpu, requested: 4000, used: 3500, capacity: 3920", type=W),
        "The machine chosen for your server did not have enough free CPU (it asks for 4 CPUs; the machine has "
        "3.9 CPUs)", "error", "scheduling", id="out-of-cpu-bigger-than-machine",
    ),
    pytest.param(
        ev("OutOfcpu", "Node didn't have enough resource: cpu, requested: 1000, used: 3500, capacity: 3920", type=W),
        "The machine chosen for your server did not have enough free CPU (it asks for 1 CPU; the machine has "
        "3.9 CPUs, 0.42 CPU of it free)", "error", "scheduling", id="out-of-cpu-busy-machine",
    ),
    # ---- the API server's refusals (a controller reports them on its own object) ----
    pytest.param(
        ev("FailedCreate", 'Error creating: pods "nb-7d9f8b6c5-q2x8m" is forbidden: exceeded quota: team-a, '
           "requested: limits.cpu=2,limits.memory=8Gi, used: limits.cpu=3,limits.memory=28Gi, limited: "
           "limits.cpu=4,limits.memory=32Gi", component="replicaset-controller", type=W, kind="ReplicaSet",
           name="nb-7d9f8b6c5"),
        "The namespace's CPU and memory quota (team-a) is full: 3 of 4 CPUs and 28 GiB of 32 GiB used, and your "
        "server asks for 2 CPUs and 8 GiB", "error", "requested", id="quota-exceeded-replicaset",
    ),
    pytest.param(
        ev("FailedCreate", 'Error creating: admission webhook "validation.gatekeeper.sh" denied the request: '
           "[allowed-repos] container <notebook> has an invalid image repo <docker.io/x/y:1>, allowed repos are "
           '["quay.io/our-org/"]', component="replicaset-controller", type=W, kind="ReplicaSet", name="nb-7d9f8b6c5"),
        "The cluster's admission check validation.gatekeeper.sh refused your server: [allowed-repos] container "
        '<notebook> has an invalid image repo <docker.io/x/y:1>, allowed repos are ["quay.io/our-org/"]',
        "error", "requested", id="admission-webhook-denied",
    ),
    # the machine, not the pod (karpenter's interruption and disruption events, kubelet's node
    # shutdown manager and node status)
    pytest.param(
        ev("SpotInterrupted", "Spot interruption warning was triggered", component="karpenter", type=W,
           kind="NodeClaim", name="default-x7k2p"),
        "The machine chosen for your server is being taken back by the cloud provider (spot interruption)", "error",
        None, id="machine-spot-interrupted",
    ),
    pytest.param(
        # karpenter v0.2x on AWS: the older reason and its message
        ev("InstanceSpotInterrupted", "Node ip-10-0-1-5.ec2.internal event: A spot interruption warning was "
           "triggered for the node", component="karpenter", type=W, kind="Node", name="ip-10-0-1-5.ec2.internal"),
        "The machine chosen for your server is being taken back by the cloud provider (spot interruption)", "error",
        None, id="machine-spot-interrupted-old",
    ),
    pytest.param(
        ev("SpotRebalanceRecommendation", "Spot rebalance recommendation was triggered", component="karpenter",
           kind="NodeClaim", name="default-x7k2p"),
        "The cloud provider may soon take back the machine chosen for your server (spot rebalance recommendation)",
        "warning", None, id="machine-rebalance",
    ),
    pytest.param(
        ev("TerminatingOnInterruption", "Interruption triggered termination for the Node", component="karpenter",
           type=W, kind="Node", name="ip-10-0-1-5.ec2.internal"),
        "The cloud provider is stopping the machine chosen for your server", "error", None, id="machine-stopping",
    ),
    pytest.param(
        ev("NodeShutdown", "Pod was rejected as the node is shutting down.", type=W),
        "Your server could not start there: its machine is shutting down", "error", None,
        id="machine-shutting-down-rejected",
    ),
    pytest.param(
        ev("Terminated", "Pod was terminated in response to imminent node shutdown.", type=W),
        "Your server was stopped because its machine is shutting down", "error", None,
        id="machine-shutdown-terminated",
    ),
    pytest.param(
        ev("NodeShutdown", "Shutdown manager detected shutdown event", kind="Node", name="ip-10-0-1-5.ec2.internal"),
        "The machine chosen for your server is shutting down", "warning", None, id="machine-shutting-down",
    ),
    pytest.param(
        ev("NodeNotReady", "Node ip-10-0-1-5.ec2.internal status is now: NodeNotReady", kind="Node",
           name="ip-10-0-1-5.ec2.internal"),
        "The machine chosen for your server stopped responding", "warning", None, id="machine-not-ready",
    ),
    pytest.param(
        ev("DisruptionBlocked", "Cannot disrupt NodeClaim: state node doesn't contain both a node and a nodeclaim",
           component="karpenter", kind="NodeClaim", name="default-x7k2p"),
        "The cluster keeps the machine chosen for your server for now (it will not remove it yet)", "info", None,
        id="machine-disruption-blocked",
    ),
    pytest.param(
        ev("Starting", "Starting kubelet.", kind="Node", name="ip-10-0-1-5.ec2.internal"),
        "The new machine is starting up", "info", "scaling", id="machine-starting",
    ),
    pytest.param(
        ev("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods", kind="Node",
           name="ip-10-0-1-5.ec2.internal"),
        "The new machine is setting aside room for its own services", "info", "scaling", id="machine-allocatable",
    ),
    pytest.param(
        ev("InvalidDiskCapacity", "invalid capacity 0 on image filesystem", type=W, kind="Node",
           name="ip-10-0-1-5.ec2.internal"),
        "The new machine is still measuring its disk (normal while it starts)", "info", "scaling",
        id="machine-disk-capacity",
    ),
    pytest.param(
        ev("NodeReady", "Node ip-10-0-1-5.ec2.internal status is now: NodeReady", kind="Node",
           name="ip-10-0-1-5.ec2.internal"),
        "The new machine is ready", "info", "scaling", id="machine-ready",
    ),
    pytest.param(
        ev("NodeHasSufficientMemory", "Node ip-10-0-1-5.ec2.internal status is now: NodeHasSufficientMemory",
           kind="Node", name="ip-10-0-1-5.ec2.internal"),
        "The new machine reports enough room to start servers", "info", "scaling", id="machine-status",
    ),
    pytest.param(
        ev("RegisteredNode", "Node ip-10-0-1-5.ec2.internal event: Registered Node ip-10-0-1-5.ec2.internal in "
           "Controller", component="node-controller", kind="Node", name="ip-10-0-1-5.ec2.internal"),
        "The new machine has joined the cluster", "info", "scaling", id="machine-registered",
    ),
    # volume expansion (kubernetes-csi/external-resizer, kubelet)
    pytest.param(
        ev("Resizing", "External resizer is resizing volume pvc-65a8b677", component="external-resizer ebs.csi.aws.com",
           kind="PersistentVolumeClaim", name="claim-alice"),
        "Your disk is being made bigger", "info", "volume", id="volume-resizing",
    ),
    pytest.param(
        ev("FileSystemResizeRequired", "Require file system resize of volume on node",
           component="external-resizer ebs.csi.aws.com", kind="PersistentVolumeClaim", name="claim-alice"),
        "Your disk is bigger; its file system will grow when it is mounted", "info", "volume",
        id="volume-resize-fs-required",
    ),
    pytest.param(
        ev("FileSystemResizeSuccessful", 'MountVolume.NodeExpandVolume succeeded for volume "pvc-65a8b677"'),
        "Your disk has been made bigger", "info", "volume", id="volume-resized",
    ),
    pytest.param(
        ev("VolumeResizeFailed", 'resize volume "pvc-65a8b677" by resizer "ebs.csi.aws.com" failed: rpc error: code '
           "= Internal desc = Could not resize volume: operation in progress", type=W,
           component="external-resizer ebs.csi.aws.com", kind="PersistentVolumeClaim", name="claim-alice"),
        "Making your disk bigger failed; the cluster will try again", "warning", "volume", id="volume-resize-failed",
    ),
    pytest.param(
        ev("VolumeResizeFailed", 'resize volume "pvc-65a8b677" by resizer "ebs.csi.aws.com" failed: rpc error: code '
           "= Internal desc = Could not modify volume: VolumeModificationRateExceeded: You've reached the maximum "
           "modification rate per volume limit", type=W,
           component="external-resizer ebs.csi.aws.com", kind="PersistentVolumeClaim", name="claim-alice"),
        "Resizing the volume pvc-65a8b677 failed: the storage service is limiting requests right now (rate limit)",
        "warning", "volume", id="volume-resize-failed-why",
    ),
]


@pytest.fixture(scope="module")
def formatter() -> EventFormatter:
    return EventFormatter()


@pytest.mark.parametrize(("event", "message", "severity", "phase"), CASES)
def test_default_rule(formatter: EventFormatter, event: dict, message: str, severity: str, phase: str | None) -> None:
    record = formatter.format_event(event)
    assert (record["message"], record["severity"], record["phase"]) == (message, severity, phase)
    assert record["rule"] is not None
    assert record["raw_message"] == event["message"]


@pytest.mark.parametrize(("event", "message", "severity", "phase"), CASES)
def test_problems_come_with_a_hint(
    formatter: EventFormatter, event: dict, message: str, severity: str, phase: str | None
) -> None:
    record = formatter.format_event(event)
    if severity == "info":
        assert record["hint"] is None
    else:
        assert isinstance(record["hint"], str) and len(record["hint"]) > 20


def test_every_default_rule_has_a_case(formatter: EventFormatter) -> None:
    covered = {formatter.format_event(case.values[0])["rule"] for case in CASES}
    # A new rule without a real event in this table is noticed here.
    untested = {rule.id for rule in formatter.ruleset.rules} - covered
    # the rules for custom resources have their table in tests/kube/test_followed.py (followed objects)
    untested -= {rule["id"] for rule in OPERATOR_RULES}
    # and the server-log rules theirs in test_log_causes.py (a corpus of log tails)
    untested -= {rule["id"] for rule in SERVER_LOG}
    assert untested == set()


def test_all_rules_use_the_shared_vocabulary(formatter: EventFormatter) -> None:
    for rule in formatter.ruleset.rules:
        assert rule.severity in (None, *SEVERITIES)
        assert rule.phase in (None, *PHASE_NAMES)


UNCOVERED = [
    pytest.param(ev("SomethingNew", "A brand new kind of event happened", type=W), id="unknown-reason"),
    pytest.param(ev("Failed", "Failed to pull image without quotes", field_path=NOTEBOOK, type=W), id="odd-failed"),
    pytest.param(ev("Pulled", "Pulled something odd", field_path=None), id="pulled-without-container"),
]


@pytest.mark.parametrize("event", UNCOVERED)
def test_events_no_rule_covers_keep_their_raw_message(formatter: EventFormatter, event: dict) -> None:
    record = formatter.format_event(event)
    assert (record["message"], record["rule"]) == (event["message"], None)
    assert record["severity"] == ("warning" if event["type"] == "Warning" else "info")


def test_event_without_any_message_is_never_shown_empty(formatter: EventFormatter) -> None:
    record = formatter.format_event({"reason": "SomethingNew", "message": ""})
    assert record["message"] == "SomethingNew"
    assert formatter.format_event({})["message"] == "(event without a message)"


def test_unknown_failed_scheduling_format_still_says_what_it_knows(formatter: EventFormatter) -> None:
    record = formatter.format_event(ev("FailedScheduling", "scheduler said something new", type=W))
    assert (record["message"], record["severity"]) == ("No machine can take your server yet", "warning")
    assert record["raw_message"] == "scheduler said something new"


@pytest.mark.parametrize(
    ("text", "words"),
    [("2m32.639s", "2 min 33 s"), ("498ms", "0.5 s"), ("3.2s", "3.2 s"), ("1h2m3s", "62 min 3 s"),
     ("45.7s", "46 s"), ("5m0s", "5 min"), ("weird", "weird")],
)
def test_human_duration(text: str, words: str) -> None:
    assert human_duration(text) == words


@pytest.mark.parametrize(("text", "words"), [("999", "999 bytes"), ("3895865", "3.9 MB"), ("3922990416", "3.9 GB")])
def test_human_size(text: str, words: str) -> None:
    assert human_size(text) == words


SCHEDULING = [
    pytest.param("0/0 nodes are available", "The cluster has no machines running right now", id="zero-nodes"),
    pytest.param("0/1 nodes are available: persistentvolumeclaim \"claim-alice\" not found. preemption: 0/1 nodes "
                 "are available: 1 Preemption is not helpful for scheduling.",
                 "Your storage refers to a disk that does not exist", id="pvc-not-found"),
    pytest.param("0/4 nodes are available: 2 Insufficient cpu, 2 Insufficient cpu.", "No machine has enough free CPU",
                 id="repeated-resource"),
    pytest.param("0/6 nodes are available: 1 Insufficient ephemeral-storage, 2 node(s) didn't have free ports for "
                 "the requested pod ports, 3 node(s) didn't satisfy existing pods anti-affinity rules.",
                 "No machine has enough free disk space, and 2 have the needed network port in use and 3 run "
                 "something this server must not share a machine with", id="ports-and-anti-affinity"),
    pytest.param("0/2 nodes are available: 2 node(s) had untolerated taint {node.kubernetes.io/unschedulable: }.",
                 "All machines are closed to new servers", id="cordoned"),
    pytest.param("0/3 nodes are available: 1 node(s) exceed max volume count, 2 Insufficient memory.",
                 "No machine has enough free memory, and 1 has no room for another disk", id="max-volumes"),    # v1.10-v1.17 (predicates/error.go) and after v1.30 the scheduler does not name the taint
    pytest.param("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had taints that the pod didn't tolerate.",
                 "No machine has enough free CPU, and 2 are closed to servers like this one", id="taint-unnamed-old"),
    pytest.param("0/3 nodes are available: 3 node(s) had taints that the pod didn't tolerate.",
                 "No machine is open to servers like this one", id="taint-unnamed-old-all"),
]


@pytest.mark.parametrize(("message", "sentence"), SCHEDULING)
def test_scheduling_summary(message: str, sentence: str) -> None:
    summary = summarize_scheduling(message)
    assert summary is not None and summary.sentence == sentence
    assert summary.hint


def test_scheduling_summary_unknown_format() -> None:
    assert summarize_scheduling("the scheduler is on strike") is None


def test_a_reason_we_do_not_know_keeps_the_raw_message_whole() -> None:
    """Never a raw fragment inside a sentence ("..., and 1: node(s) had some brand new problem")."""
    message = "0/3 nodes are available: 1 node(s) had some brand new problem, 2 Insufficient cpu."
    assert summarize_scheduling(message) is None
    record = EventFormatter().format_event(ev("FailedScheduling", message, type=W))
    assert record["message"] == "No machine can take your server yet"
    assert record["raw_message"] == message


def test_long_failed_scheduling_message_is_summarized() -> None:
    message = "0/5000 nodes are available: " + "1 Insufficient cpu, " * 1000
    record = EventFormatter().format_event(ev("FailedScheduling", message, type=W))
    assert record["message"] == "No machine has enough free CPU"


def test_huge_failed_scheduling_message_keeps_its_raw_text() -> None:
    """Past 32,000 characters a message is junk or hostile: no summary, the raw text whole."""
    message = "0/5000 nodes are available: " + "1 Insufficient cpu, " * 50_000
    record = EventFormatter().format_event(ev("FailedScheduling", message, type=W))
    assert record["message"] == "No machine can take your server yet"
    assert record["raw_message"] == message


@pytest.mark.parametrize(
    ("quantity", "words"),
    [
        ("536870912", "512 MiB"),  # KubeSpawner's mem_limit "512M", in bytes
        ("1610612736", "1.5 GiB"),
        ("1Gi", "1Gi"),  # a Kubernetes quantity is already readable
        ("", ""),
    ],
    ids=["bytes-mib", "bytes-fraction-gib", "quantity", "empty"],
)
def test_memory_words(quantity: str, words: str) -> None:
    assert memory_words(quantity) == words
