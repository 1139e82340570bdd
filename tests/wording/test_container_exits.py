"""A container's exit, as the failure page words it: from the pod's status (what the kubelet
writes into ``lastState.terminated``) through ``kube.pod_status`` and the default rules to the
sentence, the hint and whether fail-fast may end the spawn.

Tuned cases (the table below): the statuses the wording was written against, the demo's
scenarios among them. Held-out (``data/heldout-exits.json``): real statuses from public threads,
never tuned to; ``pytest -s`` prints their score.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from richprogress.kube.container_log import termination_message_log
from richprogress.kube.pod_status import container_terminations, own_termination_messages
from richprogress.story.diagnosis import diagnose
from richprogress.story.fail_fast import FailFastPolicy, assess
from richprogress.story.verdict import decide
from richprogress.wording.container_exits import exit_sentence, last_words
from richprogress.wording.formatter import EventFormatter
from tests.helpers.paths import DATA

HELDOUT = json.loads((DATA / "heldout-exits.json").read_text(encoding="utf-8"))
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/bin/jupyterhub-singleuser", line 6, in <module>\n'
    "    from jupyterhub.singleuser import main\n"
    "ModuleNotFoundError: No module named 'jupyterhub'\n"
)
# containerd 1.7 + runc 1.1, as `kubectl describe pod` shows a command missing from the image
# (the same shape as github.com/vdesabou/kafka-docker-playground/issues/8515)
START_ERROR = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
    "failed: unable to start container process: error during container init: exec: \"jupyterhub-singleuser\": "
    "executable file not found in $PATH: unknown"
)


def pod(status: dict[str, Any], container: str = "notebook") -> dict[str, Any]:
    return {
        "metadata": {"uid": "pod-1", "name": "jupyter-alice", "namespace": "jhub"},
        "spec": {"containers": [{"name": container}]},
        "status": {"containerStatuses": [{"name": container, **status}]},
    }


def crashed(restarts: int, **terminated: Any) -> dict[str, Any]:
    """A container in CrashLoopBackOff whose last run ended as ``terminated`` says."""
    return {
        "restartCount": restarts,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        "lastState": {"terminated": terminated},
    }


def worded(status: dict[str, Any], container: str = "notebook") -> dict[str, Any]:
    (event,) = container_terminations(pod(status, container))
    return EventFormatter().format_event(event)


def worded_with_its_message(status: dict[str, Any]) -> list[dict[str, Any]]:
    """The exit's record, and the record of the cause its own termination message names
    (what RichKubeSpawner adds through the container text's gate), when it names one."""
    the_pod = pod(status)
    records = [worded(status)]
    for failed in own_termination_messages(the_pod):
        event = termination_message_log(the_pod, failed)[1]
        if event is not None:
            records.append(EventFormatter().format_event(event))
    return records


CASES = [
    pytest.param(
        crashed(5, reason="Error", exitCode=1, startedAt="2026-12-01T10:00:00Z", finishedAt="2026-12-01T10:00:02Z"),
        "The server's program exited with code 1 right after it started, 5 times",
        id="crash-loop-right-after-start",
    ),
    pytest.param(
        crashed(1, reason="Error", exitCode=1, startedAt="2026-12-01T10:00:00Z", finishedAt="2026-12-01T10:04:00Z"),
        "The server's program exited with code 1",
        id="ran-four-minutes-is-not-right-after-start",
    ),
    pytest.param(
        crashed(3, reason="Error", exitCode=1, startedAt="2026-12-01T10:00:00Z", finishedAt="2026-12-01T10:00:01Z",
                message=TRACEBACK),
        # the container's own message is not every viewer's: it goes to the log block's gate
        "The server's program exited with code 1 right after it started, 3 times",
        id="termination-message-stays-out-of-the-row",
    ),
    pytest.param(
        crashed(4, reason="StartError", exitCode=128, startedAt="1970-01-01T00:00:00Z",
                finishedAt="2026-12-01T10:00:02Z", message=START_ERROR),
        "The command jupyterhub-singleuser is not in the server's image, so it could not start (4 tries)",
        id="containerd-start-error-command-missing",
    ),
    pytest.param(
        {"restartCount": 0, "state": {"terminated": {"reason": "Error", "exitCode": 127,
                                                     "startedAt": "2026-12-01T10:00:00Z",
                                                     "finishedAt": "2026-12-01T10:00:00Z"}}},
        "The server's command was not found in its image (exit code 127)",
        id="exit-127-shell-command-not-found",
    ),
    pytest.param(
        {"restartCount": 0, "state": {"terminated": {"reason": "ContainerCannotRun", "exitCode": 126,
                                                     "message": "permission denied"}}},
        "The server's command is in its image but cannot be run (not executable)",
        id="exit-126-not-executable",
    ),
    pytest.param(
        crashed(2, reason="Error", exitCode=2, startedAt="2026-12-01T10:00:00Z", finishedAt="2026-12-01T10:00:03Z"),
        "The program of the sidecar container exited with code 2 right after it started, 2 times",
        id="another-container-is-named",
    ),
]


@pytest.mark.parametrize(("status", "sentence"), CASES)
def test_the_exit_in_words(status: dict[str, Any], sentence: str) -> None:
    container = "sidecar" if "sidecar" in sentence else "notebook"
    record = worded(status, container)
    assert record["message"] == sentence
    assert record["rule"] == "container-terminated" and record["severity"] == "error"
    # no sentence says "did not start" and "while starting" together
    assert not ("did not start" in sentence and "while starting" in sentence)


def test_out_of_memory_stays_out_of_memory() -> None:
    record = worded(crashed(2, reason="OOMKilled", exitCode=137))
    assert "ran out of memory" in record["message"]


def test_start_time_1970_is_no_start() -> None:
    # containerd stamps a container that never ran with the zero time: no "right after"
    record = worded(crashed(1, reason="Error", exitCode=3, startedAt="1970-01-01T00:00:00Z",
                            finishedAt="2026-12-01T10:00:00Z"))
    assert record["message"] == "The server's program exited with code 3"


def test_last_words_cut_long_lines() -> None:
    assert last_words("\n\n  ") == ""
    assert len(last_words("x" * 500)) == 200 and last_words("x" * 500).endswith("...")
    assert exit_sentence("notebook", "Error", None) == "The server's program stopped with an error"


def test_a_command_missing_hint_points_to_the_image() -> None:
    record = worded(crashed(2, reason="StartError", exitCode=128, message=START_ERROR))
    assert "does not have the command" in record["hint"]


# -- fail-fast: a crash loop is hopeless once its exit came back ---------------------------------


def test_one_exit_is_unconfirmed_a_repeat_is_decisive_and_ends_the_spawn() -> None:
    first = worded({"restartCount": 0, "state": {"terminated": {"reason": "Error", "exitCode": 1}}})
    assert first["fatal"] is True and first["count"] == 1
    verdict = decide([first], now=1.0, first_seen={first["id"]: 1.0})
    assert verdict.state == "blocked" and verdict.cause is not None
    assert verdict.cause.certainty == "unconfirmed"
    assert not assess([first], now=1.0, first_seen={first["id"]: 1.0}).stop
    again = worded(crashed(2, reason="Error", exitCode=1))
    assert again["id"] == first["id"] and again["count"] == 2
    verdict = decide([again], now=12.0, first_seen={again["id"]: 1.0})
    assert verdict.state == "hopeless" and verdict.cause is not None and verdict.cause.certainty == "decisive"
    assert assess([again], now=12.0, first_seen={again["id"]: 1.0}).stop
    # with fail-fast off the evidence is still decisive, but nothing stops it
    off = assess([again], now=12.0, first_seen={again["id"]: 1.0}, policy=FailFastPolicy(enabled=False))
    assert off.held and not off.stop


def test_the_exit_is_the_cause_not_the_back_off_after_it() -> None:
    exit_record = worded(crashed(3, reason="Error", exitCode=1, startedAt="2026-12-01T10:00:00Z",
                                 finishedAt="2026-12-01T10:00:01Z"))
    backoff = EventFormatter().format_event({
        "metadata": {"uid": "e-backoff", "name": "e", "namespace": "jhub"},
        "involvedObject": {"kind": "Pod", "name": "jupyter-alice", "namespace": "jhub",
                           "fieldPath": "spec.containers{notebook}"},
        "reason": "BackOff", "type": "Warning", "count": 4, "source": {"component": "kubelet"},
        "message": "Back-off restarting failed container notebook in pod jupyter-alice_jhub(pod-1)",
        "firstTimestamp": "2026-12-01T10:00:05Z", "lastTimestamp": "2026-12-01T10:00:40Z",
    })
    found = diagnose([exit_record, backoff], "")
    assert found["record_id"] == exit_record["id"]
    assert found["summary"] == "The server's program exited with code 1 right after it started, 3 times"


# -- held out: real statuses never tuned to ------------------------------------------------------


def test_heldout_exits(capsys: pytest.CaptureFixture[str]) -> None:
    right = 0
    wrong: list[str] = []
    for entry in HELDOUT["exits"]:
        status = {"restartCount": entry["restartCount"], "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                  "lastState": {"terminated": entry["terminated"]}}
        sentence = " / ".join(record["message"] for record in worded_with_its_message(status))
        said = all(word in sentence for word in entry["says"])
        claimed = [word for word in entry["never"] if word in sentence]
        if claimed:
            wrong.append(f"{entry['source']}: {sentence}")
        elif said:
            right += 1
    total = len(HELDOUT["exits"])
    with capsys.disabled():
        print(f"\nheld-out exits: {right}/{total} worded with their cause, {len(wrong)} claiming more than the status")
    # no sentence may claim what the status does not show
    assert wrong == []
    assert right >= total - 1
