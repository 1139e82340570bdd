"""``richprogress explain`` end to end, as an admin runs it: a subprocess reading the real
events of kubespawner #910's peer data (copied into tests/data/kubespawner-pr910/)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from richprogress import __version__
from richprogress.demo.cluster.scenarios import builtin_scenarios
from tests.helpers.cli import explain
from tests.helpers.paths import DATA
from tests.helpers.scenario_events import Namespace

PEER = DATA / "kubespawner-pr910"
INVALID_IMAGE = PEER / "invalid-pod-image.events.json"
SCENARIOS = sorted(p.name.removesuffix(".events.json") for p in PEER.glob("*.events.json"))

needs_peer = pytest.mark.skipif(not INVALID_IMAGE.exists(), reason=f"peer data not found at {PEER}")

REQUIRED_KEYS = {
    "id",
    "timestamp",
    "first_timestamp",
    "type",
    "severity",
    "reason",
    "object",
    "component",
    "count",
    "message",
    "raw_message",
    "rule",
}


def explain_bytes(*args: str | Path, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "richprogress.cli", "explain", *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=60,
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def peer_events(name: str = "invalid-pod-image") -> list[dict[str, Any]]:
    return json.loads((PEER / f"{name}.events.json").read_text())


# -- --json ------------------------------------------------------------------------------


@needs_peer
def test_json_invalid_pod_image_names_image_and_container() -> None:
    result = explain("--json", INVALID_IMAGE)
    assert result.returncode == 0, result.stderr
    records = json_lines(result.stdout)
    events = peer_events()
    assert len(records) == 11
    # input order, one record per event
    assert [r["id"] for r in records] == [e["metadata"]["uid"] for e in events]
    assert all(REQUIRED_KEYS <= r.keys() for r in records)
    failing = [r for r in records if "ghcr.io/foo:bat" in r["raw_message"]]
    assert [r["reason"] for r in failing] == ["Pulling", "Failed", "BackOff"]
    for record in failing:
        assert "ghcr.io/foo:bat" in record["message"]
    for record in records[6:]:  # the failing pod's events all concern the notebook container
        assert record["object"]["container"] == "notebook"
        assert "notebook" in record["message"]
    assert {r["severity"] for r in records[6:]} >= {"error"}


INPUT_FORMS = {
    "json-array": lambda events: json.dumps(events),
    "kubectl-list": lambda events: json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": events, "metadata": {"resourceVersion": ""}},
        indent=4,
    ),
    "json-lines": lambda events: "\n".join(json.dumps(e) for e in events) + "\n",
    "json-lines-crlf-blank-lines": lambda events: "\r\n\r\n".join(json.dumps(e) for e in events),
}


@needs_peer
@pytest.mark.parametrize("form", list(INPUT_FORMS))
@pytest.mark.parametrize("source", ["stdin-dash", "stdin-no-argument", "file"])
def test_input_forms_give_the_same_records(form: str, source: str, tmp_path: Path) -> None:
    expected = explain("--json", INVALID_IMAGE).stdout
    text = INPUT_FORMS[form](peer_events())
    if source == "file":
        path = tmp_path / "events.json"
        path.write_text(text)
        result = explain(path, "--json")
    elif source == "stdin-dash":
        result = explain("-", "--json", stdin=text.encode())
    else:
        result = explain("--json", stdin=text.encode())
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected


@needs_peer
def test_a_single_event_object_is_accepted() -> None:
    event = peer_events()[7]
    result = explain("--json", stdin=json.dumps(event).encode())
    assert result.returncode == 0, result.stderr
    [record] = json_lines(result.stdout)
    assert record["id"] == event["metadata"]["uid"]


# -- --rules -----------------------------------------------------------------------------


@needs_peer
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_rules_910_reproduce_peer_messages(scenario: str) -> None:
    result = explain(
        "--json", "--rules", PEER / "default-rules.json", PEER / f"{scenario}.events.json"
    )
    assert result.returncode == 0, result.stderr
    expected = json.loads((PEER / f"{scenario}.messages.json").read_text())
    assert [r["message"] for r in json_lines(result.stdout)] == expected


@needs_peer
def test_rules_as_dict_replace_defaults(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"a": {"match": {"reason": "Pulling"}, "template": "Fetching!"}}))
    records = json_lines(explain("--json", "--rules", rules, INVALID_IMAGE).stdout)
    assert [r["message"] for r in records if r["reason"] == "Pulling"] == ["Fetching!"]
    # everything else is left raw: the defaults are replaced, not extended
    others = [r for r in records if r["reason"] != "Pulling"]
    assert all(r["message"] == r["raw_message"] for r in others)


# -- --diagnose --------------------------------------------------------------------------

PULL_FAILURE_UID = "3ad4568c-f954-4f97-9b6c-c69c8f7d17fd"


@needs_peer
@pytest.mark.parametrize(
    ("scenario", "summary_has", "phase", "record_id"),
    [
        pytest.param(
            "invalid-pod-image",
            "ghcr.io/foo:bat",
            "image",
            PULL_FAILURE_UID,
            id="image-not-found-names-image",
        ),
        pytest.param(
            "aws-out-of-memory",
            "memory",
            "scheduling",
            "16d1dac6-2432-47fc-9f5c-9749e9aaa0df",
            id="node-out-of-memory",
        ),
        pytest.param(
            "aws-node-selector-not-solveable",
            "machine",
            "scheduling",
            "9163ab9f-b9f6-4951-bc45-20ed9d23110c",
            id="node-selector",
        ),
        pytest.param(
            "gcp-pod-requires-scale-up",
            "The server was still pulling its image when the start time limit ran out",
            "image",
            None,
            id="cut-off-while-pulling-scheduling-warnings-overcome",
        ),
    ],
)
def test_diagnose(scenario: str, summary_has: str, phase: str, record_id: str | None) -> None:
    result = explain("--diagnose", PEER / f"{scenario}.events.json")
    assert result.returncode == 0, result.stderr
    [diagnosis] = json_lines(result.stdout)
    assert set(diagnosis) == {"summary", "hint", "phase", "record_id", "pod"}
    assert diagnosis["pod"] == "jupyter-agoose77"  # the one pod of the input
    assert summary_has in diagnosis["summary"]
    assert diagnosis["hint"]
    assert diagnosis["phase"] == phase
    assert diagnosis["record_id"] == record_id


# -- readable timeline -------------------------------------------------------------------


@needs_peer
def test_timeline_is_sorted_and_ends_with_the_diagnosis() -> None:
    result = explain(INVALID_IMAGE)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    rows, ending = lines[:-3], lines[-3:]
    # the failed pull's follow-ups (ErrImagePull, the back-off) fold into one line after it
    assert len(rows) == 9 and rows[8].startswith("  ... 3 follow-ups of the failed download above")
    times = [row.split()[0] for row in rows[:8]]
    assert times == sorted(times) and times[0] == "13:19:31"
    assert rows[7].split()[1:4] == ["Warning", "Failed", "Pod/jupyter-agoose77[notebook]"]
    assert "ghcr.io/foo:bat" in rows[7] and rows[7].endswith("x2")
    assert ending[0] == ""
    diagnosis = json_lines(explain("--diagnose", INVALID_IMAGE).stdout)[0]
    assert ending[1] == f"What went wrong: {diagnosis['summary']}"
    assert ending[2] == f"What you can do: {diagnosis['hint']}"
    assert "\x1b[" not in result.stdout  # NO_COLOR and not a terminal


def test_events_of_one_second_read_in_the_order_they_were_written() -> None:
    # kubectl lists by name (random for events); the kubelet stamps whole seconds, so
    # within one second only the API server's write order (resourceVersion) tells
    def event(name: str, version: str, reason: str, message: str) -> dict[str, Any]:
        return {
            "metadata": {"name": f"jupyter-x.{name}", "namespace": "ns", "uid": name, "resourceVersion": version},
            "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "jupyter-x"},
            "reason": reason, "message": message, "type": "Normal", "source": {"component": "kubelet"},
            "firstTimestamp": "2026-11-29T22:00:11Z", "lastTimestamp": "2026-11-29T22:00:11Z", "count": 1,
        }

    listed = [  # by name, as kubectl gives them
        event("a", "12", "Started", "Started container notebook"),
        event("b", "11", "Created", "Created container notebook"),
        event("c", "10", "Pulled", 'Successfully pulled image "quay.io/jupyter/base-notebook:latest"'),
        event("d", "9", "Pulling", 'Pulling image "quay.io/jupyter/base-notebook:latest"'),
    ]
    result = explain(stdin=json.dumps({"kind": "List", "items": listed}).encode())
    assert result.returncode == 0, result.stderr
    reasons = [line.split()[2] for line in result.stdout.splitlines() if line.strip()]
    assert reasons == ["Pulling", "Pulled", "Created", "Started"], result.stdout
    # --json keeps the input's order, one record per event as given
    assert [r["reason"] for r in json_lines(explain("--json", stdin=json.dumps(listed).encode()).stdout)] == [
        "Started", "Created", "Pulled", "Pulling"]


@needs_peer
def test_timeline_of_a_spawn_that_recovered_has_no_diagnosis() -> None:
    result = explain(PEER / "aws-pod-requires-scale-up.events.json")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 11
    assert "What went wrong" not in result.stdout


@needs_peer
def test_color_always_colors_the_error_rows() -> None:
    assert "\x1b[31m" in explain("--color", "always", INVALID_IMAGE).stdout


# -- bad input ---------------------------------------------------------------------------

BAD_INPUTS = [
    pytest.param([], b"", "empty", id="empty-input"),
    pytest.param([], b"  \n\t\n", "empty", id="whitespace-only"),
    pytest.param([], b"{not json", "not JSON", id="not-json"),
    pytest.param([], b"42", "a number", id="json-number"),
    pytest.param([], b'"events"', "a string", id="json-string"),
    pytest.param([], b"null", "null", id="json-null"),
    pytest.param([], b'{"kind": "Pod"}', 'without "items"', id="object-without-items"),
    pytest.param([], b'{"items": {"a": 1}}', '"items" is an object', id="items-not-array"),
    pytest.param([], b'[{"reason": "Pulling"}, 7]', "item 2 is a number", id="item-not-object"),
    pytest.param([], b"[]", "no events", id="empty-array"),
    pytest.param([], b'{"kind": "List", "items": []}', "no events", id="empty-kubectl-list"),
    pytest.param([], b'{"reason": "A"}\n{"reason": \n', "line 2 is not JSON", id="bad-json-line"),
    pytest.param([], b'{"reason": "A"}\n\n[1]\n', "line 3 is an array", id="json-line-not-object"),
    pytest.param([], b'["\xff\xfe"]', "not UTF-8", id="not-utf8"),
    pytest.param([], b"[" * 100_000 + b"]" * 100_000, "nested too deeply", id="nested-too-deeply"),
    pytest.param(
        [], b'{"reason": "A"}\n' + b"[" * 100_000 + b"\n", "nested too deeply", id="json-line-too-deep"
    ),
    pytest.param(["/nonexistent/events.json"], None, "no such file", id="missing-file"),
    pytest.param(["/"], None, "is a directory", id="directory"),
    pytest.param(["--rules", "/nonexistent/rules.json"], b"[]", "no such file", id="rules-missing"),
    pytest.param(["--rules", "{tmp}/bad.json"], b"[]", "not JSON", id="rules-not-json"),
    pytest.param(["--rules", "{tmp}/number.json"], b"[]", "a number", id="rules-not-list"),
    pytest.param(["--rules", "{tmp}/deep.json"], b"[]", "nested too deeply", id="rules-nested-too-deeply"),
    pytest.param(
        ["--rules", "{tmp}/bad-regex.json"], None, "slow-pull", id="rules-bad-regex-named"
    ),
    pytest.param(
        ["--rules", "{tmp}/bad-field.json"], None, "colour", id="rules-unknown-field-named"
    ),
    pytest.param(
        ["--rules", "{tmp}/bad-group.json"], None, "--rules[0]", id="rules-template-group-named"
    ),
]

RULE_FILES = {
    "bad.json": "[{",
    "number.json": "3",
    "deep.json": "[" * 100_000 + "]" * 100_000,
    "bad-regex.json": json.dumps(
        [{"id": "slow-pull", "match": {"reason": "Pull(ing"}, "template": "x"}]
    ),
    "bad-field.json": json.dumps([{"match": {"colour": "red"}, "template": "x"}]),
    "bad-group.json": json.dumps([{"match": {"reason": "Scheduled"}, "template": "On {node}"}]),
}


@pytest.mark.parametrize(("args", "stdin", "says"), BAD_INPUTS)
def test_bad_input_one_line_exit_2(
    args: list[str], stdin: bytes | None, says: str, tmp_path: Path
) -> None:
    for name, text in RULE_FILES.items():
        (tmp_path / name).write_text(text)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if stdin is None and "--rules" in args:
        stdin = b'[{"reason": "Scheduled", "message": "hi"}]'
    result = explain_bytes(*args, stdin=stdin if stdin is not None else b"")
    stderr = result.stderr.decode()
    assert result.returncode == 2
    assert result.stdout == b""
    assert "Traceback" not in stderr
    assert stderr.count("\n") == 1 and stderr.endswith("\n")
    assert stderr.startswith("richprogress explain: ")
    assert says in stderr


def test_json_and_diagnose_exclude_each_other() -> None:
    result = explain("--json", "--diagnose", stdin=b"[]")
    assert result.returncode == 2
    assert "not allowed with" in result.stderr and "Traceback" not in result.stderr


# -- the command itself ------------------------------------------------------------------


def test_version() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "richprogress.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert result.stdout.strip() == f"richprogress {__version__}"


def test_help_explains_the_options() -> None:
    result = explain("--help")
    assert result.returncode == 0
    for option in ("FILE", "--json", "--diagnose", "--rules", "kubectl get events -o json", "--pod NAME"):
        assert option in result.stdout
    text = " ".join(result.stdout.split())
    # what it does with a namespace's events, and what --pod keeps
    assert "Events of several pods" in text and "one section per pod, the pods with a problem first" in text
    assert "claim-X for jupyter-X" in text and "objects that go with no pod of the input" in text
    assert '"pod"' in text and "the events of several pods need --pod" in text


def test_no_command_shows_usage_and_fails() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "richprogress.cli"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "explain" in result.stderr


@needs_peer
def test_cli_imports_no_hub_or_kubernetes_code() -> None:
    probe = (
        "import sys, io, contextlib\n"
        "from richprogress.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    for mode in ([], ['--json'], ['--diagnose']): assert main(['explain', {str(INVALID_IMAGE)!r}, *mode]) == 0\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('jupyterhub', 'kubespawner', 'kubernetes_asyncio', 'tornado', 'aiohttp'))\n"
        "print(bad)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "richprogress"
    if not script.exists():
        pytest.skip("console script not on this interpreter's bin/ (not installed)")
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == f"richprogress {__version__}"


def test_no_input_on_a_terminal_says_so_instead_of_waiting() -> None:
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "richprogress.cli", "explain"],
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert result.returncode == 2
    assert result.stderr.startswith("richprogress explain: no input")
    assert result.stderr.count("\n") == 1


# Event text is written by whoever controls the pod spec (e.g. a typed image name, which
# kubelet quotes in InspectFailed): it must not drive the admin's terminal.
TERMINAL_ESCAPES = [
    pytest.param("\x1b]0;owned\x07", id="osc-window-title"),
    pytest.param("\x1b[2J\x1b[H", id="csi-clear-screen"),
    pytest.param("\x9b31m", id="c1-csi"),
    pytest.param("\x08\x08\x08ok", id="backspaces"),
]


@pytest.mark.parametrize("escape", TERMINAL_ESCAPES)
def test_timeline_shows_control_characters_instead_of_sending_them(escape: str) -> None:
    event = {
        "kind": "Event",
        "type": "Warning",
        "reason": "InspectFailed",
        "involvedObject": {"kind": "Pod", "name": "jupyter-x" + escape},
        "message": f'Failed to apply default image tag "evil{escape}": invalid reference format',
        "lastTimestamp": "2026-11-29T21:33:30Z",
    }
    result = explain("--color", "never", stdin=json.dumps(event).encode())
    assert result.returncode == 0, result.stderr
    assert "is not a valid image name" in result.stdout
    assert not any(ch in result.stdout for ch in escape if not ch.isprintable())
    assert "\\x" in result.stdout  # shown, escaped, so the admin sees something was there


@pytest.mark.parametrize("escape", TERMINAL_ESCAPES)
def test_pod_names_in_sections_and_errors_show_control_characters_escaped(escape: str) -> None:
    def event(pod: str, reason: str, message: str) -> dict[str, Any]:
        return {"kind": "Event", "type": "Warning", "reason": reason, "message": message,
                "involvedObject": {"kind": "Pod", "name": pod}, "lastTimestamp": "2026-11-29T21:33:30Z"}

    events = [event("jupyter-a" + escape, "Failed", 'Failed to pull image "x:1": not found'),
              event("jupyter-b" + escape, "BackOff", "Back-off restarting failed container notebook")]
    for args in ([], ["--diagnose"], ["--pod", "nobody" + escape]):
        result = explain("--color", "never", *args, stdin=json.dumps(events).encode())
        shown = result.stdout + result.stderr
        assert "jupyter-a" in shown and "jupyter-b" in shown, args
        assert not any(ch in shown for ch in escape if not ch.isprintable()), args
        assert "\\x" in shown, args


# An admin's terminal or file may not be UTF-8 (Windows redirects in cp1252, an old
# ISO-8859-1 locale): names and messages outside it must not end in a traceback.
NON_ASCII_EVENT = {
    "kind": "Event",
    "type": "Warning",
    "reason": "Failed",
    "message": 'Failed to pull image "quay.io/x/\u65e5\u672c:1": not found',
    "involvedObject": {"kind": "Pod", "name": "jupyter-zo\u00eb"},
}


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("mode", [[], ["--json"], ["--diagnose"]], ids=["timeline", "json", "diagnose"])
def test_output_in_a_non_utf8_encoding(encoding: str, mode: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "richprogress.cli", "explain", *mode],
        input=json.dumps(NON_ASCII_EVENT).encode(),
        capture_output=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "PYTHONIOENCODING": encoding},
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    text = result.stdout.decode(encoding)
    if mode:
        # still JSON, and it reads back to the same names
        assert "\u65e5\u672c" in json.loads(text.splitlines()[0])["summary" if mode == ["--diagnose"] else "raw_message"]
    else:
        assert "jupyter-zo" in text and "quay.io/x/" in text


def test_utf16_file_from_windows_powershell_is_read(tmp_path: Path) -> None:
    # Windows PowerShell 5.1's `kubectl get events -o json > events.json` writes UTF-16 LE
    # with a byte order mark.
    path = tmp_path / "events.json"
    path.write_bytes(json.dumps({"kind": "List", "items": [NON_ASCII_EVENT]}).encode("utf-16"))
    result = explain("--json", path)
    assert result.returncode == 0, result.stderr
    assert json_lines(result.stdout)[0]["object"]["name"] == "jupyter-zo\u00eb"


@pytest.mark.parametrize("mode", ["--json", "--diagnose"])
def test_json_output_escapes_c1_controls(mode: str) -> None:
    # JSON escapes C0 controls itself; C1 (here CSI, U+009B) would reach the terminal raw.
    event = dict(NON_ASCII_EVENT, message='Failed to pull image "evil\x9b2J": not found')
    result = explain(mode, stdin=json.dumps(event).encode())
    assert result.returncode == 0, result.stderr
    assert "\x9b" not in result.stdout
    assert "\\u009b" in result.stdout
    parsed = json.loads(result.stdout.splitlines()[0])  # still JSON, text kept exact
    if mode == "--json":
        assert parsed["raw_message"] == event["message"]


# -- the events of several pods (a namespace's, without a field selector) ----------------

#: (scenario, pod, start in seconds, options): a namespace where servers start together,
#: each with its own image so that a diagnosis naming the wrong pod's image shows
NAMESPACE_PLAYS: list[tuple[str, str, float, dict[str, Any]]] = [
    ("happy-path", "jupyter-alice", 0.0, {}),
    ("image-not-found", "jupyter-bob", 1.4, {"image": "quay.io/jupyter/scipy-notebook:2099-bob"}),
    ("scale-up", "jupyter-carol", 2.1, {"until": 200}),
    ("volume-provisioning", "jupyter-dave", 2.7, {}),
    ("operator-error", "jupyter-erin", 3.2, {"until": 40}),  # no pod: the operator could not make it
    ("out-of-memory", "jupyter-frank", 3.9, {}),
    ("no-node-fits", "jupyter-grace", 4.4, {"until": 60}),
    ("flaky-pull", "jupyter-heidi", 5.0, {}),
    ("custom-image", "jupyter-ivan", 5.5, {"image": "ghcr.io/ivan/my-image:latest"}),
    ("operator", "jupyter-judy", 6.1, {}),
    ("happy-path", "jupyter-mallory", 6.6, {}),
]
POD_NAMES = [pod for scenario, pod, _, _ in NAMESPACE_PLAYS if scenario != "operator-error"]
#: the scenarios that never reach a running server, i.e. the pods with a problem
TROUBLED = [pod for scenario, pod, _, _ in NAMESPACE_PLAYS
            if builtin_scenarios()[scenario].outcome == "never-ready" and pod in POD_NAMES]


def namespace() -> Namespace:
    ns = Namespace()
    for scenario, pod, after, options in NAMESPACE_PLAYS:
        ns.play(scenario, pod, after=after, **options)
    # an event of no server: the hub's own Deployment
    ns.other("Deployment", "hub", "ScalingReplicaSet", "Scaled up replica set hub-7d9f8c6b5 from 0 to 1",
             "deployment-controller", at=2.5)
    return ns


def namespace_dump(ns: Namespace | None = None) -> bytes:
    return json.dumps((ns or namespace()).kubectl_list()).encode()


def sections(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """The lines before the first section, and each section's lines by its title."""
    head, *parts = re.split(r"^== (.+) ==$", text, flags=re.M)
    found = {}
    for title, body in zip(parts[::2], parts[1::2], strict=True):
        found[title] = body.strip("\n").splitlines()
    return head.strip("\n").splitlines(), found


def rows(lines: list[str]) -> list[tuple[str, str]]:
    """(reason, object) of each timeline row."""
    return [(line.split()[2], line.split()[3]) for line in lines if re.match(r"\d\d:\d\d:\d\d ", line)]


def owned(ns: Namespace, pod: str, *others: str) -> list[tuple[str, str]]:
    """(reason, object) of a pod's events, its claim's and those of the ``others``, in
    the order they first happened: the order the spawn page shows them in."""
    names = (pod, "claim-" + pod.removeprefix("jupyter-"), *others)
    events = [e for e in ns.events if e["involvedObject"]["name"] in names]
    return [
        (e["reason"], f"{e['involvedObject']['kind']}/{e['involvedObject']['name']}"
         + (f"[{e['involvedObject']['fieldPath'][16:-1]}]" if "fieldPath" in e["involvedObject"] else ""))
        for e in events
    ]


def shown_as_on_the_page(shown: list[tuple[str, str]], events: list[tuple[str, str]]) -> bool:
    """Whether the rows shown are the events in their order, but for a failed pull's
    follow-ups, which fold into one line after it (ErrImagePull, ImagePullBackOff and
    Back-off rows: reasons Failed and BackOff), as on the failure page."""
    rest = iter(events)
    for row in shown:
        for event in rest:
            if event == row:
                break
            if event[0] not in ("Failed", "BackOff"):
                return False
        else:
            return False
    return all(event[0] in ("Failed", "BackOff") for event in rest)


def test_a_namespaces_events_say_what_they_mix_and_each_pod_gets_its_own_diagnosis() -> None:
    ns = namespace()
    listed = ns.kubectl_list()["items"]
    result = explain(stdin=namespace_dump(ns))
    assert result.returncode == 0, result.stderr
    head, found = sections(result.stdout)
    objects = {(e["involvedObject"]["kind"], e["involvedObject"]["name"]) for e in listed}
    assert len(objects) == 14 and sum(kind == "Pod" for kind, _ in objects) == len(POD_NAMES) == 10
    assert head[0] == ("The input mixes the events of 14 objects: 10 pods, 1 Deployment, "
                       "2 JupyterServers and 1 PersistentVolumeClaim.")
    assert "--pod NAME" in head[1]
    assert head[2] == "A problem in 4 pods of 10: jupyter-bob, jupyter-frank, jupyter-grace and jupyter-ivan."
    titles = list(found)
    # the pods with a problem first, each pod once, then the objects of no pod
    assert [t.split(" (")[0] for t in titles[: len(TROUBLED)]] == [f"Pod {pod}" for pod in TROUBLED]
    assert sorted(t.split(" (")[0] for t in titles[:-1]) == sorted(f"Pod {pod}" for pod in POD_NAMES)
    assert titles[-1] == "Objects of no pod: Deployment/hub, JupyterServer/jupyter-erin (3 events, a problem)"
    for pod in POD_NAMES:
        [(title, lines)] = [(t, ls) for t, ls in found.items() if t.startswith(f"Pod {pod} (")]
        assert title.endswith(", a problem)") == (pod in TROUBLED)
        # only this pod's rows (and its claim's), none of another pod
        assert shown_as_on_the_page(rows(lines), owned(ns, pod)), pod
        ending = [line for line in lines if line.startswith("What went wrong: ")]
        if pod not in TROUBLED:
            assert ending == [], pod
            continue
        diagnosis = json_lines(explain("--diagnose", "--pod", pod, stdin=namespace_dump(ns)).stdout)[0]
        assert ending == [f"What went wrong: {diagnosis['summary']}"], pod
    bob = next(ls for t, ls in found.items() if t.startswith("Pod jupyter-bob "))
    assert "What went wrong: The image quay.io/jupyter/scipy-notebook:2099-bob" in "\n".join(bob)
    ivan = next(ls for t, ls in found.items() if t.startswith("Pod jupyter-ivan "))
    assert "ghcr.io/ivan/my-image:latest" in [ln for ln in ivan if ln.startswith("What went wrong")][0]
    # the operator's hint was written for the page: here it is this output that is sent
    assert "this page" not in result.stdout
    assert found[titles[-1]][-1].endswith("when an administrator raises the quota.")


def test_diagnose_of_several_pods_asks_for_one_and_lists_them() -> None:
    result = explain("--diagnose", stdin=namespace_dump())
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("richprogress explain: the input mixes the events of 10 pods")
    assert "add --pod NAME" in result.stderr
    others = [pod for pod in POD_NAMES if pod not in TROUBLED]
    assert f"with a problem: {', '.join(TROUBLED)}; others: {', '.join(others)}" in result.stderr


@pytest.mark.parametrize("pod", POD_NAMES)
def test_diagnose_of_one_pod_names_it_and_a_cause_of_its_own(pod: str) -> None:
    ns = namespace()
    result = explain("--diagnose", "--pod", pod, stdin=namespace_dump(ns))
    assert result.returncode == 0, result.stderr
    [diagnosis] = json_lines(result.stdout)
    assert diagnosis["pod"] == pod
    claim = "claim-" + pod.removeprefix("jupyter-")
    mine = {e["metadata"]["uid"] for e in ns.events if e["involvedObject"]["name"] in (pod, claim)}
    if pod in TROUBLED:
        assert diagnosis["record_id"] in mine
    assert "this page" not in (diagnosis["hint"] or "")


def test_pod_keeps_its_claim_and_objects_of_no_pod_but_not_another_servers() -> None:
    ns = namespace()
    result = explain("--json", "--pod", "jupyter-dave", stdin=namespace_dump(ns))
    assert result.returncode == 0, result.stderr
    ids = {record["id"] for record in json_lines(result.stdout)}
    names = {"jupyter-dave", "claim-dave", "hub"}  # not JupyterServer/jupyter-erin: another server's
    assert ids == {e["metadata"]["uid"] for e in ns.events if e["involvedObject"]["name"] in names}
    text = explain("--pod", "jupyter-dave", stdin=namespace_dump(ns)).stdout
    assert text.splitlines()[0] == (
        "Pod jupyter-dave: 11 of the input's 69 events, with those of PersistentVolumeClaim/claim-dave, "
        "and of objects of no pod that may be its: Deployment/hub."
    )
    assert shown_as_on_the_page(rows(text.splitlines()), owned(ns, "jupyter-dave", "hub"))
    assert "What went wrong" not in text


def test_pod_names_an_operators_resource_whose_pod_was_never_made() -> None:
    result = explain("--diagnose", "--pod", "jupyter-erin", stdin=namespace_dump())
    assert result.returncode == 0, result.stderr
    [diagnosis] = json_lines(result.stdout)
    assert diagnosis["pod"] == "jupyter-erin"
    assert diagnosis["summary"].startswith("The namespace's memory quota (user-quota) is full")
    assert "28 GiB of 32 GiB used" in diagnosis["summary"]
    assert diagnosis["hint"].endswith("when an administrator raises the quota.")
    # the same events alone (a field selector on the name): no pod, so "pod" is null
    alone = explain("--diagnose", stdin=json.dumps(namespace().of("jupyter-erin")).encode())
    assert json_lines(alone.stdout)[0] == {**diagnosis, "pod": None}


def test_pod_that_is_not_in_the_input_lists_the_pods() -> None:
    result = explain("--pod", "jupyter-zoe", stdin=namespace_dump())
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "richprogress explain: --pod jupyter-zoe: no events of that pod; the input's pods: "
        + ", ".join(POD_NAMES) + "\n"
    )


def test_pods_of_one_name_in_two_namespaces_need_the_namespace() -> None:
    # `kubectl get events -A`: the same user's server in two hubs' namespaces
    staging, prod = Namespace(name="staging"), Namespace(name="prod", version=91_000)
    staging.play("image-not-found", "jupyter-alice", image="quay.io/x/staging:1")
    prod.play("happy-path", "jupyter-alice", after=3)
    both = json.dumps(staging.kubectl_list()["items"] + prod.kubectl_list()["items"]).encode()
    result = explain("--pod", "jupyter-alice", stdin=both)
    assert result.returncode == 2
    assert "several namespaces (staging, prod); give --pod NAMESPACE/NAME" in result.stderr
    mixed = explain(stdin=both)
    assert [t.split(" (")[0] for t in sections(mixed.stdout)[1]] == ["Pod staging/jupyter-alice", "Pod prod/jupyter-alice"]
    [diagnosis] = json_lines(explain("--diagnose", "--pod", "staging/jupyter-alice", stdin=both).stdout)
    assert "quay.io/x/staging:1" in diagnosis["summary"] and diagnosis["pod"] == "jupyter-alice"
    ready = explain("--pod", "prod/jupyter-alice", stdin=both)
    assert ready.returncode == 0 and "What went wrong" not in ready.stdout


# -- the order of the rows: the page's ---------------------------------------------------


def test_rows_come_in_the_order_they_happened_as_on_the_page() -> None:
    # The spawn page shows events as they arrive: by first occurrence. kubectl lists them
    # by name, and a repeat's lastTimestamp and resourceVersion are those of its last time.
    ns = namespace()
    for pod in POD_NAMES:
        result = explain("--pod", pod, stdin=namespace_dump(ns))
        assert result.returncode == 0, result.stderr
        assert shown_as_on_the_page(rows(result.stdout.splitlines()), owned(ns, pod, "hub")), pod


def test_a_repeat_stays_before_what_came_after_its_first_time_within_one_second() -> None:
    # The scheduler's FailedScheduling at 11.2 s, the autoscaler's TriggeredScaleUp stamped
    # 11 s (whole seconds) at 11.6 s; the scheduler then retried, so the FailedScheduling
    # was written last: by write order it would read after the scale-up it caused.
    def event(name: str, nanos: int, version: str, **fields: Any) -> dict[str, Any]:
        return {
            "kind": "Event", "apiVersion": "v1",
            "metadata": {"name": f"jupyter-x.{nanos:x}", "namespace": "ns", "uid": name, "resourceVersion": version},
            "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "jupyter-x"}, **fields,
        }

    second = int(datetime(2026, 11, 29, 22, 20, 11, tzinfo=timezone.utc).timestamp())
    failed = event("fs", second * 10**9 + 200_000_000, "20", reason="FailedScheduling", type="Warning",
                   message="0/3 nodes are available: 3 Insufficient memory.", reportingComponent="default-scheduler",
                   eventTime="2026-11-29T22:20:11.200000Z", firstTimestamp=None, lastTimestamp=None,
                   series={"count": 2, "lastObservedTime": "2026-11-29T22:20:41.300000Z"})
    scale_up = event("up", second * 10**9 + 600_000_000, "12", reason="TriggeredScaleUp", type="Normal",
                     message="pod triggered scale-up: [{eks-user 3->4 (max: 10)}]", source={"component": "cluster-autoscaler"},
                     firstTimestamp="2026-11-29T22:20:11Z", lastTimestamp="2026-11-29T22:20:11Z", count=1)
    result = explain(stdin=json.dumps([scale_up, failed]).encode())
    assert result.returncode == 0, result.stderr
    assert [reason for reason, _ in rows(result.stdout.splitlines())] == ["FailedScheduling", "TriggeredScaleUp"]
    # names that carry no time (not made by client-go) leave the write order
    for item, name in ((failed, "jupyter-x.a"), (scale_up, "jupyter-x.b")):
        item["metadata"]["name"] = name
    result = explain(stdin=json.dumps([scale_up, failed]).encode())
    assert [reason for reason, _ in rows(result.stdout.splitlines())] == ["TriggeredScaleUp", "FailedScheduling"]
