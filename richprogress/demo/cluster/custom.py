"""The simulated cluster's custom resource: a CRD-style ``JupyterServer`` an operator reconciles.

It names the custom kind (group, version, plural) in one place and makes
its objects. The API serves it under ``/apis/<group>/<version>/...`` with the same list,
watch, get, create and delete as core resources (see ``api.py``); scenarios emit events on
it with ``"object": "JupyterServer"`` (see ``scenarios/README.md``). It stands for the
custom resource of an operator-based spawner (kubespawner's proposal to follow the Kubernetes
operator design pattern): one object per user server, named like the pod.
"""

from __future__ import annotations

from typing import Any

from .store import Obj

GROUP = "demo.richprogress.org"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "JupyterServer"
PLURAL = "jupyterservers"

#: URL plural -> (group, version), for the API's /apis/ routes
CUSTOM_RESOURCES: dict[str, tuple[str, str]] = {PLURAL: (GROUP, VERSION)}


def api_version_of(resource: str) -> str:
    """The apiVersion of a resource's objects and lists (``v1`` for core resources)."""
    group_version = CUSTOM_RESOURCES.get(resource)
    return "/".join(group_version) if group_version else "v1"


def server_object(pod: Obj, image: str, user: str) -> dict[str, Any]:
    """The ``JupyterServer`` of a pod: named like it, owned by it (so it goes with it)."""
    meta = pod["metadata"]
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}
            ],
        },
        "spec": {"user": user, "image": image},
        "status": {"phase": "Pending"},
    }
