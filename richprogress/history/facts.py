"""The facts kept with each spawn in the history: a plain, JSON-ready dict.

Where and what a spawn ran (namespace, pod, node, images, resource requests and limits,
profile), rendered from the one reader of a spawner's facts
(``richprogress.stream.spawn_facts.read_facts``). The dict's keys are the store's: old
rows hold the same ones, so they never change. Nothing here raises.
"""

from __future__ import annotations

from typing import Any, TypedDict

from richprogress.stream.spawn_facts import SpawnerFacts, read_facts


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


def _quantity(value: Any) -> str:
    """A resource amount as text, as the spawner gives it (``2``, ``0.5``, ``1G``)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def stored_facts(facts: SpawnerFacts) -> SpawnFacts:
    """``facts`` as the history stores them. The node is the pod's own (``node``), as it
    always was: not the one a ``Scheduled`` event named."""
    return {
        "namespace": facts.namespace,
        "pod": facts.pod,
        "node": facts.node,
        "images": [image for image, _init in facts.images],
        "requests": {key: _quantity(value) for key, value in facts.requests.items()},
        "limits": {key: _quantity(value) for key, value in facts.limits.items()},
        "profile_slug": facts.profile_slug,
        "profile_name": facts.profile_name,
    }


def spawn_facts(spawner: Any) -> SpawnFacts:
    """Namespace, pod, node, images, requests/limits and profile of ``spawner``'s spawn."""
    return stored_facts(read_facts(spawner))
