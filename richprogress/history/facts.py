"""``spawn_facts(spawner)``: the facts an admin needs about a spawn, read from its spawner.

One and only purpose: a plain, JSON-ready dict of where and what a spawn ran (namespace,
pod, node, images, resource requests/limits, profile). Every read is getattr-safe: a
spawner that is not a KubeSpawner gives ``None`` for what it does not have, and nothing
here raises. The history store saves these with each spawn; the failure page's facts box
can reuse the same function.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict


class SpawnFacts(TypedDict):
    """What ``spawn_facts`` returns (every value may be None)."""

    namespace: str | None
    pod: str | None
    node: str | None
    images: list[str]
    requests: dict[str, str]
    limits: dict[str, str]
    profile_slug: str | None
    profile_name: str | None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _quantity(value: Any) -> str | None:
    """A resource amount as text (``2``, ``0.5``, ``1G``); None when unset."""
    if value is None or isinstance(value, bool) or value == "":
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _get(spawner: Any, name: str) -> Any:
    try:
        return getattr(spawner, name, None)
    except Exception:  # a property that needs a running hub
        return None


def _pod(spawner: Any, namespace: str | None, pod_name: str | None) -> Mapping[str, Any] | None:
    reflector = _get(spawner, "pod_reflector")
    pods = getattr(reflector, "pods", None) if reflector is not None else None
    if not isinstance(pods, Mapping) or not pod_name:
        return None
    pod = pods.get(f"{namespace}/{pod_name}")
    return pod if isinstance(pod, Mapping) else None


def _profile(spawner: Any) -> tuple[str | None, str | None]:
    options = _get(spawner, "user_options")
    slug = _text(options.get("profile")) if isinstance(options, Mapping) else None
    profiles = _get(spawner, "profile_list")
    if isinstance(profiles, Mapping):
        profiles = list(profiles.values())
    if not isinstance(profiles, list):
        return slug, None
    chosen = None
    for profile in profiles:
        if not isinstance(profile, Mapping):
            continue
        if slug is not None and profile.get("slug") == slug:
            chosen = profile
            break
        if slug is None and (profile.get("default") or chosen is None):
            chosen = profile
            if profile.get("default"):
                break
    if chosen is None:
        return slug, None
    return slug or _text(chosen.get("slug")), _text(chosen.get("display_name"))


def spawn_facts(spawner: Any) -> SpawnFacts:
    """Namespace, pod, node, images, requests/limits and profile of ``spawner``'s spawn."""
    namespace = _text(_get(spawner, "namespace"))
    pod_name = _text(_get(spawner, "pod_name"))
    pod = _pod(spawner, namespace, pod_name)
    spec = pod.get("spec") if pod is not None else None
    node = _text(spec.get("nodeName")) if isinstance(spec, Mapping) else None
    images: list[str] = []
    if isinstance(spec, Mapping):
        for key in ("initContainers", "containers"):
            for container in spec.get(key) or []:
                image = _text(container.get("image")) if isinstance(container, Mapping) else None
                if image and image not in images:
                    images.append(image)
    if not images and _text(_get(spawner, "image")):
        images.append(_get(spawner, "image"))
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    for target, cpu, mem, extra in (
        (requests, "cpu_guarantee", "mem_guarantee", "extra_resource_guarantees"),
        (limits, "cpu_limit", "mem_limit", "extra_resource_limits"),
    ):
        for key, attr in (("cpu", cpu), ("memory", mem)):
            amount = _quantity(_get(spawner, attr))
            if amount is not None:
                target[key] = amount
        more = _get(spawner, extra)
        if isinstance(more, Mapping):
            for key, value in more.items():
                amount = _quantity(value)
                if isinstance(key, str) and amount is not None:
                    target[key] = amount
    slug, name = _profile(spawner)
    return {
        "namespace": namespace,
        "pod": pod_name,
        "node": node,
        "images": images,
        "requests": requests,
        "limits": limits,
        "profile_slug": slug,
        "profile_name": name,
    }
