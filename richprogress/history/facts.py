"""The facts kept with each spawn in the history: a plain, JSON-ready dict.

Where and what a spawn ran (namespace, pod, node, images, resource requests and limits,
profile), rendered from the one reader of a spawner's facts
(``richprogress.stream.spawn_facts.read_facts``). The dict's keys are the store's: old
rows hold the same ones, so they never change. Nothing here raises.

``shown_facts_of`` reads them back as the (label, text) pairs the pages and the
endpoints show for a stored spawn: never the current spawner's, which may have other
options by now (the spawn form's, or the hub's after a restart).
"""

from __future__ import annotations

from typing import Any, TypedDict

from richprogress.stream.spawn_facts import Facts, SpawnerFacts, fact_pairs, read_facts


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


def shown_facts_of(spawn: dict[str, Any]) -> Facts:
    """The facts of a stored spawn as (label, text) pairs: those its page showed when it
    ended (``shown_facts``); for a row kept before those were, rebuilt from its ``facts``
    dict (what that holds: no selector, tolerations nor timeout, and not the versions
    that ran it: those of today's hub would be wrong)."""
    shown = spawn.get("shown_facts")
    if isinstance(shown, list) and shown:
        return [
            (str(pair[0]), str(pair[1]))
            for pair in shown
            if isinstance(pair, (list, tuple)) and len(pair) == 2
        ]
    kept = spawn.get("facts")
    if not isinstance(kept, dict):
        return []
    images = kept.get("images")
    requests, limits = kept.get("requests"), kept.get("limits")
    pairs = fact_pairs(
        SpawnerFacts(
            namespace=kept.get("namespace") or None,
            pod=kept.get("pod") or None,
            node=kept.get("node") or None,
            images=tuple((str(i), False) for i in images) if isinstance(images, list) else (),
            requests=requests if isinstance(requests, dict) else {},
            limits=limits if isinstance(limits, dict) else {},
            profile_slug=kept.get("profile_slug") or None,
            profile_name=kept.get("profile_name") or None,
        )
    )
    return [(label, value) for label, value in pairs if label != "Versions"]
