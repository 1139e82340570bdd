"""A container's own termination message goes through the one gate for the container's text.

Under ``terminationMessagePolicy: FallbackToLogsOnError`` the message *is* the log's tail,
so it holds whatever the server printed, its API token included. The event every viewer of
the timeline reads must not carry it; the kept form (the log block's, shown by
``show_container_log``) is redacted; the cause it names reaches everyone by its class and
decisive word only.
"""

from __future__ import annotations

import json
from typing import Any

from richprogress.kube.container_log import termination_message_log
from richprogress.kube.pod_status import container_terminations, own_termination_messages
from richprogress.wording.formatter import EventFormatter

TOKEN = "0f3c9a7be2d14f6a8c5b9e1d7a3f2c4b"
TAIL = (
    "[I 2026-12-02 10:00:00.000 SingleUserLabApp] JUPYTERHUB_API_TOKEN=" + TOKEN + "\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/bin/jupyterhub-singleuser", line 6, in <module>\n'
    "    from jupyterhub.singleuser import main\n"
    "ModuleNotFoundError: No module named 'jupyterhub'\n"
)


def crashed_pod(reason: str = "Error", message: str = TAIL, code: int = 1) -> dict[str, Any]:
    terminated = {
        "reason": reason,
        "exitCode": code,
        "message": message,
        "startedAt": "2026-12-02T10:00:00Z",
        "finishedAt": "2026-12-02T10:00:01Z",
    }
    return {
        "metadata": {"uid": "pod-1", "name": "jupyter-alice", "namespace": "jhub"},
        "spec": {"containers": [{"name": "notebook"}]},
        "status": {"containerStatuses": [{
            "name": "notebook", "restartCount": 2,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": terminated},
        }]},
    }  # fmt: skip


def test_the_exit_event_and_its_record_carry_no_line_of_the_container() -> None:
    (event,) = container_terminations(crashed_pod())
    record = EventFormatter().format_event(event)
    everything = json.dumps([event, record])
    assert TOKEN not in everything and "JUPYTERHUB_API_TOKEN" not in everything
    assert "No module named" not in everything
    assert (
        record["message"]
        == "The server's program exited with code 1 right after it started, 2 times"
    )


def test_the_kept_message_is_redacted_and_its_cause_is_a_class_and_a_word() -> None:
    pod = crashed_pod()
    (failed,) = own_termination_messages(pod)
    kept, event = termination_message_log(pod, failed)
    assert kept["source"] == "termination message" and kept["previous"] is True
    assert TOKEN not in json.dumps(kept)
    assert kept["lines"][0].endswith("JUPYTERHUB_API_TOKEN=[redacted]")
    assert kept["lines"][-1] == "ModuleNotFoundError: No module named 'jupyterhub'"
    assert event is not None
    assert event["message"] == "Container notebook log says module-not-found (jupyterhub)"
    record = EventFormatter().format_event(event)
    assert "jupyterhub" in record["message"] and "Traceback" not in json.dumps(record)


def test_a_runtime_error_is_the_runtimes_and_stays_in_the_event_redacted() -> None:
    chain = (
        'failed to create containerd task: OCI runtime create failed: exec: "start.sh": '
        "executable file not found in $PATH: unknown token=" + TOKEN
    )
    pod = crashed_pod(reason="StartError", message=chain, code=128)
    assert own_termination_messages(pod) == []
    (event,) = container_terminations(pod)
    assert TOKEN not in event["message"] and "[redacted]" in event["message"]
    assert (
        EventFormatter().format_event(event)["message"].startswith("The command start.sh is not in")
    )


def test_a_decisive_word_that_looks_like_a_secret_is_redacted() -> None:
    pod = crashed_pod(message=f"/bin/sh: 1: {TOKEN}: not found\n", code=127)
    (failed,) = own_termination_messages(pod)
    _, event = termination_message_log(pod, failed)
    assert event is not None and TOKEN not in event["message"]
