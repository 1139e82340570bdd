"""PATCH bodies applied to a stored object: JSON merge patch, strategic merge, JSON patch.

The three content types a real server takes on PATCH (Kubernetes v1.31,
``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go``). A strategic merge patch is
applied as a JSON merge patch here: the two differ only for lists with merge keys (e.g.
``containers`` by ``name``), which none of our callers patch (KubeSpawner and kubectl
label/annotate patch labels and annotations). A JSON patch supports ``add``, ``replace``,
``remove`` and ``test``.
"""

from __future__ import annotations

import copy
from typing import Any

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
CONTENT_TYPES = (MERGE, STRATEGIC, JSON_PATCH)


class PatchError(ValueError):
    """A patch that cannot apply (answered with 422, or 400 when malformed)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, ``null`` deletes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer: {path!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _parent(doc: Any, parts: list[str]) -> Any:
    node = doc
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise PatchError(f"doc is missing path: /{'/'.join(parts)}")
    return node


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902, the operations kubectl and controllers send."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch is a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "path" not in op:
            raise PatchError(f"invalid JSON patch operation: {op!r}")
        parts = _pointer(str(op["path"]))
        if not parts:
            raise PatchError("a JSON patch may not replace the whole object")
        parent, last = _parent(doc, parts), parts[-1]
        kind = op.get("op")
        try:
            if kind in ("add", "replace"):
                if isinstance(parent, list):
                    index = len(parent) if last == "-" else int(last)
                    if kind == "add":
                        parent.insert(index, op.get("value"))
                    else:
                        parent[index] = op.get("value")
                else:
                    if kind == "replace" and last not in parent:
                        raise PatchError(f"replace operation does not apply: doc is missing key: {op['path']}")
                    parent[last] = op.get("value")
            elif kind == "remove":
                if isinstance(parent, list):
                    del parent[int(last)]
                else:
                    if last not in parent:
                        raise PatchError(f"remove operation does not apply: doc is missing path: {op['path']}")
                    del parent[last]
            elif kind == "test":
                current = parent[int(last)] if isinstance(parent, list) else parent.get(last)
                if current != op.get("value"):
                    raise PatchError(f"testing value {op['path']} failed")
            else:
                raise PatchError(f"unsupported JSON patch operation: {kind!r}")
        except (IndexError, ValueError, TypeError) as e:
            if isinstance(e, PatchError):
                raise
            raise PatchError(f"JSON patch does not apply at {op['path']}: {e}") from None
    return doc


def apply_patch(content_type: str, target: dict[str, Any], body: Any) -> dict[str, Any]:
    """The patched object; ``content_type`` is one of ``CONTENT_TYPES``."""
    if content_type == JSON_PATCH:
        patched = json_patch(target, body)
    else:
        if not isinstance(body, dict):
            raise PatchError("a merge patch must be an object")
        patched = merge_patch(target, body)
    if not isinstance(patched, dict):
        raise PatchError("the patched object is not an object")
    return patched
