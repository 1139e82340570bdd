"""How a timeline row reads: which pills it shows and where its long names may break.

Shared by the failure page (``web_context``, rendered by Jinja) and mirrored by the live
page's ``static/richprogress.js`` and ``static/breaks.js``; tests/test_row_text.py checks
that both sides agree. Plain data only: the templates autoescape, the JS uses text nodes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

#: tokens this long or longer that hold one of "-/:." are kept whole between break points
LONG_NAME = 16
_SPLIT_AFTER = re.compile(r"(?<=[/:.])")
_LONG_NAME_CHARS = re.compile(r"[-/:.]")

#: event types the row's colour already says (or that say nothing: our own messages)
QUIET_TYPES = frozenset({"Normal", "Warning", "Custom", ""})

#: KubeSpawner names the user's container "notebook" (kubespawner/objects.py, make_pod, 7.1)
MAIN_CONTAINER = "notebook"


def breakable_parts(text: str) -> list[tuple[str, bool]]:
    """``(text, keep_whole)`` parts: long names split after "/", ":" and ".".

    A name like ``quay.io/jupyter/no-such-notebook:2026-11`` would otherwise wrap at a
    hyphen and read like a typo; its pieces are shown unbroken, each followed by ``<wbr>``.
    """
    parts: list[tuple[str, bool]] = []
    plain = ""
    for token in re.split(r"(\s+)", str(text)):
        if len(token) >= LONG_NAME and _LONG_NAME_CHARS.search(token) and not token.isspace():
            if plain:
                parts.append((plain, False))
            plain = ""
            parts.extend((piece, True) for piece in _SPLIT_AFTER.split(token) if piece)
        else:
            plain += token
    if plain:
        parts.append((plain, False))
    return parts


#: a name worth its own line in a headline: an image reference, a host:port, a path
#: what an image reference (or a similar name) is made of; anything else keeps the sentence whole
_NAME = re.compile(r"[A-Za-z0-9._/:@+-]+")
_REFERENCE = re.compile(r"""["'“]?(?P<ref>[^\s"'“”]{12,}?)["'”]?(?=[.,;:!?)]*(?:\s|$))""")


def headline_parts(text: str) -> tuple[str, str]:
    """``(headline, reference)``: the first long name of a headline (an image reference
    holding "/" or ":") taken out, so the headline names the problem in a few words and the
    name stands on its own line in monospace with a copy button, instead of wrapping
    through large bold text. ``(text, "")`` when there is none, or when the sentence would
    lose its subject. "The image X does not exist." -> ("The image does not exist.", "X")."""
    for match in _REFERENCE.finditer(text):
        ref = match.group("ref")
        if ("/" in ref or ":" in ref) and not ref.endswith(":"):
            if not _NAME.fullmatch(ref):
                # not a name a registry could hold (a hostile "<img ...>" with spaces): the
                # sentence stays whole rather than split in the middle of the odd name
                return text, ""
            start, end = match.span()
            before, after = text[:start].rstrip(), text[end:].lstrip()
            if not before:
                return text, ""
            joiner = "" if not after or after[0] in ".,;:!?)" else " "
            return before + joiner + after, ref
    return text, ""


def main_pod(records: Iterable[Mapping[str, Any]]) -> str | None:
    """The pod most records are about: the user's pod, when the spawner cannot say."""
    counts = Counter(
        (r.get("object") or {}).get("name")
        for r in records
        if (r.get("object") or {}).get("kind") == "Pod" and (r.get("object") or {}).get("name")
    )
    return counts.most_common(1)[0][0] if counts else None


def shown_pills(
    record: Mapping[str, Any], own_pod: str | None, main_container: str | None = MAIN_CONTAINER
) -> dict[str, str]:
    """The pills worth showing on a row: ``type``, ``object``, ``container`` ("" = none).

    The user's own pod and its main container are named once (the facts box), not on every
    row; the type only when the row's colour does not already say it (a custom type).
    """
    obj = record.get("object") or {}
    kind, name = obj.get("kind"), obj.get("name")
    own = kind == "Pod" and own_pod is not None and name == own_pod
    container = obj.get("container") or ""
    type_ = str(record.get("type") or "")
    return {
        "type": "" if type_ in QUIET_TYPES else type_,
        "object": "" if own else " ".join(str(p) for p in (kind, name) if p),
        "container": "" if (own or own_pod is None) and container == main_container else container,
    }
