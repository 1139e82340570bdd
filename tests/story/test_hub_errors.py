"""The hub's own verdict joins the story: which of its time limits ran out, and what the
failure page then says, over the hub's and KubeSpawner's real texts.

Tuned: the format strings of the installed JupyterHub (6.1.1, ``jupyterhub/utils.py``
``wait_for_http_server``: the same text in 5.5) and KubeSpawner 7.1.0 (``spawner.py``
``_start``), and our own start-timeout text (``stream.spawn_end``). Held-out
(``data/heldout-exits.json``): texts pasted into public threads, never tuned to; ``pytest -s``
prints the score.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from richprogress.story.causes import TIMEOUT, failure_cause
from richprogress.story.diagnosis import diagnose
from richprogress.story.hints import HINT_SLOW_IMAGE, timeout_sentence
from richprogress.story.hub_errors import HINT_NO_ANSWER, limit_words, read_hub_error
from richprogress.story.verdict import decide
from richprogress.stream.spawn_end import failure_message, no_answer_message
from tests.helpers.paths import DATA

HELDOUT = json.loads((DATA / "heldout-exits.json").read_text(encoding="utf-8"))

# jupyterhub 6.1.1 utils.py: f"Server at {url} didn't respond in {timeout} seconds"
HUB_NO_ANSWER = "Server at http://10.1.2.3:8888/user/x/ didn't respond in 30 seconds"
# kubespawner 7.1.0 spawner.py: f'pod {ref_key} did not start in {self.start_timeout} seconds!'
KUBESPAWNER_TIMEOUT = "pod jhub/jupyter-x did not start in 300 seconds!"


def record(reason: str, message: str, phase: str, severity: str = "info", n: int = 1) -> dict[str, Any]:
    return {
        "id": f"r{n}", "reason": reason, "message": message, "raw_message": message, "phase": phase,
        "severity": severity, "type": "Normal", "count": 1, "rule": None, "hint": None,
        "timestamp": f"2026-12-01T10:00:0{n}Z", "first_timestamp": f"2026-12-01T10:00:0{n}Z",
        "object": {"kind": "Pod", "name": "jupyter-x", "container": "notebook", "field_path": None},
        "component": "kubelet",
    }


STARTED = [
    record("Scheduled", "Assigned to a machine", "scheduled", n=1),
    record("Pulled", "The image was already on the machine", "image", n=2),
    record("Started", "Started the notebook container", "starting", n=3),
]
PULLING = [
    record("Scheduled", "Assigned to a machine", "scheduled", n=1),
    record("Pulling", "Downloading the image quay.io/x/big:1", "image", n=2),
]


def test_the_server_never_answered() -> None:
    found = diagnose(STARTED, f"Spawn failed: {HUB_NO_ANSWER}")
    assert found["summary"] == (
        "The server's container is running, but the notebook server in it never answered the hub on port 8888 "
        "of 10.1.2.3 within 30 s (it may listen on another port or address, or still be loading)."
    )
    assert found["hint"] == HINT_NO_ANSWER and found["record_id"] is None
    assert failure_cause(STARTED, None, HUB_NO_ANSWER) == TIMEOUT
    verdict = decide(STARTED, outcome="failed", failure_message=HUB_NO_ANSWER)
    assert verdict.state == "failed" and verdict.cause is not None
    assert verdict.cause.summary == found["summary"] and verdict.cause.certainty == "reported"


@pytest.mark.parametrize(("message", "limit"), [
    pytest.param(KUBESPAWNER_TIMEOUT, "5 min", id="kubespawner-7.1"),
    pytest.param("Spawn failed: The server did not start within 300 seconds.", "5 min", id="hub-start-timeout"),
    pytest.param("The server did not start within 30 seconds.", "30 s", id="demo-start-timeout"),
    pytest.param("pod jhub/jupyter-x did not start in 90 seconds!", "1 min 30 s", id="odd-limit"),
])
def test_a_start_timeout_says_where_the_spawn_was(message: str, limit: str) -> None:
    found = diagnose(PULLING, message)
    assert found["summary"] == f"The server was still pulling its image when the {limit} start limit ran out."
    assert found["hint"] == HINT_SLOW_IMAGE and "may be faster" in found["hint"]
    assert "did not start" not in found["summary"]


def test_our_own_timeout_text_is_read_back() -> None:
    # what the spawner writes when the hub's start_timeout cancelled start()
    text = failure_message(asyncio.TimeoutError(), 300, 300.5)
    error = read_hub_error(text)
    assert error is not None and (error.kind, error.seconds) == ("start-timeout", 300)


@pytest.mark.parametrize("phase", ["requested", "scheduling", "scaling", "scheduled", "volume", "image",
                                   "starting", "ready", None])
def test_no_timeout_sentence_is_a_tautology(phase: str | None) -> None:
    for limit in ("", "5 min"):
        sentence = timeout_sentence(phase, limit)
        assert "did not start" not in sentence and "while starting" not in sentence
        assert sentence.endswith("ran out.") and (limit in sentence)


def test_limit_words() -> None:
    assert [limit_words(s) for s in (30, 60, 300, 246, 0, None)] == ["30 s", "1 min", "5 min", "4 min 06 s", "", ""]


def test_other_messages_are_no_hub_verdict() -> None:
    for text in (None, "", "Spawn failed: ", "The spawner could not reach the Kubernetes API", "Timeout"):
        assert read_hub_error(text) is None


def test_heldout_hub_errors(capsys: pytest.CaptureFixture[str]) -> None:
    right = 0
    wrong: list[str] = []
    missed: list[str] = []
    for entry in HELDOUT["hub_errors"]:
        error = read_hub_error(entry["message"])
        if error is None:
            missed.append(entry["source"])
        elif (error.kind, error.seconds, error.address) == (entry["kind"], entry["seconds"], entry.get("address", "")):
            right += 1
        else:
            wrong.append(f"{entry['source']}: {error}")
    total = len(HELDOUT["hub_errors"])
    with capsys.disabled():
        print(f"\nheld-out hub errors: {right}/{total} read right, {len(wrong)} wrong, "
              f"{len(missed)} not read ({', '.join(missed)})")
    assert wrong == []


def test_the_spawner_words_the_hub_check_that_got_no_answer_as_the_hub_does() -> None:
    # start() returned, then the hub stopped the server: after its http_timeout, it gave up
    text = no_answer_message("http://10.1.2.3:8888/user/x/", 30, 30.2)
    assert text == HUB_NO_ANSWER
    error = read_hub_error(text)
    assert error is not None and (error.kind, error.seconds, error.address) == ("no-answer", 30, "http://10.1.2.3:8888")
    # stopped well before the limit: a person stopped it, not the check
    assert no_answer_message("http://10.1.2.3:8888/user/x/", 30, 4.0) is None
    assert no_answer_message(None, 30, 31.0) is None
