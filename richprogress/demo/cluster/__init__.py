"""A simulated Kubernetes cluster for demos and tests, which need no real cluster.

An aiohttp server speaking the Kubernetes REST and watch protocol that KubeSpawner 7.1 and
kubectl use (``api.py``; discovery, patches, pod logs and exec, events.k8s.io in their own
modules), with a simulated kubelet that plays scenario files (real event wording, real status
changes; events written at client-go's real rates unless ``--every-event``, recorder.py)
and notebook stand-ins on per-pod loopback addresses. What it follows from a real
API server, and the peers that check it (kubectl, KubeSpawner's own suite), are in
docs/development.md. Run it alone with
``python -m richprogress.demo.cluster``, or in-process with ``SimulatedCluster``.
"""

from .cluster import SimulatedCluster, kubeconfig
from .scenarios import (
    REGISTRY_PATH,
    SCENARIO_ANNOTATION,
    SCENARIO_DIR,
    Scenario,
    ScenarioError,
    builtin_scenarios,
    load_scenarios,
    normalize_image,
    registry_has,
    scenario_names,
)

__all__ = [
    "REGISTRY_PATH",
    "SCENARIO_ANNOTATION",
    "SCENARIO_DIR",
    "Scenario",
    "ScenarioError",
    "SimulatedCluster",
    "builtin_scenarios",
    "kubeconfig",
    "load_scenarios",
    "normalize_image",
    "registry_has",
    "scenario_names",
]
