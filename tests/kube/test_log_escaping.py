"""Terminal escapes in event text never reach the hub log raw.

An image name is typed by a user (the demo's "Your own image", a z2jh profile with an
unlisted choice); a hostile one carries an OSC 8 hyperlink and a screen clear. The hub
log gets it escaped as the command line shows it (``\\x1b``), in our own lines and in
JupyterHub's line of the failure (the text of the exception the spawn fails with).
"""

from __future__ import annotations

import logging
import re

from richprogress.stream.live_diagnosis import StoppedEarly
from richprogress.wording.formatter import EventFormatter
from tests.helpers.kubespawner import make_spawner, rich_cluster, spawn

#: a hyperlink (OSC 8), a screen clear (CSI 2J), a C1 CSI and a right-to-left override
ESCAPES = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\\x1b[2J\x9b31m\u202e"
HOSTILE_IMAGE = f"quay.io/x/{ESCAPES}:1"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def raw_records(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if RAW.search(r.getMessage())]


async def test_a_hostile_image_reaches_the_log_escaped(tmp_path, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    async with rich_cluster(tmp_path, 50) as cluster:
        # no scenario: the simulated registry does not hold this image, so its pull fails
        spawner = make_spawner(cluster, "alice", None, image=HOSTILE_IMAGE, start_timeout=20)
        _, error = await spawn(spawner)
    assert isinstance(error, StoppedEarly)
    # JupyterHub logs "Error starting alice's server: {error}"
    assert not RAW.search(str(error)) and "\\x1b]8;;https://evil.example/" in str(error)
    stopping = [r.getMessage() for r in caplog.records if "early:" in r.getMessage()]
    assert stopping and "\\x1b[2J\\x9b31m\\u202e" in stopping[0]
    assert raw_records(caplog) == []


def test_a_failing_hook_logs_the_events_text_escaped(caplog) -> None:
    def hook(spawner, event, record):
        raise RuntimeError("no")

    formatter = EventFormatter(format_hook=hook)
    formatter.format_event({"reason": f"Failed{ESCAPES}", "message": f"Failed to pull image {HOSTILE_IMAGE!s}"})
    logged = [r.getMessage() for r in caplog.records if "format_hook" in r.getMessage()]
    assert logged and "Failed\\x1b]8;;" in logged[0]
    assert raw_records(caplog) == []
