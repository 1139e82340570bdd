"""The failing container's last words, read by RichKubeSpawner from the simulated cluster.

Real KubeSpawner code reads ``GET .../pods/NAME/log`` through kubernetes_asyncio from
``SimulatedCluster``; the container's output is written with the simulator's own
``PodLog.write`` (``crashing_container``), as a notebook that dies with a traceback would
print it on each of its runs. We check what the timeline keeps (what the failure page and
the store get), that nothing is read when nobody may see it or no container ran, and that
a log read that never answers costs the failure no more than its deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from richprogress.history.rows import build_row, full_spawn, snapshot, timeline_of
from richprogress.kube.container_log import log_target
from richprogress.stream.spawn_end import SpawnEnd
from tests.helpers.kubespawner import make_spawner, rich_cluster, spawn
from tests.helpers.paths import DATA

TOKEN = "0123456789abcdef0123456789abcdef"
#: what the notebook prints on each run before it dies
TRACEBACK = f"""[I 2026-12-01 10:00:00 ServerApp] starting with JUPYTERHUB_API_TOKEN={TOKEN}
Traceback (most recent call last):
  File "/opt/conda/bin/jupyterhub-singleuser", line 10, in <module>
    sys.exit(main())
RuntimeError: could not reach the hub at http://hub:8081/hub/api?token={TOKEN}
"""


@contextlib.asynccontextmanager
async def crashing_container(cluster: Any, pod_name: str, text: str = TRACEBACK) -> AsyncIterator[list[int]]:
    """Writes ``text`` into each new run of the pod's container (``PodLog.write``, the
    simulator's own API); yields the list of runs written to, by length."""
    written: list[int] = []

    async def write() -> None:
        while True:
            run = cluster.kubelet.runs.get(("default", pod_name))
            # a run that started and wrote nothing yet: this run's traceback
            if run is not None and run.started and not run.log.lines:
                run.log.write(text)
                written.append(len(text))
            await asyncio.sleep(0.005)

    task = asyncio.ensure_future(write())
    try:
        yield written
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


TARGETS = [
    # id, container statuses, (container, restarted) or None
    ("never-ran", [{"name": "notebook", "state": {"waiting": {"reason": "ErrImagePull"}}}], None),
    ("crash-loop", [{"name": "notebook", "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                     "lastState": {"terminated": {"exitCode": 1}}}], ("notebook", True)),
    ("exited-once", [{"name": "notebook", "restartCount": 0, "state": {"terminated": {"exitCode": 2}}}], ("notebook", False)),
    ("running-never-ready", [{"name": "notebook", "state": {"running": {}}}], ("notebook", False)),
    ("sidecar-crashed", [{"name": "notebook", "state": {"running": {}}},
                         {"name": "proxy", "restartCount": 1, "state": {"running": {}}}], ("proxy", True)),
    ("notebook-first", [{"name": "aaa", "state": {"terminated": {}}},
                        {"name": "notebook", "state": {"terminated": {}}}], ("notebook", False)),
    # containerd could not start its command (not in the image): no run, no log
    ("command-not-started", [{"name": "notebook", "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                              "lastState": {"terminated": {"reason": "StartError", "exitCode": 128}}}], None),
    ("started-once-then-not", [{"name": "notebook", "restartCount": 2, "state": {"terminated": {"reason": "StartError"}},
                                "lastState": {"terminated": {"reason": "Error", "exitCode": 1}}}], ("notebook", True)),
    ("junk", [{"name": None}, "x", {"name": "n", "state": "running", "restartCount": "7"}], None),
]  # fmt: skip


@pytest.mark.parametrize("statuses,expected", [t[1:] for t in TARGETS], ids=[t[0] for t in TARGETS])
def test_which_container_is_read(statuses: list[Any], expected: Any) -> None:
    assert log_target({"status": {"containerStatuses": statuses}}) == expected
    assert log_target(None) is None and log_target({"status": None}) is None


def log_reads(cluster: Any) -> list[str]:
    return [path for _method, path, _status in cluster.api.request_log if "/log" in path.split("?")[0]]


async def test_a_crashing_container_s_last_lines_are_kept_redacted(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "out-of-memory", start_timeout=3)
        async with crashing_container(cluster, spawner.pod_name) as runs:
            _events, error = await spawn(spawner)
        assert error is not None and runs
        kept = spawner.spawn_timeline.container_log
        assert kept is not None, log_reads(cluster)
        assert kept["container"] == "notebook" and kept["truncated"] is False
        assert kept["lines"][-1] == "RuntimeError: could not reach the hub at http://hub:8081/hub/api?token=[redacted]"
        assert kept["lines"][0] == "[I 2026-12-01 10:00:00 ServerApp] starting with JUPYTERHUB_API_TOKEN=[redacted]"
        assert TOKEN not in repr(kept)
        # one read, bounded as documented
        (path,) = log_reads(cluster)
        assert "tailLines=40" in path and "limitBytes=32768" in path and "container=notebook" in path
        # what the store keeps is what was read (redacted once, before anything kept it)
        end = SpawnEnd(spawner=spawner, timeline=spawner.spawn_timeline, outcome="failed")
        row = build_row(snapshot(end))
        assert TOKEN.encode() not in row["payload"]
        stored = full_spawn({**row, "id": 1})
        assert stored["container_log"] == kept
        assert timeline_of(stored).container_log == kept
        await spawner.stop(now=True)


async def test_a_megabyte_line_does_not_push_the_lines_after_it_out(tmp_path):
    # limitBytes keeps the start of the asked tail: a 1 MB JSON line printed before the
    # traceback once filled the whole answer, and the traceback, which says why, was lost
    blob = '{"config": "' + "x" * 1_000_000 + '"}\n'
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "out-of-memory", start_timeout=3)
        async with crashing_container(cluster, spawner.pod_name, blob + TRACEBACK) as runs:
            _events, error = await spawn(spawner)
        assert error is not None and runs
        kept = spawner.spawn_timeline.container_log
        assert kept is not None and kept["truncated"] is True
        assert kept["lines"][-1] == "RuntimeError: could not reach the hub at http://hub:8081/hub/api?token=[redacted]"
        assert len(kept["lines"]) == 5 and kept["lines"][0].endswith("JUPYTERHUB_API_TOKEN=[redacted]")
        # half as many lines asked for until the answer was no longer cut
        assert [path.split("tailLines=")[1].split("&")[0] for path in log_reads(cluster)] == ["40", "20", "10", "5"]
        await spawner.stop(now=True)


async def test_nothing_is_read_for_nobody_nor_when_no_container_ran(tmp_path):
    async with rich_cluster(tmp_path, 50) as cluster:
        hidden = make_spawner(cluster, "alice", "out-of-memory", start_timeout=3, show_container_log="nobody")
        async with crashing_container(cluster, hidden.pod_name):
            _events, error = await spawn(hidden)
        assert error is not None and hidden.spawn_timeline.container_log is None
        await hidden.stop(now=True)
        missing = make_spawner(cluster, "bob", "image-not-found", start_timeout=3)
        _events, error = await spawn(missing)
        assert error is not None and missing.spawn_timeline.container_log is None
        await missing.stop(now=True)
        assert log_reads(cluster) == []


async def test_a_log_read_that_never_answers_costs_the_failure_only_its_deadline(tmp_path, monkeypatch):
    """The API accepts the log request and never answers: the failure goes on after
    ``container_log_timeout``, without the log."""
    from richprogress.kube.spawner import RichKubeSpawner

    waited: list[float] = []
    asked = asyncio.Event()
    real = RichKubeSpawner._rp_last_words

    async def timed(self: Any, timeline: Any) -> None:
        async def hang(*args: Any, **kwargs: Any) -> Any:
            asked.set()
            await asyncio.sleep(3600)

        monkeypatch.setattr(self.api, "read_namespaced_pod_log", hang)
        loop = asyncio.get_running_loop()
        began = loop.time()
        await real(self, timeline)
        waited.append(loop.time() - began)

    monkeypatch.setattr(RichKubeSpawner, "_rp_last_words", timed)
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "out-of-memory", start_timeout=3, container_log_timeout=0.5)
        async with crashing_container(cluster, spawner.pod_name):
            _events, error = await spawn(spawner)
        assert error is not None and asked.is_set()
        assert spawner.spawn_timeline.outcome == "failed" and spawner.spawn_timeline.container_log is None
        assert len(waited) == 1 and 0.45 <= waited[0] < 1.0, waited
        await spawner.stop(now=True)


def test_a_bad_show_container_log_is_refused_naming_the_setting():
    from traitlets import TraitError

    from richprogress.kube.spawner import RichKubeSpawner

    with pytest.raises(TraitError, match=r"show_container_log.*'owner' \(owner and admins\), 'admins' or 'nobody'"):
        RichKubeSpawner(_mock=True, show_container_log="everyone")


# -- richprogress explain --log ------------------------------------------------------------------

OOM_EVENTS = DATA / "out-of-memory.events.json"


def test_explain_shows_a_log_file_s_last_lines_redacted(tmp_path):
    from tests.helpers.cli import explain

    log = tmp_path / "notebook.log"
    lines = [f"line {i}" for i in range(60)] + [
        f"\x1b[31mERROR\x1b[0m starting with JUPYTERHUB_API_TOKEN={TOKEN}",
        "Authorization: Bearer eyJhbGciOi.J9.x",
        "RuntimeError: the hub said 403",
    ]
    log.write_text("\n".join(lines) + "\n")
    done = explain(OOM_EVENTS, "--log", log)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    tail = out.split(f"Last lines of {log}, earlier lines left out (secrets redacted):\n", 1)[1].splitlines()
    assert tail[0] == "  line 23" and len(tail) == 40  # the last 40, in order
    assert tail[-3:] == [
        "  ERROR starting with JUPYTERHUB_API_TOKEN=[redacted]",
        "  Authorization: Bearer [redacted]",
        "  RuntimeError: the hub said 403",
    ]
    assert TOKEN not in out and "eyJhbGciOi" not in out and "\x1b" not in out
    # the timeline and its verdict come first, as without --log
    assert out.index("What went wrong:") < out.index("Last lines of")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        pytest.param(["--json"], "--log goes with the readable timeline", id="with-json"),
        pytest.param(["--diagnose"], "--log goes with the readable timeline", id="with-diagnose"),
        pytest.param(["--log-is-missing"], "no such file", id="missing-file"),
    ],
)
def test_explain_log_refusals_are_one_line(tmp_path, args, said):
    from tests.helpers.cli import explain

    log = tmp_path / "n.log"
    log.write_text("x\n")
    if args == ["--log-is-missing"]:
        done = explain(OOM_EVENTS, "--log", tmp_path / "nope.log")
    else:
        done = explain(OOM_EVENTS, "--log", log, *args)
    assert done.returncode == 2 and said in done.stderr and len(done.stderr.strip().splitlines()) == 1


class RefusingAPI:
    """A CoreV1Api whose pods/log answers ``status`` (z2jh's hub role has no pods/log: 403)."""

    def __init__(self, status: int) -> None:
        self.status = status

    async def read_namespaced_pod_log(self, *args: Any, **kwargs: Any) -> Any:
        status = self.status

        class Response:
            async def read(self) -> bytes:
                return b'{"kind": "Status", "code": %d}' % status

            def release(self) -> None:
                pass

        answer = Response()
        answer.status = status  # type: ignore[attr-defined]
        return answer


async def test_a_hub_without_the_pods_log_permission_says_so_once(caplog):
    from richprogress.kube import container_log as reader

    reader._told_forbidden = False
    with caplog.at_level("INFO", logger="richprogress"):
        for _ in range(3):
            assert await reader.read_container_log(RefusingAPI(403), "ns", "jupyter-a", "notebook", True) is None
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        (
            "richprogress: the hub may not read pods/log (403), so failure pages show no container log;"
            " grant its service account 'get' on pods/log to show it (docs/container-log.md)"
        )
    ]
    assert await reader.read_container_log(RefusingAPI(400), "ns", "jupyter-a", "notebook", False) is None


async def test_the_hub_s_timeout_cancelling_start_still_keeps_the_last_lines(tmp_path):
    """JupyterHub's own start timeout cancels ``start()`` (``asyncio.wait_for``): the pod is
    still there, its log is read within the deadline, and the timeline ends failed."""
    async with rich_cluster(tmp_path, 50) as cluster:
        spawner = make_spawner(cluster, "alice", "out-of-memory", start_timeout=60, fail_fast=False)
        async with crashing_container(cluster, spawner.pod_name) as runs:
            start = asyncio.ensure_future(spawner.start())
            await asyncio.sleep(0)

            def crashed() -> bool:
                timeline = spawner.spawn_timeline
                return bool(runs) and any(r.get("reason") == "OOMKilled" for r in timeline.records())

            loop = asyncio.get_running_loop()
            deadline = loop.time() + 20
            while not crashed():
                assert loop.time() < deadline, "the container never crashed"
                await asyncio.sleep(0.02)
            start.cancel()
            with pytest.raises(asyncio.CancelledError):
                await start
        timeline = spawner.spawn_timeline
        assert timeline.outcome == "failed"
        assert timeline.container_log is not None
        assert timeline.container_log["lines"][-1].startswith("RuntimeError: could not reach the hub")
        await spawner.stop(now=True)
