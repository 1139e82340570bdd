"""The discovery documents a client reads before it asks for anything: ``/api``, ``/apis``.

kubectl (v1.32) reads ``/api`` and ``/apis`` to map ``kubectl get events`` to a URL. It asks
for the aggregated form first and takes the legacy ``APIVersions``/``APIGroupList`` when the
answer's Content-Type is plain ``application/json`` (client-go v0.32,
``discovery/aggregated_discovery.go``), then one ``APIResourceList`` per group version; a 404
for ``/openapi/v2`` or ``/openapi/v3`` makes it fall back to printing without schemas.
"""

from __future__ import annotations

from typing import Any

from . import custom, eventsv1
from .store import RESOURCES

_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
# resource -> (singular name, short names)
_NAMES: dict[str, tuple[str, list[str]]] = {
    "pods": ("pod", ["po"]),
    "events": ("event", ["ev"]),
    "persistentvolumeclaims": ("persistentvolumeclaim", ["pvc"]),
    "services": ("service", ["svc"]),
    "secrets": ("secret", []),
    "configmaps": ("configmap", ["cm"]),
    "namespaces": ("namespace", ["ns"]),
    custom.PLURAL: (custom.KIND.lower(), []),
}
VERSION_INFO = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.0-richprogress-sim",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.22.5",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def _resource(name: str) -> dict[str, Any]:
    kind, namespaced = RESOURCES[name]
    singular, short = _NAMES[name]
    entry: dict[str, Any] = {
        "name": name,
        "singularName": singular,
        "namespaced": namespaced,
        "kind": kind,
        "verbs": _VERBS if name != "namespaces" else [v for v in _VERBS if v != "deletecollection"],
    }
    if short:
        entry["shortNames"] = short
    return entry


def core_versions(server: str) -> dict[str, Any]:
    """``GET /api``."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server}],
    }


def core_resources() -> dict[str, Any]:
    """``GET /api/v1``: the core resources, with the pod subresources we serve."""
    resources = [_resource(r) for r in RESOURCES if r not in custom.CUSTOM_RESOURCES]
    resources.append({"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]})
    resources.append({"name": "pods/exec", "singularName": "", "namespaced": True, "kind": "PodExecOptions", "verbs": ["create", "get"]})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1", "resources": resources}


def _group(group: str, version: str) -> dict[str, Any]:
    gv = {"groupVersion": f"{group}/{version}", "version": version}
    return {"name": group, "versions": [gv], "preferredVersion": gv}


def groups() -> dict[str, Any]:
    """``GET /apis``: events.k8s.io and the custom resource's group."""
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(eventsv1.GROUP, eventsv1.VERSION), _group(custom.GROUP, custom.VERSION)],
    }


def group_resources(group: str, version: str) -> dict[str, Any] | None:
    """``GET /apis/<group>/<version>``, or None for a group version we do not serve."""
    if (group, version) == (eventsv1.GROUP, eventsv1.VERSION):
        resources = [_resource("events")]
    elif (group, version) == (custom.GROUP, custom.VERSION):
        resources = [_resource(custom.PLURAL)]
    else:
        return None
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}", "resources": resources}


def group_info(group: str) -> dict[str, Any] | None:
    """``GET /apis/<group>``."""
    for entry in groups()["groups"]:
        if entry["name"] == group:
            return {"kind": "APIGroup", "apiVersion": "v1", **entry}
    return None
