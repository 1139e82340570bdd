"""Which pod each event is about, when the events of several pods come together.

A namespace's events (``kubectl get events -o json`` without a field selector) mix every
pod's, and one diagnosis of them all would name a cause for a pod it does not name. Events
name their object (``involvedObject``, or ``regarding`` in events.k8s.io), never its
owner, so an object goes with a pod only when the names tell: an object named like the
pod (an operator's resource, which the pod's field selector lists too), or the claim
KubeSpawner names after it (``claim-X`` for ``jupyter-X``: its default names, before and
since kubespawner 7, put the same suffix after both). Any other object goes with no pod.
Pure; no JupyterHub or Kubernetes import.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from richprogress.model.display import display_line

#: (kind, namespace, name) of the object an event is about ("" for what it lacks)
Subject = tuple[str, str, str]
#: (namespace, name) of a pod
Pod = tuple[str, str]

_POD_NAME = re.compile(r"jupyter-(.+)\Z", re.S)
_CLAIM_NAME = re.compile(r"claim-(.+)\Z", re.S)
_SERVER_NAME = re.compile(r"(?:jupyter|claim)-.", re.S)


class PodChoiceError(ValueError):
    """``--pod`` names no pod of the input, or one in several namespaces; the text says which."""


def subject_of(event: Mapping[str, Any]) -> Subject:
    """The object an event is about; read without trusting the input's types."""
    obj = event.get("involvedObject") or event.get("regarding")
    obj = obj if isinstance(obj, Mapping) else {}
    metadata = event.get("metadata")
    namespace = obj.get("namespace") or (metadata.get("namespace") if isinstance(metadata, Mapping) else None)
    kind, name = obj.get("kind"), obj.get("name")
    return tuple(value if isinstance(value, str) else "" for value in (kind, namespace, name))  # type: ignore[return-value]


def belongs(subject: Subject, pod: Pod) -> bool:
    """Whether an object goes with a pod: the pod itself, an object of the same name, or
    the pod's claim as KubeSpawner names it; always in the pod's namespace."""
    kind, namespace, name = subject
    if namespace != pod[0]:
        return False
    if name == pod[1]:
        return True
    claim, server = _CLAIM_NAME.match(name), _POD_NAME.match(pod[1])
    return kind == "PersistentVolumeClaim" and claim is not None and server is not None and claim[1] == server[1]


def owners(subjects: Sequence[Subject]) -> tuple[list[Pod], list[Pod | None]]:
    """The pods of the input (in the order they first appear) and each event's pod: None
    for an event of an object that goes with no pod of the input."""
    pods = list(dict.fromkeys((namespace, name) for kind, namespace, name in subjects if kind == "Pod"))
    # the rules of ``belongs`` as lookups: a namespace's events may be of thousands of pods
    by_name = {pod: pod for pod in pods}
    by_server = {(ns, server[1]): (ns, name) for ns, name in pods if (server := _POD_NAME.match(name))}
    found: list[Pod | None] = []
    for kind, namespace, name in subjects:
        pod = by_name.get((namespace, name))
        if pod is None and kind == "PersistentVolumeClaim" and (claim := _CLAIM_NAME.match(name)):
            pod = by_server.get((namespace, claim[1]))
        found.append(pod)
    return pods, found


def pod_label(pod: Pod, pods: Sequence[Pod]) -> str:
    """A pod's name as shown, with its namespace when the input spans several."""
    several = len({namespace for namespace, _ in pods}) > 1
    return display_line(f"{pod[0]}/{pod[1]}" if several else pod[1], 253)


def name_list(names: Sequence[str], most: int = 30) -> str:
    """``a, b, c``; past ``most`` names, ``... and N more``."""
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def select(wanted: str, subjects: Sequence[Subject], found: Sequence[Pod | None], pods: Sequence[Pod]) -> tuple[Pod, list[int]]:
    """The pod ``wanted`` names (``NAME`` or ``NAMESPACE/NAME``) and the indices of the
    events to keep for it: its own, those of the objects that go with it, and those of
    objects that go with no pod of the input and are not named after another server (not
    ``jupyter-*`` or ``claim-*``: a node, a claim of another name), as they may be its.

    A name that no pod has but another object has (an operator's resource whose pod was
    never made) is accepted, so its events can be explained alone. Raises
    ``PodChoiceError`` when nothing has that name, or pods of several namespaces do.
    """
    namespace, _, name = wanted.rpartition("/")
    matches = [pod for pod in pods if pod[1] == name and namespace in ("", pod[0])]
    if not matches:
        matches = list(dict.fromkeys((ns, n) for _, ns, n in subjects if n == name and namespace in ("", ns)))
    shown = display_line(wanted, 253)
    if not matches:
        listed = name_list([pod_label(pod, pods) for pod in pods]) or "none"
        raise PodChoiceError(f"--pod {shown}: no events of that pod; the input's pods: {listed}")
    if len(matches) > 1:
        spaces = ", ".join(display_line(ns, 63) for ns, _ in matches)
        raise PodChoiceError(
            f"--pod {shown}: pods of that name in several namespaces ({spaces}); give --pod NAMESPACE/NAME"
        )
    pod = matches[0]
    keep = [
        index
        for index, (subject, owner) in enumerate(zip(subjects, found, strict=True))
        if owner == pod or (owner is None and (belongs(subject, pod) or not _SERVER_NAME.match(subject[2])))
    ]
    return pod, keep


def plural(count: int, noun: str) -> str:
    """``1 pod``, ``3 pods``, ``2 Ingresses``."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun}es" if noun.endswith(("s", "x", "sh", "ch")) else f"{count} {noun}s"


def joined(parts: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def mix_sentence(subjects: Sequence[Subject], pods: Sequence[Pod]) -> str:
    """``The input mixes the events of 17 objects: 15 pods, 1 JupyterServer and 1
    PersistentVolumeClaim.``"""
    distinct = list(dict.fromkeys(subjects))
    kinds = Counter(kind for kind, _, _ in distinct if kind != "Pod")
    others = [plural(n, display_line(kind, 63) or "object of no kind") for kind, n in sorted(kinds.items())]
    return f"The input mixes the events of {plural(len(distinct), 'object')}: {joined([plural(len(pods), 'pod'), *others])}."
