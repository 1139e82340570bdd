"""The demo launcher: DemoHub starts real processes, stops every one of them, and says clearly
what is missing; the demo config offers every scenario the simulated cluster ships."""

from __future__ import annotations

import json
import signal
import socket
import urllib.request
from pathlib import Path

import pytest
from traitlets.config.loader import PyFileConfigLoader

from richprogress.demo import __main__ as launcher
from richprogress.demo import hub as hub_module
from richprogress.demo.hub import (
    CONFIG_FILE,
    DemoHub,
    DemoHubError,
    default_start_timeout,
    pid_alive,
)

SCENARIO_DIR = Path(hub_module.__file__).resolve().parent / "cluster" / "scenarios"


def test_demohub_starts_serves_and_stops_leaving_nothing() -> None:
    with DemoHub(speed=50) as hub:
        assert hub.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{hub.url}hub/api/", timeout=10) as response:
            assert "version" in json.loads(response.read())
        # the admin token works for the REST API
        users = hub.api("GET", "users")
        assert isinstance(users, list)
        pids = hub.pids
        workdir = hub.workdir
        assert hub.problem() is None
        # the cluster, the hub and the proxy the hub started
        assert len(pids) >= 3, pids
        assert hub.log_path.is_file()
    assert [pid for pid in pids if pid_alive(pid)] == []
    assert workdir is not None and not workdir.exists()


def test_with_keep_logs_only_the_logs_outlive_the_stop() -> None:
    # the launcher prints the hub log's path at start: after Ctrl-C the log is still there
    with DemoHub(speed=50, keep_logs=True) as hub:
        workdir, log = hub.workdir, hub.log_path
        assert log.is_file()
    assert workdir is not None
    try:
        assert sorted(path.name for path in workdir.iterdir()) == ["cluster.log", "jupyterhub.log"]
        assert log.stat().st_size > 0
    finally:
        for path in workdir.iterdir():
            path.unlink()
        workdir.rmdir()


def test_the_launcher_keeps_the_log_and_says_where(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    made: list[DemoHub] = []

    class QuickHub(DemoHub):
        def __init__(self, **kwargs: object) -> None:
            super().__init__(**kwargs)  # type: ignore[arg-type]
            made.append(self)

        def start(self) -> str:
            url = super().start()
            signal.raise_signal(signal.SIGINT)  # Ctrl-C as soon as it is up
            return url

    monkeypatch.setattr(launcher, "DemoHub", QuickHub)
    previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        status = launcher.main(["--port", "0", "--speed", "50"])
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])
    (hub,) = made
    try:
        out = capsys.readouterr().out
        assert hub.keep_logs and hub.log_path.is_file()
        assert f"Stopped. The hub log is kept in {hub.log_path}" in out, out
        assert status in (0, 130)
    finally:
        for path in hub.log_path.parent.iterdir():
            path.unlink()
        hub.log_path.parent.rmdir()


def test_demohub_serves_under_a_base_url() -> None:
    with DemoHub(speed=50, base_url="jh") as hub:
        assert hub.base_url == "/jh/"
        assert hub.url.endswith("/jh/")
        with urllib.request.urlopen(f"{hub.url}hub/login", timeout=10) as response:
            assert response.status == 200
        pids = hub.pids
    assert [pid for pid in pids if pid_alive(pid)] == []


def test_missing_proxy_is_a_clear_error_and_starts_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(hub_module, "_REPO_ROOT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    hub = DemoHub()
    with pytest.raises(DemoHubError, match="configurable-http-proxy was not found.*npm install"):
        hub.start()
    assert hub.workdir is None and hub.pids == []


def test_launcher_prints_the_missing_proxy_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(hub_module, "_REPO_ROOT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert launcher.main(["--port", str(hub_module.free_port())]) == 1
    err = capsys.readouterr().err
    assert "configurable-http-proxy was not found" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("speed", "at_most"),
    [
        pytest.param(10.0, 40.0, id="default-speed-fails-within-40s"),
        pytest.param(1.0, 300.0, id="real-time-waits-for-scale-up"),
        pytest.param(1000.0, 10.0, id="fast-tests-still-10s"),
    ],
)
def test_default_start_timeout(speed: float, at_most: float) -> None:
    timeout = default_start_timeout(speed)
    assert 10.0 <= timeout <= at_most


def _profiles() -> list[dict]:
    loader = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent))
    config = loader.load_config()
    return list(config.KubeSpawner.profile_list)


def test_every_shipped_scenario_is_a_profile() -> None:
    shipped = {path.stem for path in SCENARIO_DIR.glob("*.json")}
    assert shipped, f"no scenarios found in {SCENARIO_DIR}"
    slugs = {profile["slug"] for profile in _profiles()}
    assert shipped <= slugs
    assert {
        "happy-path",
        "scale-up",
        "image-not-found",
        "no-node-fits",
        "volume-provisioning",
        "out-of-memory",
        "custom-image",
        "crash-on-start",
        "missing-singleuser",
        "never-answers",
        "slow-pull-timeout",
    } <= slugs


def test_custom_image_profile_lets_the_user_type_an_image() -> None:
    (custom,) = [p for p in _profiles() if p["slug"] == "custom-image"]
    unlisted = custom["profile_options"]["image"]["unlisted_choice"]
    assert unlisted["enabled"] is True
    assert unlisted["kubespawner_override"] == {"image": "{value}"}


def test_parse_args_defaults() -> None:
    args = launcher.parse_args([])
    assert (args.port, args.speed, args.base_url) == (8000, 10.0, "/")
    with pytest.raises(SystemExit):
        launcher.parse_args(["--speed", "0"])


def test_example_config_for_a_real_cluster_loads_and_its_rules_validate() -> None:
    from richprogress.web.paths import template_dir
    from richprogress.wording.formatter import EventFormatter

    example = CONFIG_FILE.parents[2] / "examples" / "jupyterhub_config.py"
    config = PyFileConfigLoader(example.name, path=str(example.parent)).load_config()
    assert config.JupyterHub.spawner_class == "richprogress.RichKubeSpawner"
    # setup(c) ran: our templates come first
    assert config.JupyterHub.template_paths.get_value([])[0] == template_dir()
    formatter = EventFormatter(config=config)
    assert [rule["id"] for rule in formatter.extra_rules] == ["gpu-quota"]
    assert callable(formatter.format_hook)


def test_a_busy_port_is_a_clear_error_and_starts_nothing() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        hub = DemoHub(port=port)
        with pytest.raises(DemoHubError, match=f"port {port} on 127.0.0.1 is already in use"):
            hub.start()
    assert hub.workdir is None and hub.pids == []


def test_stop_after_the_hub_died_hard_still_ends_the_proxy_and_cluster() -> None:
    hub = DemoHub(speed=50)
    hub.start()
    try:
        pids = hub.pids
        chp_pid = hub._chp_pid()
        assert chp_pid in pids
        hub_process = hub._hub
        assert hub_process is not None
        # a hub killed without cleanup leaves its proxy running on its own
        hub_process.send_signal(signal.SIGKILL)
        hub_process.wait(10)
        assert pid_alive(chp_pid)
        # the launcher polls this to tell the person at the terminal
        problem = hub.problem()
        assert problem is not None and problem.startswith("jupyterhub exited with status -9")
    finally:
        hub.stop()
    assert [pid for pid in pids if pid_alive(pid)] == []


def test_a_cluster_that_cannot_start_is_reported_with_its_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # an address this machine does not have: the cluster cannot listen and exits
    monkeypatch.setattr(hub_module, "HOST", "192.0.2.1")
    hub = DemoHub()
    with pytest.raises(DemoHubError, match="simulated cluster did not start") as raised:
        hub.start()
    assert "192.0.2.1" in str(raised.value)
    assert hub.pids == []


def test_a_relative_state_dir_works_and_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the hub and the cluster run inside the state folder: a relative path must still name it
    monkeypatch.chdir(tmp_path)
    with DemoHub(speed=50, workdir="state") as hub:
        with urllib.request.urlopen(f"{hub.url}hub/api/", timeout=10) as response:
            assert "version" in json.loads(response.read())
        assert hub.workdir == tmp_path / "state"
        assert hub.problem() is None
    kept = {path.name for path in (tmp_path / "state").iterdir()}
    assert {"jupyterhub.sqlite", "jupyterhub_cookie_secret"} <= kept
    assert not (tmp_path / "state" / "state").exists()
