"""The cause of a failed spawn as a countable word (richprogress.story.causes), as a table."""

from __future__ import annotations

import pytest

from richprogress.story.causes import TIMEOUT, UNKNOWN, failure_cause

RECORDS = [
    {"id": "a", "rule": "image-pulling"},
    {"id": "b", "rule": "image-not-found"},
    {"id": "c", "rule": None},
]


@pytest.mark.parametrize(
    ("record_id", "message", "cause"),
    [
        ("b", "pod jupyter-x did not start in 300 seconds!", "image-not-found"),  # the record wins
        ("c", "", UNKNOWN),  # a decisive record no rule worded
        (None, "The server did not start within 300 seconds.", TIMEOUT),  # the hub's timeout
        (None, "pod jupyter-x did not start in 300 seconds!", TIMEOUT),  # KubeSpawner's
        (None, "The spawn failed (TimeoutError).", TIMEOUT),
        (None, "Spawn failed: quota exceeded", UNKNOWN),
        (None, None, UNKNOWN),
        ("gone", "", UNKNOWN),  # an id that is not among the records
    ],
    ids=["rule", "no-rule", "hub-timeout", "kubespawner-timeout", "timeout-error", "other-error", "nothing", "missing-record"],
)
def test_failure_cause(record_id, message, cause):
    assert failure_cause(RECORDS, record_id, message) == cause
