"""The causes a failed server's own log names (``wording.log_causes``), and how they reach
the verdict as an event about the pod (``kube.container_log.log_cause_event``, the
``log-<kind>`` default rules).

Three corpora of log tails, one format:
- ``tests/data/tuned-logs.json``: the writers' own formats (bash, dash, zsh, sudo, tini, env,
  runc, coreutils, CPython, traitlets, jupyter_server, JupyterHub, uvicorn) the reader was
  written against: all right;
- ``tests/data/heldout-logs.json``: 50 real tails people pasted in public threads, gathered by
  someone who never saw the reader. Measured once as held out, before any change: 42/50
  right, 3 wrong (two denials in a home folder outside /home read as elsewhere, a server on
  127.0.0.1 of a hub on the same host read as unreachable), 5 no cause. Its misses were then
  studied and the reader learnt the structures they showed (any program's "X: command not
  found", tini's whole command line, cp's " : Permission denied", the user-config folders of
  a home, traitlets' "The 'x' trait of", a traceback cut after its header, jupyter_server's
  "no available port"): it is no longer held out (48/50 after);
- ``tests/data/heldout-logs-2.json``: a second set gathered the same way after that study,
  from other threads, never read when changing the reader: the held-out score. Its first
  measurement: 31/37 right, 1 wrong (a start script Python could not find, labelled a
  missing command, read as a Python error), 5 no cause; of the 30 that name a cause, 24.

``pytest -s`` prints each score; the tests hold goals fixed before the second set was
scored (held out: 70% right, at most 10% wrong; studied: 90% right), not today's numbers.

A pasted tail does not say whether the server still ran: an entry whose label is where the
server listens (``localhost-only``, ``wrong-port``), or that names the port the hub waited
on, is read as a server that ran and never answered (the thread's "didn't respond").
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from richprogress.kube.container_log import log_cause_event
from richprogress.story.diagnosis import diagnose
from richprogress.wording.formatter import EventFormatter
from richprogress.wording.log_causes import (
    LOG_CAUSE_KINDS,
    MAY_KINDS,
    LogCause,
    log_cause_sentence,
    read_log_cause,
)
from richprogress.wording.redaction import redact
from tests.helpers.paths import DATA

LISTENING_KINDS = ("localhost-only", "wrong-port")


def corpus(name: str) -> list[dict[str, Any]]:
    logs: list[dict[str, Any]] = json.loads((DATA / name).read_text(encoding="utf-8"))["logs"]
    return logs


def read_entry(entry: dict[str, Any]) -> LogCause | None:
    listening = entry.get("expected_port") is not None or entry["kind"] in LISTENING_KINDS
    return read_log_cause(entry["lines"], listening=listening, expected_port=entry.get("expected_port"))


def score(entries: list[dict[str, Any]]) -> dict[str, Any]:
    right, wrong, missed = [], [], []
    for entry in entries:
        found = read_entry(entry)
        kind = found.kind if found else "none"
        # a wrong port is labelled by the port it listens on; the reader adds the one expected
        subject = found.subject.partition(", expected ")[0] if found and found.subject else None
        if kind == entry["kind"] and (kind == "none" or subject == (entry.get("subject") or None)):
            right.append(entry["id"])
        elif kind == entry["kind"]:
            # the right kind, another token: counted right for the cause, listed for a look
            right.append(entry["id"])
            print(f"  {entry['id']}: subject {subject!r}, labelled {entry.get('subject')!r}")
        elif kind == "none":
            missed.append(f"{entry['id']} ({entry['kind']})")
        else:
            wrong.append(f"{entry['id']} ({entry['kind']} read as {kind})")
    return {"right": right, "wrong": wrong, "missed": missed, "total": len(entries)}


def test_every_tuned_tail_is_read_as_labelled() -> None:
    for entry in corpus("tuned-logs.json"):
        found = read_entry(entry)
        assert (found.kind if found else "none", found.subject if found else None) == (
            entry["kind"], entry.get("subject")), entry["id"]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "right_share", "wrong_share"),
    [
        pytest.param("heldout-logs-2.json", 0.70, 0.10, id="held-out"),
        pytest.param("heldout-logs.json", 0.90, 0.05, id="studied"),
    ],
)
def test_the_real_tails_score(name: str, right_share: float, wrong_share: float) -> None:
    entries = corpus(name)
    result = score(entries)
    total = result["total"]
    causes = [e for e in entries if e["kind"] != "none"]
    print(f"\n{name}: {len(result['right'])}/{total} right, {len(result['wrong'])} wrong, "
          f"{len(result['missed'])} no cause; of the {len(causes)} that name one: "
          f"{sum(1 for e in causes if e['id'] in result['right'])} right")
    print("  wrong:", result["wrong"])
    print("  missed:", result["missed"])
    assert total >= 30
    assert len(result["right"]) >= right_share * total, result
    # saying nothing is honest; naming the wrong cause is not
    assert len(result["wrong"]) <= max(2, wrong_share * total), result["wrong"]


def test_the_corpora_use_only_known_kinds() -> None:
    for name in ("tuned-logs.json", "heldout-logs.json", "heldout-logs-2.json"):
        kinds = {entry["kind"] for entry in corpus(name)}
        assert kinds <= {*LOG_CAUSE_KINDS, "none"}, (name, kinds)


def test_a_server_that_runs_is_not_blamed_on_an_error_it_logged_and_survived() -> None:
    # jupyter_server logs an extension it cannot load and goes on; it never answered because
    # it listens elsewhere, which is the cause to name
    lines = [
        ("[W 2026-11-30 10:00:01.000 ServerApp] jupyterlab_git | error adding extension: ModuleNotFoundError: "
         "No module named 'jupyterlab_git'"),
        "[I 2026-11-30 10:00:01.200 ServerApp] Jupyter Server 2.14.2 is running at:",
        "[I 2026-11-30 10:00:01.200 ServerApp] http://jupyter-alice:18888/user/alice/lab?token=abc123",
    ]
    assert read_log_cause(lines, listening=True, expected_port=8888) == LogCause(
        "wrong-port", "18888, expected 8888",
        "[I 2026-11-30 10:00:01.200 ServerApp] http://jupyter-alice:18888/user/alice/lab")  # fmt: skip
    # and where it listens is nothing to name for a server that stopped
    assert read_log_cause(lines[1:]) is None
    # once it stopped, the module is the cause
    found = read_log_cause(lines)
    assert found is not None and (found.kind, found.subject) == ("module-not-found", "jupyterlab_git")


def test_the_last_cause_in_the_log_wins() -> None:
    lines = ["bash: conda: command not found", "ModuleNotFoundError: No module named 'jupyterhub'"]
    found = read_log_cause(lines)
    assert found is not None and found.kind == "module-not-found"


def test_the_decisive_token_is_bounded_and_plain() -> None:
    hostile = "x" * 5000 + "<script>alert(1)</script>(y)"
    found = read_log_cause([f"ModuleNotFoundError: No module named '{hostile}'"])
    # the module's name stops at what a module name may hold
    assert found is not None and found.subject == "x" * 117 + "..."
    found = read_log_cause([f"PermissionError: [Errno 13] Permission denied: '/home/a/{hostile}'"])
    assert found is not None and found.kind == "home-permission"
    assert found.subject is not None and len(found.subject) <= 120 and "(" not in found.subject
    assert len(found.line) <= 300


def formatted(cause: LogCause) -> dict[str, Any]:
    pod = {"metadata": {"name": "jupyter-alice", "namespace": "jhub", "uid": "pod-1"}}
    event = log_cause_event(pod, "notebook", cause, "2026-11-30T10:00:02Z")
    return EventFormatter().format_event(event)


@pytest.mark.parametrize("entry", corpus("tuned-logs.json"), ids=lambda entry: entry["id"])
def test_each_cause_is_worded_by_its_own_rule(entry: dict[str, Any]) -> None:
    found = read_entry(entry)
    if found is None:
        return  # nothing named: no event is made
    record = formatted(found)
    assert record["rule"] == f"log-{found.kind}"
    # the decisive word reaches every viewer: redacted when it holds a secret
    subject = redact(found.subject) if found.subject else found.subject
    assert record["message"] == log_cause_sentence(found.kind, subject)
    assert record["severity"] == ("warning" if found.kind in MAY_KINDS else "error")
    assert record["phase"] == "starting" and record["hint"]
    assert record["object"] == {"kind": "Pod", "name": "jupyter-alice", "container": "notebook",
                                "field_path": "spec.containers{notebook}"}


def exit_record() -> dict[str, Any]:
    pod = {
        "metadata": {"name": "jupyter-alice", "namespace": "jhub", "uid": "pod-1"},
        "status": {"containerStatuses": [{
            "name": "notebook", "restartCount": 1,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "startedAt": "2026-11-30T10:00:00Z",
                                         "finishedAt": "2026-11-30T10:00:01Z"}},
        }]},
    }  # fmt: skip
    from richprogress.kube.pod_status import container_terminations

    (event,) = container_terminations(pod)
    return EventFormatter().format_event(event)


def test_the_log_s_cause_is_the_failure_s_cause_over_the_exit() -> None:
    cause = read_log_cause(["ModuleNotFoundError: No module named 'jupyterlab_git'"])
    assert cause is not None
    found = diagnose([exit_record(), formatted(cause)], "Spawn failed: ")
    assert found["summary"] == "Python could not find the module jupyterlab_git (ModuleNotFoundError in the server's log)"
    assert "jupyterlab_git" in (found["hint"] or "")


def test_a_cause_the_log_only_may_show_leaves_the_exit_the_cause() -> None:
    cause = read_log_cause(["jupyterhub version 5.5.0 != jupyterhub-singleuser version 1.5.0. This could cause ..."])
    assert cause is not None and cause.kind == "version-mismatch"
    found = diagnose([exit_record(), formatted(cause)], "Spawn failed: ")
    assert found["summary"].startswith("The server's program exited with code 1 right after it started")
