"""DemoHub: a real JupyterHub on 127.0.0.1 wired to the simulated Kubernetes cluster.

Starts (and fully stops) the three processes of the demo:

1. the simulated Kubernetes API (``python -m richprogress.demo.cluster``),
2. JupyterHub with ``richprogress/demo/jupyterhub_config.py``,
3. configurable-http-proxy, which JupyterHub starts itself.

The launcher (``python -m richprogress.demo``) and the browser tests both use it::

    with DemoHub(speed=10) as hub:
        print(hub.url)          # e.g. http://127.0.0.1:8000/
        hub.api_token           # an admin service token for the REST API

Every port is a loopback port; ``stop()`` ends each process it started, by pid (and the
process group each child leads), and waits for them, so nothing is left running.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from types import TracebackType

from .hub_process import DemoHubError, launch_jupyterhub, log_tail, terminate, wait_until_answering
from .processes import HOST, descendant_pids, free_port, pid_alive, port_is_free, send_signal

__all__ = ["CONFIG_FILE", "DemoHub", "DemoHubError", "default_start_timeout", "find_chp"]

CONFIG_FILE = Path(__file__).resolve().parent / "jupyterhub_config.py"
_REPO_ROOT = Path(__file__).resolve().parents[2]
LISTENING_PREFIX = "richprogress-cluster listening on "

#: Seconds of a spawn that must still succeed at speed 1 (the slowest successful scenario,
#: scale-up, replays a few minutes of a real cluster). Divided by the speed factor.
_SLOWEST_SUCCESS_AT_SPEED_1 = 240.0


def find_chp() -> str:
    """The configurable-http-proxy executable: the repository's node_modules, else PATH.

    Raises DemoHubError with the install command when it cannot be found.
    """
    local = _REPO_ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    found = shutil.which("configurable-http-proxy")
    if found:
        return found
    raise DemoHubError(
        "configurable-http-proxy was not found (looked in "
        f"{local.parent} and on PATH). Install it with `npm install` in the repository "
        "(or `npm install -g configurable-http-proxy`), or run `scripts/dev demo`."
    )


def default_start_timeout(speed: float) -> float:
    """A spawn timeout long enough for every succeeding scenario at this speed.

    At the default speed (10) that is 30 s, so ``image-not-found`` fails within half a
    minute; never below 10 s because the hub's readiness polling backs off up to 5 s.
    """
    return max(10.0, round(_SLOWEST_SUCCESS_AT_SPEED_1 / max(speed, 0.01) + 6.0, 1))


class DemoHub:
    """A JupyterHub + configurable-http-proxy + simulated cluster, as a context manager.

    Args:
        port: the public (proxy) port; 0 picks a free one.
        speed: how much faster than a real cluster the scenarios replay.
        base_url: JupyterHub's ``base_url`` (``/`` or e.g. ``/jh/``).
        start_timeout: ``c.KubeSpawner.start_timeout`` in seconds; default from the speed.
        workdir: where the database, cookie secret, spawn history, kubeconfig and logs go;
            a temporary folder (removed on stop) when None. A DemoHub started again on the
            same folder is a hub restart (same users, same cookies, same spawn history).
        keep_logs: when the folder is a temporary one, remove everything in it on stop but
            the hub's and the cluster's logs, so a log path printed at start still holds
            the log afterwards (the launcher does; tests leave nothing behind).
        history_url: the spawn history's database (``c.SpawnHistory.url``); default a
            SQLite file in ``workdir``.
        extra_config: Python appended to the demo config (loaded after it), for tests.
        ready_timeout: seconds to wait for the hub to answer before giving up.
        replay: a ``kubectl get events -o json`` dump the cluster plays for pods of the
            scenario ``replay`` (``cluster/replay.py``).
    """

    def __init__(
        self,
        port: int = 0,
        speed: float = 10.0,
        base_url: str = "/",
        start_timeout: float | None = None,
        workdir: str | os.PathLike[str] | None = None,
        extra_config: str = "",
        ready_timeout: float = 60.0,
        history_url: str | None = None,
        keep_logs: bool = False,
        replay: str | os.PathLike[str] | None = None,
    ) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be positive, not {speed!r}")
        self.port = port
        self.speed = float(speed)
        self.base_url = "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"
        self.start_timeout = (
            float(start_timeout) if start_timeout is not None else default_start_timeout(speed)
        )
        self._own_workdir = workdir is None
        # resolved now: the hub and the cluster run in that folder, where a relative path
        # would name another one (and the demo's config reads it from the environment)
        self._workdir_arg = Path(workdir).expanduser().resolve() if workdir is not None else None
        self.extra_config = extra_config
        self.history_url = history_url
        self.keep_logs = keep_logs
        self.replay = Path(replay).expanduser().resolve() if replay is not None else None
        self.ready_timeout = ready_timeout
        #: an admin service token (scopes: admin:users, admin:servers, read/access:servers)
        self.api_token = secrets.token_hex(24)
        self.workdir: Path | None = None
        self.url = ""
        self.cluster_url = ""
        self._cluster: subprocess.Popen[bytes] | None = None
        self._hub: subprocess.Popen[bytes] | None = None
        self._log_files: list[object] = []
        self._known_pids: set[int] = set()

    # -- paths ---------------------------------------------------------------------------

    @property
    def log_path(self) -> Path:
        """JupyterHub's log (stdout and stderr, including CHP's)."""
        return self._require_workdir() / "jupyterhub.log"

    @property
    def cluster_log_path(self) -> Path:
        """The simulated cluster's log."""
        return self._require_workdir() / "cluster.log"

    @property
    def pids(self) -> list[int]:
        """Pids of every process this hub started that is still alive (for leak checks)."""
        return sorted(pid for pid in self._known_pids | set(self._collect_pids()) if pid_alive(pid))

    def problem(self) -> str | None:
        """None while hub and cluster run; else which one exited, and its last log lines."""
        for name, proc, log in (
            ("jupyterhub", self._hub, self.log_path if self.workdir else None),
            (
                "the simulated cluster",
                self._cluster,
                self.cluster_log_path if self.workdir else None,
            ),
        ):
            if proc is None:
                return f"{name} is not running"
            if proc.poll() is not None:
                tail = log_tail(log) if log else "(no log)"
                return f"{name} exited with status {proc.returncode}; its last log lines:\n{tail}"
        return None

    def _require_workdir(self) -> Path:
        if self.workdir is None:
            raise DemoHubError("DemoHub has not been started")
        return self.workdir

    # -- lifecycle -----------------------------------------------------------------------

    def __enter__(self) -> DemoHub:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> str:
        """Start cluster, hub and proxy; return the hub's public URL once it answers."""
        if self._hub is not None:
            return self.url
        chp = find_chp()  # fail before starting anything
        if self.port and not port_is_free(self.port):
            raise DemoHubError(
                f"port {self.port} on {HOST} is already in use; "
                "choose another one (e.g. --port 8001), or --port 0 for any free port"
            )
        if self._own_workdir:
            self.workdir = Path(tempfile.mkdtemp(prefix="richprogress-demo-"))
        else:
            assert self._workdir_arg is not None
            self.workdir = self._workdir_arg
            self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            self._start_cluster()
            self._start_hub(chp)
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self.url

    def _start_cluster(self) -> None:
        workdir = self._require_workdir()
        kubeconfig = workdir / "kubeconfig"
        log = open(self.cluster_log_path, "wb")  # noqa: SIM115 - closed in stop()
        self._log_files.append(log)
        self._cluster = subprocess.Popen(
            [
                sys.executable,
                "-u",
                "-m",
                "richprogress.demo.cluster",
                "--host",
                HOST,
                "--port",
                "0",
                "--speed",
                repr(self.speed),
                "--kubeconfig",
                str(kubeconfig),
                *(["--replay", str(self.replay)] if self.replay is not None else []),
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            cwd=workdir,
            # its own process group: a Ctrl-C in the launcher's terminal reaches only the
            # launcher, which then stops everything in order
            start_new_session=True,
        )
        self._known_pids.add(self._cluster.pid)
        assert self._cluster.stdout is not None
        line = self._read_line(self._cluster, timeout=30.0)
        if not line.startswith(LISTENING_PREFIX):
            try:
                self._cluster.wait(2)
            except subprocess.TimeoutExpired:
                pass
            log.flush()
            raise DemoHubError(
                f"the simulated cluster did not start (first line: {line!r}); its log:\n"
                + log_tail(self.cluster_log_path)
            )
        self.cluster_url = line[len(LISTENING_PREFIX) :].strip()
        # keep draining its stdout into the log so the pipe never fills up
        threading.Thread(target=self._drain, args=(self._cluster.stdout, log), daemon=True).start()
        if not kubeconfig.is_file():
            self._write_kubeconfig(kubeconfig)

    @staticmethod
    def _read_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
        assert proc.stdout is not None
        result: list[bytes] = []
        reader = threading.Thread(
            target=lambda: result.append(proc.stdout.readline()),  # type: ignore[union-attr]
            daemon=True,
        )
        reader.start()
        reader.join(timeout)
        if not result:
            raise DemoHubError(f"no output from pid {proc.pid} within {timeout:.0f} s")
        return result[0].decode(errors="replace").strip()

    @staticmethod
    def _drain(stream: object, log: object) -> None:
        try:
            for chunk in iter(stream.readline, b""):  # type: ignore[attr-defined]
                log.write(chunk)  # type: ignore[attr-defined]
                log.flush()  # type: ignore[attr-defined]
        except (OSError, ValueError):
            pass

    def _write_kubeconfig(self, path: Path) -> None:
        # The cluster writes its own kubeconfig when asked; this is the same minimal shape
        # (no auth), in case it did not.
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "demo", "cluster": {"server": self.cluster_url}}],
            "users": [{"name": "demo", "user": {}}],
            "contexts": [{"name": "demo", "context": {"cluster": "demo", "user": "demo"}}],
            "current-context": "demo",
        }
        path.write_text(json.dumps(config, indent=2))

    def _start_hub(self, chp: str) -> None:
        workdir = self._require_workdir()
        public_port = self.port or free_port()
        hub_port = free_port()
        proxy_api_port = free_port()
        while proxy_api_port in (public_port, hub_port):
            proxy_api_port = free_port()
        self.port = public_port
        self.url = f"http://{HOST}:{public_port}{self.base_url}"
        extra = workdir / "extra_config.py"
        extra.write_text(self.extra_config + "\n")
        env = dict(os.environ)
        # the kubeconfig loader tries in-cluster config first: hide a CI runner's cluster
        for name in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
            env.pop(name, None)
        env.update(
            {
                "KUBECONFIG": str(workdir / "kubeconfig"),
                "RICHPROGRESS_DEMO_BIND_URL": self.url,
                "RICHPROGRESS_DEMO_HUB_PORT": str(hub_port),
                # a port of its own, so two demo hubs' notebook stand-ins never collide
                "RICHPROGRESS_DEMO_NOTEBOOK_PORT": str(free_port()),
                "RICHPROGRESS_DEMO_PROXY_API_PORT": str(proxy_api_port),
                "RICHPROGRESS_DEMO_WORKDIR": str(workdir),
                "RICHPROGRESS_DEMO_SPEED": repr(self.speed),
                "RICHPROGRESS_DEMO_START_TIMEOUT": repr(self.start_timeout),
                "RICHPROGRESS_DEMO_CHP": chp,
                "RICHPROGRESS_DEMO_API_TOKEN": self.api_token,
                "RICHPROGRESS_DEMO_EXTRA_CONFIG": str(extra),
                "RICHPROGRESS_DEMO_HISTORY_URL": self.history_url or "",
                "RICHPROGRESS_DEMO_REPLAY": str(self.replay or ""),
                # CHP is a node script: make sure `node` next to it is found too
                "PATH": os.pathsep.join([str(Path(chp).parent), env.get("PATH", "")]),
            }
        )
        log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self._log_files.append(log)
        self._hub = launch_jupyterhub(CONFIG_FILE, cwd=workdir, env=env, log=log)
        self._known_pids.add(self._hub.pid)

    def _wait_ready(self) -> None:
        """Wait until the hub's REST API answers through the proxy."""
        assert self._hub is not None
        wait_until_answering(self._hub, self.url, timeout=self.ready_timeout, log=self.log_path)
        self._remember_children()

    def _chp_pid(self) -> int | None:
        if self.workdir is None:
            return None
        try:
            return int((self.workdir / "jupyterhub-proxy.pid").read_text().strip())
        except (OSError, ValueError):
            return None

    def _collect_pids(self) -> list[int]:
        pids: list[int] = []
        for proc in (self._hub, self._cluster):
            if proc is not None:
                pids.append(proc.pid)
                pids.extend(descendant_pids(proc.pid))
        chp = self._chp_pid()
        if chp is not None:
            pids.append(chp)
        return pids

    def _remember_children(self) -> None:
        self._known_pids.update(self._collect_pids())

    def api(self, method: str, path: str, body: object | None = None) -> object:
        """Call the hub's REST API (``path`` relative to ``hub/api/``) with the admin token."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}hub/api/{path.lstrip('/')}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.api_token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            payload = response.read()
        return json.loads(payload) if payload else None

    def stop(self, timeout: float = 15.0) -> None:
        """Stop hub, proxy and cluster by pid, wait for them, leave nothing running."""
        self._remember_children()
        # the hub first: it stops its servers (pods in the cluster) and the proxy it started
        if self._hub is not None:
            terminate(self._hub, timeout)
        if self._cluster is not None:
            terminate(self._cluster, timeout / 2)
        # whatever outlived its parent (CHP if the hub died hard, a notebook stand-in, ...)
        leftovers = [pid for pid in self._known_pids if pid_alive(pid)]
        for pid in leftovers:
            send_signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while leftovers and time.monotonic() < deadline:
            time.sleep(0.05)
            leftovers = [pid for pid in leftovers if pid_alive(pid)]
        for pid in leftovers:
            send_signal(pid, signal.SIGKILL)
        for log in self._log_files:
            log.close()  # type: ignore[attr-defined]
        self._log_files.clear()
        self._hub = None
        self._cluster = None
        if (
            self._own_workdir
            and self.workdir is not None
            and not os.environ.get("RICHPROGRESS_KEEP_DEMO_WORKDIR")
        ):
            self._remove_workdir(self.workdir)

    def _remove_workdir(self, workdir: Path) -> None:
        """Remove the temporary folder, or with ``keep_logs`` all of it but the two logs."""
        if not self.keep_logs:
            shutil.rmtree(workdir, ignore_errors=True)
            return
        logs = {self.log_path.name, self.cluster_log_path.name}
        for entry in workdir.iterdir():
            if entry.name in logs:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
