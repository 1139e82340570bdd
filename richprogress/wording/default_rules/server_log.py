"""Default rules for the cause a failed server's own log names (``wording.log_causes``).

RichKubeSpawner reads the failing container's last log lines when a spawn fails and, when
they name a well-known cause, adds an event about the pod (``kube.container_log``): reason
``ServerLog``, message ``Container <name> log says <kind> (<subject>)`` (the line itself is
the container's text, shown only in the log block). One rule
per kind words it, so an admin's own rule can reword one kind, and the metrics count each
kind by its rule's id (``log-<kind>``). A kind that only *may* explain the failure (a
version mismatch, an unknown Python error) is a warning and not fatal: the container's
exit stays the cause then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from richprogress.wording.log_causes import (
    LOG_CAUSE_KINDS,
    MAY_KINDS,
    log_cause_hint,
    log_cause_sentence,
)


def _words(kind: str, of: Callable[[str, str | None], str]) -> Callable[..., str]:
    def words(subject: str = "", **_: str) -> str:
        return of(kind, subject or None)

    return words


def _rule(kind: str) -> dict[str, Any]:
    may = kind in MAY_KINDS
    return {
        "id": f"log-{kind}",
        "match": {
            "reason": r"ServerLog\Z",
            "message": rf"Container (?P<container>\S+) log says {kind}(?: \((?P<subject>[^)]*)\))?(?:: (?s:.*))?",
        },
        "template": _words(kind, log_cause_sentence),
        "hint": _words(kind, log_cause_hint),
        "severity": "warning" if may else "error",
        "phase": "starting",
        **({} if may else {"fatal": True}),
    }


SERVER_LOG: list[dict[str, Any]] = [_rule(kind) for kind in LOG_CAUSE_KINDS]
