"""The facts an admin needs about one spawn, read from its spawner: one purpose.

"Copy details", the text endpoint and the failure page's facts box show them (issue 8):
namespace, pod, node, images, profile (slug and display name), CPU/memory/GPU requests and
limits, node selector and tolerations in short, the hub's start timeout, and the versions of
richprogress, JupyterHub and KubeSpawner. Every value is read defensively (a spawner that is
not a KubeSpawner has none of these traits) and returned as plain text pairs; views escape
and shorten them as they do event text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import metadata
from typing import Any

from richprogress._version import __version__

Facts = list[tuple[str, str]]

_ASSIGNED_RE = re.compile(r"Successfully assigned (?:\S+/)?\S+ to (?P<node>\S+)")


def _attr(spawner: Any, name: str) -> Any:
    try:
        return getattr(spawner, name, None)
    except Exception:  # a property of a half-made spawner may raise
        return None


def _text(value: Any) -> str:
    if value is None or value == "" or value == {} or value == []:
        return ""
    return str(value)


def _quantity(value: Any) -> str:
    """KubeSpawner keeps memory in bytes and CPU as a float; say them as people read them."""
    if value is None or value == "":
        return ""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = int(value)
        for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20)):
            if number >= size:
                return f"{number / size:.3g}{unit}"
        return str(number)
    return str(value)


def _pair(guarantee: Any, limit: Any) -> str:
    left, right = _quantity(guarantee), _quantity(limit)
    if not left and not right:
        return ""
    return f"request {left or 'none'}, limit {right or 'none'}"


def _gpu(spawner: Any) -> str:
    guarantees = _attr(spawner, "extra_resource_guarantees") or {}
    limits = _attr(spawner, "extra_resource_limits") or {}
    names = [n for n in (*guarantees, *limits) if "gpu" in str(n).lower()]
    parts = []
    for name in dict.fromkeys(names):
        parts.append(f"{name} {_pair(guarantees.get(name), limits.get(name))}")
    return "; ".join(parts)


def _short_mapping(value: Any) -> str:
    if not isinstance(value, Mapping) or not value:
        return ""
    return ", ".join(f"{k}={v}" for k, v in value.items())


def _short_tolerations(value: Any) -> str:
    if not isinstance(value, Iterable) or isinstance(value, (str, bytes)):
        return ""
    parts = []
    for item in value:
        if not isinstance(item, Mapping):
            continue
        key = item.get("key") or "*"
        op = item.get("operator") or "Equal"
        text = f"{key}" if op == "Exists" else f"{key}={item.get('value', '')}"
        if item.get("effect"):
            text += f":{item['effect']}"
        parts.append(text)
    return ", ".join(parts)


def _profile(spawner: Any) -> str:
    options = _attr(spawner, "user_options") or {}
    slug = options.get("profile") if isinstance(options, Mapping) else None
    if not slug:
        return ""
    name = ""
    for profile in _attr(spawner, "_profile_list") or _attr(spawner, "profile_list") or []:
        if isinstance(profile, Mapping) and profile.get("slug") == slug:
            name = str(profile.get("display_name") or "")
            break
    return f"{slug} ({name})" if name and name != slug else str(slug)


def _node(records: Iterable[Mapping[str, Any]]) -> str:
    for record in records:
        if record.get("reason") == "Scheduled":
            found = _ASSIGNED_RE.search(str(record.get("raw_message") or ""))
            if found:
                return found.group("node")
    return ""


def _images(spawner: Any) -> str:
    images = [_text(_attr(spawner, "image"))]
    for container in _attr(spawner, "init_containers") or []:
        if isinstance(container, Mapping) and container.get("image"):
            images.append(f"{container['image']} (init)")
    return ", ".join(image for image in images if image)


@lru_cache(maxsize=1)
def versions() -> str:
    """``richprogress 1.0, JupyterHub 6.1.1, KubeSpawner 7.1.0`` (those installed)."""
    parts = [f"richprogress {__version__}"]
    for label, dist in (("JupyterHub", "jupyterhub"), ("KubeSpawner", "jupyterhub-kubespawner")):
        try:
            parts.append(f"{label} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(parts)


def spawn_facts(spawner: Any, records: Iterable[Mapping[str, Any]] = ()) -> Facts:
    """The facts an admin needs, as (label, value) pairs, only those known."""
    start_timeout = _attr(spawner, "start_timeout")
    facts: Facts = [
        ("Namespace", _text(_attr(spawner, "namespace"))),
        ("Pod", _text(_attr(spawner, "pod_name"))),
        ("Node", _node(records)),
        ("Images", _images(spawner)),
        ("Profile", _profile(spawner)),
        ("CPU", _pair(_attr(spawner, "cpu_guarantee"), _attr(spawner, "cpu_limit"))),
        ("Memory", _pair(_attr(spawner, "mem_guarantee"), _attr(spawner, "mem_limit"))),
        ("GPU", _gpu(spawner)),
        ("Node selector", _short_mapping(_attr(spawner, "node_selector"))),
        ("Tolerations", _short_tolerations(_attr(spawner, "tolerations"))),
        ("Start timeout", f"{start_timeout:g} s" if isinstance(start_timeout, (int, float)) else ""),
        ("Versions", versions()),
    ]
    return [(label, value) for label, value in facts if value]
