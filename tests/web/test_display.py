"""The detail one click away, and hostile or huge text on display.

What a person sees: the CLI timeline (``--raw``), the "Copy details" report, the failure
page's rows and facts box, and the browser module's ``displayText`` (run under node).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from richprogress.cli import main
from richprogress.model.display import display_line, display_text, format_count
from richprogress.story.report import render_report_text
from richprogress.stream.spawn_facts import spawn_facts
from richprogress.wording.fields import MAX_COUNT
from richprogress.wording.formatter import EventFormatter
from tests.helpers.node import node_json
from tests.helpers.pages import failure_page, image_not_found, timeline
from tests.helpers.paths import REPO

ROW_DETAILS = REPO / "static" / "row-details.js"
NOTEBOOK = "spec.containers{notebook}"
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE


def event(message: str, *, reason: str = "Failed", count: int = 1, uid: str = "e1") -> dict[str, Any]:
    return {
        "kind": "Event",
        "metadata": {"name": f"jupyter-alice.{uid}", "namespace": "jhub", "uid": uid},
        "involvedObject": {"kind": "Pod", "namespace": "jhub", "name": "jupyter-alice", "fieldPath": NOTEBOOK},
        "reason": reason,
        "message": message,
        "source": {"component": "kubelet"},
        "firstTimestamp": "2026-11-29T21:33:30Z",
        "lastTimestamp": "2026-11-29T21:33:40Z",
        "count": count,
        "type": "Warning",
    }


def explain(tmp_path: Path, capsys: Any, events: list[dict[str, Any]], *args: str) -> str:
    path = tmp_path / "events.json"
    path.write_text(json.dumps({"items": events}), encoding="utf-8")
    assert main(["explain", str(path), "--color", "never", *args]) == 0
    return capsys.readouterr().out


# ---- --raw: each event's own message under its sentence -------------------------------------

PULL_FAILED = ('Failed to pull image "quay.io/jupyter/nope:1": rpc error: code = NotFound desc = failed to pull '
               'and unpack image "quay.io/jupyter/nope:1": failed to resolve reference "quay.io/jupyter/nope:1": '
               "quay.io/jupyter/nope:1: not found")


def test_explain_raw_shows_the_kubernetes_message_under_the_sentence(tmp_path: Path, capsys: Any) -> None:
    plain = explain(tmp_path, capsys, [event(PULL_FAILED)])
    raw = explain(tmp_path, capsys, [event(PULL_FAILED)], "--raw")
    assert "rpc error" not in plain
    lines = raw.splitlines()
    sentence = next(i for i, line in enumerate(lines) if "was not found in its registry" in line)
    assert lines[sentence + 1].strip() == "Kubernetes: " + PULL_FAILED


def test_copy_details_report_carries_each_raw_message_and_the_facts() -> None:
    record = EventFormatter().format_event(event(PULL_FAILED))
    report = render_report_text(
        {"records": [record], "outcome": "failed", "facts": [["Namespace", "jhub"], ["Pod", "jupyter-alice"]]},
        user="alice",
        server_name="",
    )
    assert "Kubernetes: " + PULL_FAILED in report
    assert re.search(r"Facts for an admin:\n  Namespace: +jhub\n  Pod: +jupyter-alice", report)


# ---- the facts an admin needs ----------------------------------------------------------------

def test_spawn_facts_from_a_kubespawner_like_spawner() -> None:
    spawner = SimpleNamespace(
        namespace="jhub", pod_name="jupyter-alice", image="quay.io/jupyter/scipy-notebook:2026-11",
        init_containers=[{"name": "block", "image": "busybox:1.36"}],
        user_options={"profile": "gpu"},
        _profile_list=[{"slug": "gpu", "display_name": "GPU server"}],
        cpu_guarantee=0.5, cpu_limit=2.0, mem_guarantee=1024**3, mem_limit=4 * 1024**3,
        extra_resource_guarantees={"nvidia.com/gpu": "1"}, extra_resource_limits={"nvidia.com/gpu": "1"},
        node_selector={"cloud.google.com/gke-nodepool": "gpu-pool"},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        start_timeout=300,
    )
    scheduled = {"reason": "Scheduled", "raw_message": "Successfully assigned jhub/jupyter-alice to gpu-node-7"}
    facts = dict(spawn_facts(spawner, [scheduled]))
    assert facts["Namespace"] == "jhub" and facts["Pod"] == "jupyter-alice" and facts["Node"] == "gpu-node-7"
    assert facts["Images"] == "quay.io/jupyter/scipy-notebook:2026-11, busybox:1.36 (init)"
    assert facts["Profile"] == "gpu (GPU server)"
    assert facts["CPU"] == "request 0.5, limit 2"
    assert facts["Memory"] == "request 1Gi, limit 4Gi"
    assert facts["GPU"] == "nvidia.com/gpu request 1, limit 1"
    assert facts["Node selector"] == "cloud.google.com/gke-nodepool=gpu-pool"
    assert facts["Tolerations"] == "nvidia.com/gpu:NoSchedule"
    assert facts["Start timeout"] == "300 s"
    assert re.match(r"richprogress \S+, JupyterHub \S+", facts["Versions"])


# ---- the failure page: every row can be opened ----------------------------------------------

def test_failure_page_rows_carry_their_kubernetes_detail_closed() -> None:
    records = image_not_found()
    records[2]["raw_message"] = PULL_FAILED
    doc = failure_page("alice", timeline(records))
    rows = doc.by_id("rp-timeline").find_all("div", class_="rp-event")
    # the hub's own "Server requested" row is no Kubernetes event: it has no detail to open
    requested = [row for row in rows if row.attrs.get("data-record-id", "").startswith("message:")]
    assert len(requested) == 1 and not requested[0].find_all("dl")
    rows = [row for row in rows if row not in requested]
    assert rows
    details = [row.find_all("dl") for row in rows]
    assert all(len(found) == 1 for found in details)
    for (found,) in details:
        assert "hidden" in found.attrs  # closed by default: the row stays one line
    decisive = next(row for row in rows if "rp-decisive" in (row.attrs.get("class") or ""))
    pairs = {div.find_all("dt")[0].words(): div.find_all("dd")[0].words()
             for div in decisive.find_all("dl")[0].find_all("div")}
    assert pairs["Kubernetes message"] == PULL_FAILED
    assert (pairs["Reason"], pairs["Count"], pairs["Object"]) == ("Failed", "4", "Pod/jupyter-alice")
    assert pairs["First"] == "2026-11-29 21:33:30 UTC"


# ---- hostile and huge text --------------------------------------------------------------------

def test_bidi_controls_are_escaped_in_the_cli_timeline(tmp_path: Path, capsys: Any) -> None:
    image = f"quay.io/evil/{RLO}gnp.exe:1"
    out = explain(tmp_path, capsys, [event(f'Pulling image "{image}"', reason="Pulling")], "--raw")
    assert RLO not in out
    assert "\\u202e" in out
    # the JSON keeps the name exact
    assert RLO in json.loads(explain(tmp_path, capsys, [event(f'Pulling image "{image}"', reason="Pulling")],
                                     "--json"))["message"]


@pytest.mark.parametrize("char", ["\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
                                  "\u2066", "\u2067", "\u2068", "\u2069", "\x1b", "\x9b", "\x7f"])
def test_every_control_is_shown_escaped(char: str) -> None:
    assert char not in display_line(f"a{char}b")
    assert char not in display_text(f"a{char}b")


def test_a_100_kb_image_name_is_shortened_for_display_and_whole_in_json(tmp_path: Path, capsys: Any) -> None:
    # not a run of hex digits, which redaction takes for a token
    image = "quay.io/" + "x" * 100_000 + ":1"
    pulling = event(f'Pulling image "{image}"', reason="Pulling")
    out = explain(tmp_path, capsys, [pulling], "--raw")
    assert len(out) < 10_000
    assert re.search(r"\.\.\. \(\d{2},\d{3} more characters\)", out)
    record = json.loads(explain(tmp_path, capsys, [pulling], "--json"))
    assert image in record["message"] and record["raw_message"] == pulling["message"]


def test_a_count_of_ten_to_the_400_is_a_sane_number(tmp_path: Path, capsys: Any) -> None:
    huge = event(PULL_FAILED, count=10**400)
    record = EventFormatter().format_event(huge)
    assert record["count"] == MAX_COUNT  # exact in the browser's JSON.parse
    out = explain(tmp_path, capsys, [huge])
    assert "x1,000,000+" in out
    assert format_count(12345) == "12,345"


def test_a_1_mb_failed_scheduling_message_keeps_its_raw_text() -> None:
    message = "0/5 nodes are available: " + ", ".join(f"1 node(s) had untolerated taint {{k{i}: v}}"
                                                      for i in range(30_000))
    huge = event(message[:1_000_000], reason="FailedScheduling")
    record = EventFormatter().format_event(huge)
    assert record["message"] == "No machine can take your server yet"
    assert record["raw_message"] == huge["message"]


# ---- the browser module agrees with Python -------------------------------------------------------

SAMPLES = ["plain", f"a{RLO}b", "tab\tand\nnewline", "\x1b[31mred", "x" * 2500, "\u2066iso\u2069"]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_js_display_text_matches_python() -> None:
    script = (
        f"import {{ displayText, formatCount }} from {json.dumps(ROW_DETAILS.as_uri())};"
        f"console.log(JSON.stringify([{json.dumps(SAMPLES)}.map((s) => displayText(s)),"
        f" [1, 4, 12345, 1e7].map(formatCount)]));"
    )
    texts, counts = node_json(script)
    assert texts == [display_text(s) for s in SAMPLES]
    assert counts == [format_count(n) for n in (1, 4, 12345, 10**7)]


@pytest.mark.parametrize("module", sorted(p.name for p in (REPO / "static").glob("*.js")))
def test_no_static_module_builds_html_from_strings(module: str) -> None:
    code = "\n".join(line for line in (REPO / "static" / module).read_text().splitlines()
                     if not line.lstrip().startswith("//"))
    assert not re.search(r"\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|\beval\(", code)


def test_failure_page_shows_bidi_controls_escaped_in_names_and_rows() -> None:
    records = image_not_found(image=f"quay.io/evil/{RLO}gnp.exe:1")
    doc = failure_page(f"mallory{RLO}", timeline(records), viewer="admin")
    page_text = doc.by_id("richprogress-failed").text()
    assert RLO not in page_text
    assert "mallory\\u202e" in doc.by_id("rp-facts").words()
    # a name no registry could hold stays inside its sentence (not on a line of its own)
    assert "quay.io/evil/\\u202egnp.exe:1" in doc.by_id("rp-summary").words()
