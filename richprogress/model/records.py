"""The record vocabulary: the EventRecord shape, severities and spawn phases, defined once.

Everything else (formatter, spawner, handlers, the browser code) uses these names; a test
checks that the pages get them from their JSON data (``web/views/vocabulary.py``) and copy none.
"""

from __future__ import annotations

from typing import Literal, TypedDict

SEVERITIES: tuple[str, ...] = ("info", "warning", "error")
Severity = Literal["info", "warning", "error"]

# Ordered steps of a spawn. Each record carries the step it reports on (``phase``); the
# spawner's progress bar never goes below the highest step reached, and never goes back.
# (name, label shown to users, progress percent when the step is reached)
PHASES: tuple[tuple[str, str, int], ...] = (
    ("requested", "Requesting a server", 0),
    ("scheduling", "Finding a machine to run it", 10),
    ("scaling", "Adding a machine to the cluster", 20),
    ("scheduled", "Machine found", 35),
    ("volume", "Preparing storage", 45),
    ("image", "Downloading the software image", 55),
    ("starting", "Starting the server", 80),
    ("ready", "Server ready", 100),
)
PHASE_NAMES: tuple[str, ...] = tuple(name for name, _, _ in PHASES)
PHASE_LABELS: dict[str, str] = {name: label for name, label, _ in PHASES}
PHASE_PROGRESS: dict[str, int] = {name: pct for name, _, pct in PHASES}

#: How a record appears on the pages (its optional ``show`` key; absent means ``row``):
#: ``row`` a timeline row; ``quiet`` a muted one-line row that opens on click; ``hidden`` no
#: row, only in the details ("Copy details", the text and JSON endpoints). The diagnosis and
#: the steps read every record, whatever its ``show``.
SHOWS: tuple[str, ...] = ("row", "quiet", "hidden")


class InvolvedObject(TypedDict):
    kind: str | None
    name: str | None
    container: str | None
    field_path: str | None


class _EventRecordRequired(TypedDict):
    id: str
    timestamp: str | None
    first_timestamp: str | None
    type: str
    severity: str
    reason: str | None
    object: InvolvedObject
    component: str | None
    count: int
    message: str
    raw_message: str
    rule: str | None


class EventRecord(_EventRecordRequired, total=False):
    """One Kubernetes (or custom) event, as data. Never holds HTML.

    The required keys are the record schema (docs/contracts.md). Optional keys are added by the default
    rules (``phase``, ``hint``) and by the spawner (``since_spawn``).
    """

    phase: str | None
    hint: str | None
    since_spawn: float | None
    #: waiting cannot fix the cause (a rule's ``fatal``; only present when true, or when a
    #: ``format_hook`` set it)
    fatal: bool
    #: Kubernetes merged similar events (same source, object, type and reason, more than 10
    #: messages in 10 minutes) into this one; ``raw_message`` is the newest, without the
    #: "(combined from similar events): " prefix (only present when true)
    combined: bool
    #: the spawn got past this warning or error (a later step, or a later success of the
    #: same kind: ``resolved``); only present when true. Set by the spawner, never by rules
    overcome: bool
    #: how the pages show it (one of SHOWS); only present when not "row". Set by a rule's
    #: ``show``, by ``EventFormatter.quiet_reasons`` / ``hidden_reasons`` or by the hook
    show: str
