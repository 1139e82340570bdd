"""The cause of a failed spawn, as one short word that can be counted.

The same name for the Prometheus metrics (``richprogress_spawn_failures_total{cause}``)
and for anything else that counts failures by cause (the spawn history's admin page), so
their numbers agree: the id of the rule behind the decisive record; ``timeout`` when no
record explains a spawn that ran out of time (its start limit, or the hub's HTTP check that
got no answer); else ``unknown``. Pure; no JupyterHub import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from richprogress.story.hub_errors import read_hub_error

TIMEOUT = "timeout"
UNKNOWN = "unknown"

# The texts of a start that ran out of time, besides the hub's own (``hub_errors``: its
# start timeout, KubeSpawner's, the hub's HTTP check): a bare TimeoutError's class name.
_TIMEOUT_TEXT = re.compile(r"timed? ?out|timeout", re.IGNORECASE)


def failure_cause(
    records: Iterable[Mapping[str, Any]], record_id: str | None, failure_message: str | None
) -> str:
    """The cause of a failure: the ``rule`` of the record ``record_id`` (the diagnosis's
    decisive record); ``unknown`` when that record has no rule; with no decisive record,
    ``timeout`` when ``failure_message`` says the start ran out of time, else ``unknown``.
    The result is not bounded here: metrics bound it to the rules a hub loaded."""
    if record_id:
        for record in records:
            if record.get("id") == record_id:
                rule = record.get("rule")
                return rule if isinstance(rule, str) and rule else UNKNOWN
    if read_hub_error(failure_message) is not None or _TIMEOUT_TEXT.search(failure_message or ""):
        return TIMEOUT
    return UNKNOWN
