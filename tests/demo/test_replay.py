"""``python -m richprogress.demo --replay FILE [--config FILE]``: an admin's own events on
the demo hub's real page.

- the dump becomes the ``replay`` scenario (``demo/cluster/replay.py``): every occurrence
  at its own relative time, re-pointed at the demo's pod;
- the launcher, run as users run it (``launcher.main``), plays tests/data's kubectl dump
  through a real hub with an admin's config file (a rule of their own and a
  ``pre_spawn_hook`` that calls ``richprogress.note``): we read the spawn's timeline JSON;
- bad input gets one line on stderr and exit status 2 before any server starts
  (subprocess, as a shell runs it).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from richprogress.demo import __main__ as launcher
from richprogress.demo.cluster.replay import MAX_REPEATS, ReplayError, build_replay, load_replay
from richprogress.demo.hub import DemoHub
from richprogress.demo.replay_setup import check_config
from tests.helpers.paths import DATA, REPO

IMAGE_NOT_FOUND = DATA / "image-not-found.events.json"
SCALE_UP = DATA / "kubespawner-pr910" / "aws-pod-requires-scale-up.events.json"


def _emitted(replay: Any) -> list[tuple[float, str, str]]:
    """(simulated seconds since the first event, reason, message) of each emission."""
    at = -replay.scenario.steps[0]["delay"]
    out = []
    for step in replay.scenario.steps:
        at += step["delay"]
        for event in step["events"]:
            out.append((round(at, 3), event["reason"], event["message"]))
    return out


def test_a_dump_plays_each_occurrence_at_its_own_time_repointed_at_the_demo_pod():
    replay = load_replay(IMAGE_NOT_FOUND)
    assert (replay.pod, replay.events, replay.skipped) == ("jupyter-alice", 6, 0)
    emitted = _emitted(replay)
    # the dump: Scheduled 21:33:00, Pulling :01, two Failed :03, BackOff x3 and Failed x3 from
    # :04 to 21:34:10, so each repeat at :04, :37 and 21:34:10
    assert [(t, reason) for t, reason, _ in emitted] == [
        (0.0, "Scheduled"), (1.0, "Pulling"), (3.0, "Failed"), (3.0, "Failed"),
        (4.0, "BackOff"), (4.0, "Failed"), (37.0, "BackOff"), (37.0, "Failed"),
        (70.0, "BackOff"), (70.0, "Failed"),
    ]
    assert emitted[0][2] == "Successfully assigned {namespace}/{pod} to node-a1"
    assert replay.scenario.outcome == "never-ready"
    assert replay.image == "jupyter/does-not-exist:latest"


def test_a_started_server_runs_and_a_scale_up_keeps_its_gaps():
    replay = load_replay(SCALE_UP)
    emitted = _emitted(replay)
    assert emitted[-1][1] == "Started" and replay.scenario.outcome == "ready"
    assert replay.scenario.steps[-1]["pod"] == {"phase": "Running", "container": {"state": "running", "ready": True}}
    # FailedScheduling at 14:45:31.684, Scheduled at 14:46:19.782: 48.1 s of waiting kept
    times = {reason: t for t, reason, _ in reversed(emitted)}
    assert times["Scheduled"] - times["FailedScheduling"] == pytest.approx(48.098, abs=0.01)
    # the server's image is the last pulled (an init container's comes first)
    assert replay.image == "quay.io/cryointhecloud/cryo-hub-image:d624b28e39c4"


def test_a_long_crash_loop_is_played_at_most_max_repeats_times():
    event = {
        "involvedObject": {"kind": "Pod", "name": "jupyter-bob", "namespace": "hub"},
        "reason": "BackOff", "type": "Warning", "message": "Back-off restarting failed container",
        "count": 300, "firstTimestamp": "2026-01-01T10:00:00Z", "lastTimestamp": "2026-01-01T11:00:00Z",
    }
    other = {"involvedObject": {"kind": "Node", "name": "n1"}, "reason": "NodeReady", "message": "x",
             "lastTimestamp": "2026-01-01T10:00:00Z"}
    replay = build_replay([event, other])
    assert replay.events == 1 and replay.skipped == 1
    assert len(replay.scenario.steps) == MAX_REPEATS
    assert replay.duration == 3600


def test_events_without_a_time_cannot_be_replayed():
    event = {"involvedObject": {"kind": "Pod", "name": "jupyter-bob"}, "reason": "Pulling", "message": "x"}
    with pytest.raises(ReplayError, match=r"^event 1 \(Pulling\) has no time \(firstTimestamp, lastTimestamp or eventTime\)"):
        build_replay([event])


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "richprogress.demo", "--port", "0", *args],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (None, "richprogress demo: --replay {path}: no such file"),
        ("{not json", "richprogress demo: --replay {path}: the input is not JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
        ('{"kind": "List", "items": []}', "richprogress demo: --replay {path}: the input holds no events (check the pod name in the field selector)"),
        ('[{"involvedObject": {"kind": "Pod", "name": "jupyter-a"}, "reason": "Pulling", "message": "m"}]',
         "richprogress demo: --replay {path}: event 1 (Pulling) has no time (firstTimestamp, lastTimestamp or eventTime); its timing cannot be replayed"),
        ('[{"involvedObject": {"kind": "Node", "name": "n"}, "reason": "NodeReady", "message": "m"}]',
         "richprogress demo: --replay {path}: no event is about a pod (involvedObject.kind Pod); nothing to replay"),
    ],
    ids=["missing", "not-json", "no-events", "no-timestamps", "no-pod"],
)
def test_bad_replay_input_is_one_line_and_exit_2_before_anything_starts(tmp_path, content, line):
    path = tmp_path / "alice.json"
    if content is not None:
        path.write_text(content)
    done = _run("--replay", str(path))
    assert done.returncode == 2
    assert done.stderr == line.format(path=path) + "\n"
    assert "Starting" not in done.stdout  # no server was started


def test_a_missing_or_broken_config_is_one_line(tmp_path):
    done = _run("--config", str(tmp_path / "nope.py"))
    assert (done.returncode, done.stderr) == (2, f"richprogress demo: --config {tmp_path / 'nope.py'}: no such file\n")
    broken = tmp_path / "broken.py"
    broken.write_text("c.EventFormatter.rules = [\n")
    done = _run("--replay", str(IMAGE_NOT_FOUND), "--config", str(broken))
    assert done.returncode == 2
    assert done.stderr.startswith(f"richprogress demo: --config {broken}: not Python (line 1: ")


#: the example ``my_jupyterhub_config.py`` of docs/notes.md: a note from a pre_spawn_hook, and
#: a rule of the admin's own
ADMIN_CONFIG = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "notes.md").read_text(encoding="utf-8"), flags=re.DOTALL)[-1]


def test_the_launcher_replays_a_dump_with_the_admins_config(tmp_path, monkeypatch, capsys):
    config = tmp_path / "my_jupyterhub_config.py"
    config.write_text(ADMIN_CONFIG)
    seen: dict[str, Any] = {}

    class SpawningHub(DemoHub):
        """The launcher's hub, which starts one server of the replay profile (as a user
        clicking Start would), waits for its end, then presses Ctrl-C."""

        def start(self) -> str:
            url = super().start()
            threading.Thread(target=self.spawn_once, daemon=True).start()
            return url

        def spawn_once(self) -> None:
            try:
                self.api("POST", "users/rosa")
                self.api("POST", "users/rosa/server", {"profile": "replay"})
                deadline = time.monotonic() + 40
                while time.monotonic() < deadline:
                    data = self.api("GET", "richprogress/users/rosa/timeline")
                    if isinstance(data, dict) and data["outcome"] != "pending":
                        break
                    time.sleep(0.2)
                seen["timeline"] = data
            except Exception as error:  # shown by the assertion below
                seen["error"] = repr(error)
            finally:
                seen["log"] = self.log_path
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C: the launcher stops everything

    monkeypatch.setattr(launcher, "DemoHub", SpawningHub)
    previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        status = launcher.main(
            ["--port", "0", "--speed", "20", "--replay", str(IMAGE_NOT_FOUND), "--config", str(config)]
        )
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])
    out, err = capsys.readouterr()
    assert "error" not in seen, seen
    assert status in (0, 130), err
    assert 'Start the first profile, "Replay: image-not-found.events.json": 6 events of jupyter-alice over 70 s, played at x20.' in out
    data = seen["timeline"]
    assert data["outcome"] == "failed", json.dumps(data)[:2000]
    records = data["records"]
    assert records[0]["message"] == "Replaying a recorded spawn" and records[0]["rule"] == "note"
    events = [r for r in records if r["rule"] != "note"]
    assert [r["reason"] for r in events[:3]] == ["Scheduled", "Pulling", "Failed"]
    # the events are the demo pod's own, the old pod's name re-pointed in their text too
    assert {r["object"]["name"] for r in events} == {"jupyter-rosa"}
    assert "jupyter-alice" not in json.dumps(records)
    # the hub's configured rules word them: the admin's own rule wins over the default
    assert any(r["rule"] == "our-pull-failed" and r["message"] == "Our registry has no such image" for r in events)
    assert data["diagnosis"]["summary"] == "Our registry has no such image"
    assert status in (0, 130)
    log_dir = Path(seen["log"]).parent
    for path in log_dir.iterdir():
        path.unlink()
    log_dir.rmdir()


def test_the_readmes_replay_commands_work_on_what_kubectl_writes(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```bash\n(.*?)```", readme, flags=re.DOTALL) if "--replay" in b]
    kubectl, demo = block.strip().splitlines()
    assert kubectl.startswith("kubectl get events -o json --field-selector involvedObject.name=jupyter-alice > ")
    dump = kubectl.rsplit("> ", 1)[1]
    # kubectl -o json writes a v1 List
    items = json.loads(IMAGE_NOT_FOUND.read_text())
    (tmp_path / dump).write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}))
    words = shlex.split(demo)
    assert words[:3] == ["python", "-m", "richprogress.demo"]
    args = launcher.parse_args(words[3:])
    assert args.replay == dump and args.config == "my_jupyterhub_config.py"
    replay = load_replay(tmp_path / args.replay)
    assert (replay.pod, replay.events) == ("jupyter-alice", 6)
    # the docs' config example is a config file the demo accepts
    notes_page = (REPO / "docs" / "notes.md").read_text(encoding="utf-8")
    example = re.findall(r"```python\n(.*?)```", notes_page, flags=re.DOTALL)[-1]
    config = tmp_path / args.config
    config.write_text(example)
    assert check_config(str(config)) == config.resolve()
