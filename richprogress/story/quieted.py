"""How a record is shown on the pages (``row``, ``quiet`` or ``hidden``): its own ``show``,
and a FailedScheduling quieted once a scale-up is in hand.

A rule (or ``quiet_reasons``) decides for an event alone. One thing needs the spawn: the
scheduler's FailedScheduling ("0/3 nodes are available: 3 Insufficient cpu") comes before
every scale-up, and reads like a failure to the user though a machine is being added. So
once the spawn has a record saying a machine is coming (cluster-autoscaler's
``TriggeredScaleUp``, Karpenter's ``Nominated``), its FailedScheduling rows are quiet,
those before and after it: the autoscaler asked for the machine because of them. Not a
storage one (a new machine does not bind a volume), and never the row of the cause: the
diagnosis reads every record as it is, and a quiet row that turns out to be what went
wrong is shown in full. The live page's ``static/rows.js`` decides the same from
``vocabulary.quiet``. Pure: no JupyterHub or Kubernetes import.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from richprogress.model.records import SHOWS

#: reasons of a record saying a machine is being added for the pod (info records only)
SCALE_UP_REASONS: tuple[str, ...] = ("TriggeredScaleUp", "Nominated")
#: reasons of the warnings such a scale-up answers
ANSWERED_REASONS: tuple[str, ...] = ("FailedScheduling",)
#: the step of a FailedScheduling about storage, which a new machine does not answer
_STORAGE_PHASE = "volume"


def own_show(record: Mapping[str, Any]) -> str:
    """The record's own ``show`` (a rule's, ``quiet_reasons``', a hook's): ``row`` when it
    has none or an unknown one (a hook may set anything)."""
    show = record.get("show")
    return show if isinstance(show, str) and show in SHOWS else "row"


def says_scale_up(record: Mapping[str, Any]) -> bool:
    """Whether a record says a machine is being added for the pod."""
    return record.get("reason") in SCALE_UP_REASONS and record.get("severity") in (None, "info")


def scale_up_in_hand(records: Iterable[Mapping[str, Any]]) -> bool:
    """Whether some record of the spawn says a machine is being added."""
    return any(says_scale_up(record) for record in records)


def answered(record: Mapping[str, Any]) -> bool:
    """Whether a scale-up answers this record (a FailedScheduling not about storage)."""
    return record.get("reason") in ANSWERED_REASONS and record.get("phase") != _STORAGE_PHASE


def shown_as(record: Mapping[str, Any], *, scale_up: bool, decisive: bool = False) -> str:
    """How the pages show ``record``: the cause's row always in full; a FailedScheduling
    quiet once a scale-up is in hand (``scale_up``); else the record's own ``show``."""
    show = own_show(record)
    if decisive:
        return "row"
    if show == "row" and scale_up and answered(record):
        return "quiet"
    return show
