"""The facts an admin needs about one spawn, read from its spawner: the one reader.

``read_facts`` reads them once into ``SpawnerFacts``: namespace, pod, node, images,
profile (slug and display name), resource requests and limits, node selector,
tolerations and the hub's start timeout. Two renderings use it: ``fact_pairs``, the
(label, text) pairs of the failure page's facts box, "Copy details" and the text endpoint
(with the versions of richprogress, JupyterHub and KubeSpawner), and
``richprogress.history.facts.stored_facts``, the dict kept with each spawn.

A spawner's traits are the *current* options, not a past spawn's: KubeSpawner applies a
profile inside ``start()``, and a later spawn form or start changes them again. So the
facts of a spawn are kept with its timeline (``timeline_facts``): its spawner's traits are
read when the spawn starts (``keep_facts``: at ``start()``, and again once KubeSpawner
has loaded the profile), what its pod says (the node, the images) while the pod is there,
and once the spawn has ended the facts are read one last time and never again, so every
page, the endpoints and the stored spawn tell the same facts however the spawner changes.

Every value is read defensively (a spawner that is not a KubeSpawner has none of these
traits, a property of a half-made spawner may raise). Views escape and shorten the pairs
as they do event text.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import metadata
from typing import Any

from richprogress._version import __version__
from richprogress.typical.profile import chosen_profile, nonempty_text, spawner_attr

Facts = list[tuple[str, str]]

_ASSIGNED_RE = re.compile(r"Successfully assigned (?:\S+/)?\S+ to (?P<node>\S+)")


@dataclass(frozen=True)
class SpawnerFacts:
    """What one spawner says about its spawn (``read_facts``); None or empty: not known.

    Amounts are kept as the spawner has them (KubeSpawner: CPU as a float, memory in bytes
    or as ``"1G"``); each rendering words them its own way.
    """

    namespace: str | None = None
    pod: str | None = None
    #: the node in the pod's spec, while the pods reflector holds the pod
    node: str | None = None
    #: the node the spawn's ``Scheduled`` event names (known after the pod is gone)
    scheduled_node: str | None = None
    #: (image, whether an init container runs it), in the pod's order
    images: tuple[tuple[str, bool], ...] = ()
    #: requested and limited amounts: ``cpu``, ``memory`` and extra resources by name
    requests: Mapping[str, Any] = field(default_factory=dict)
    limits: Mapping[str, Any] = field(default_factory=dict)
    profile_slug: str | None = None
    profile_name: str | None = None
    node_selector: Mapping[str, Any] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    start_timeout: float | None = None


def _amount(value: Any) -> bool:
    """Whether ``value`` is a set amount (not None, empty or a bool)."""
    return value is not None and value != "" and not isinstance(value, bool)


def _pod_spec(spawner: Any, namespace: str | None, pod_name: str | None) -> Mapping[str, Any] | None:
    """The spec of the spawn's pod as the pods reflector holds it, if it does."""
    reflector = spawner_attr(spawner, "pod_reflector")
    pods = getattr(reflector, "pods", None) if reflector is not None else None
    if not isinstance(pods, Mapping) or not pod_name:
        return None
    pod = pods.get(f"{namespace}/{pod_name}")
    spec = pod.get("spec") if isinstance(pod, Mapping) else None
    return spec if isinstance(spec, Mapping) else None


def _scheduled_node(records: Iterable[Mapping[str, Any]]) -> str | None:
    for record in records:
        if record.get("reason") == "Scheduled":
            found = _ASSIGNED_RE.search(str(record.get("raw_message") or ""))
            if found:
                return found.group("node")
    return None


def _images(spawner: Any, spec: Mapping[str, Any] | None) -> tuple[tuple[str, bool], ...]:
    """The pod's images (init containers first), else those the spawner's traits name."""
    found: dict[str, bool] = {}
    if spec is not None:
        for key, init in (("initContainers", True), ("containers", False)):
            for container in spec.get(key) or []:
                image = nonempty_text(container.get("image")) if isinstance(container, Mapping) else None
                if image is not None:
                    found.setdefault(image, init)
    if not found:
        image = nonempty_text(spawner_attr(spawner, "image"))
        if image is not None:
            found[image] = False
        for container in spawner_attr(spawner, "init_containers") or []:
            image = nonempty_text(container.get("image")) if isinstance(container, Mapping) else None
            if image is not None:
                found.setdefault(image, True)
    return tuple(found.items())


def _resources(spawner: Any, cpu: str, mem: str, extra: str) -> dict[str, Any]:
    amounts: dict[str, Any] = {}
    for key, name in (("cpu", cpu), ("memory", mem)):
        value = spawner_attr(spawner, name)
        if _amount(value):
            amounts[key] = value
    more = spawner_attr(spawner, extra)
    if isinstance(more, Mapping):
        for key, value in more.items():
            if isinstance(key, str) and _amount(value):
                amounts[key] = value
    return amounts


def read_facts(
    spawner: Any, records: Iterable[Mapping[str, Any]] = (), *, pod: bool = True
) -> SpawnerFacts:
    """The facts of ``spawner``'s spawn (``records``: its timeline's, for the node that
    its ``Scheduled`` event names). ``pod=False``: the traits alone, not the pod the
    reflector holds (at a spawn's start that pod, if any, is the last spawn's)."""
    namespace = nonempty_text(spawner_attr(spawner, "namespace"))
    pod_name = nonempty_text(spawner_attr(spawner, "pod_name"))
    spec = _pod_spec(spawner, namespace, pod_name) if pod else None
    slug, profile = chosen_profile(spawner)
    selector = spawner_attr(spawner, "node_selector")
    tolerations = spawner_attr(spawner, "tolerations")
    if not isinstance(tolerations, Iterable) or isinstance(tolerations, (str, bytes, Mapping)):
        tolerations = ()
    timeout = spawner_attr(spawner, "start_timeout")
    return SpawnerFacts(
        namespace=namespace,
        pod=pod_name,
        node=nonempty_text(spec.get("nodeName")) if spec is not None else None,
        scheduled_node=_scheduled_node(records),
        images=_images(spawner, spec),
        requests=_resources(spawner, "cpu_guarantee", "mem_guarantee", "extra_resource_guarantees"),
        limits=_resources(spawner, "cpu_limit", "mem_limit", "extra_resource_limits"),
        profile_slug=slug,
        profile_name=nonempty_text(profile.get("display_name")) if profile is not None else None,
        node_selector=dict(selector) if isinstance(selector, Mapping) else {},
        tolerations=tuple(item for item in tolerations if isinstance(item, Mapping)),
        start_timeout=float(timeout) if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) else None,
    )


# -- the facts of one spawn, kept with its timeline ------------------------------------------


@dataclass(frozen=True)
class _Kept:
    facts: SpawnerFacts
    #: read after the spawn ended: these are its facts for good
    final: bool


#: timeline -> the facts kept for its spawn; a timeline nobody holds any more takes its
#: facts with it
_kept: weakref.WeakKeyDictionary[Any, _Kept] = weakref.WeakKeyDictionary()


def keep_facts(spawner: Any, timeline: Any) -> None:
    """Read ``spawner``'s traits now and keep them as the facts of the spawn ``timeline``
    tells: call it when the spawn's options are final (at ``start()``, after JupyterHub
    applied the user's options; KubeSpawner again once its profile is loaded). Never
    raises: facts must not stop a spawn."""
    if timeline is None:
        return
    try:
        _kept[timeline] = _Kept(read_facts(spawner, pod=False), final=False)
    except Exception:  # a half-made spawner, or a timeline without weak references
        return


def _now(spawner: Any, kept: SpawnerFacts | None, records: list[Mapping[str, Any]]) -> SpawnerFacts:
    """The facts as far as they can be read now: the kept traits (else the spawner's own),
    with what the spawn's pod and its ``Scheduled`` event say."""
    if kept is None:
        return read_facts(spawner, records)
    spec = _pod_spec(spawner, kept.namespace, kept.pod)
    images = _images(None, spec) if spec is not None else ()
    return replace(
        kept,
        node=nonempty_text(spec.get("nodeName")) if spec is not None else None,
        scheduled_node=_scheduled_node(records),
        images=images or kept.images,
    )


def timeline_facts(spawner: Any, timeline: Any) -> SpawnerFacts:
    """The facts of the spawn ``timeline`` tells (the spawner's current or last one).

    While it runs: the traits kept at its start, with what its pod says now. Once it has
    ended: the facts read at the first look after its end (the spawn history's snapshot
    takes that look when the spawn ends), the same every time after, whatever the spawner
    is told later. Without a timeline: the spawner's facts now.
    """
    if timeline is None:
        return read_facts(spawner)
    held = _kept.get(timeline)
    if held is not None and held.final:
        return held.facts
    facts = _now(spawner, held.facts if held is not None else None, timeline.records())
    if getattr(timeline, "outcome", "pending") != "pending":
        try:
            _kept[timeline] = _Kept(facts, final=True)
        except TypeError:  # not weakly referenceable: read again next time
            pass
    return facts


# -- the label pairs ---------------------------------------------------------------------------

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


def _gpu(facts: SpawnerFacts) -> str:
    names = [n for n in (*facts.requests, *facts.limits) if "gpu" in n.lower()]
    return "; ".join(
        f"{name} {_pair(facts.requests.get(name), facts.limits.get(name))}" for name in dict.fromkeys(names)
    )


def _profile(facts: SpawnerFacts) -> str:
    slug, name = facts.profile_slug, facts.profile_name
    if not slug:
        return ""
    return f"{slug} ({name})" if name and name != slug else slug


def _images_text(facts: SpawnerFacts) -> str:
    main = [image for image, init in facts.images if not init]
    return ", ".join(main + [f"{image} (init)" for image, init in facts.images if init])


def fact_pairs(facts: SpawnerFacts) -> Facts:
    """The facts as (label, text) pairs, only those known, and the versions."""
    timeout = facts.start_timeout
    pairs: Facts = [
        ("Namespace", facts.namespace or ""),
        ("Pod", facts.pod or ""),
        ("Node", facts.node or facts.scheduled_node or ""),
        ("Images", _images_text(facts)),
        ("Profile", _profile(facts)),
        ("CPU", _pair(facts.requests.get("cpu"), facts.limits.get("cpu"))),
        ("Memory", _pair(facts.requests.get("memory"), facts.limits.get("memory"))),
        ("GPU", _gpu(facts)),
        ("Node selector", _short_mapping(facts.node_selector)),
        ("Tolerations", _short_tolerations(facts.tolerations)),
        ("Start timeout", f"{timeout:g} s" if timeout is not None else ""),
        ("Versions", versions()),
    ]
    return [(label, value) for label, value in pairs if value]


def spawn_facts(spawner: Any, records: Iterable[Mapping[str, Any]] = ()) -> Facts:
    """The facts an admin needs, as (label, text) pairs: ``fact_pairs(read_facts(...))``."""
    return fact_pairs(read_facts(spawner, records))
