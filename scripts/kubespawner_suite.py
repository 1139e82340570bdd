#!/usr/bin/env python3
"""Run KubeSpawner's own test suite against richprogress's simulated cluster, as a peer check.

    scripts/kubespawner_suite.py PATH/TO/kubespawner/tests [--venv DIR] [--out DIR]
                                 [--speed N] [--timeout S] [--per-test S] [-- pytest args]

PATH is the ``tests/`` folder of KubeSpawner's repository at tag 7.1.0 (its tests are not in
its sdist; never copy them into this repository). The script

1. makes a virtualenv (``--venv``, reused when it exists) with KubeSpawner 7.1.0 and its
   pinned test dependencies (pytest-asyncio < 0.23 and the sync ``kubernetes`` client, as
   its pyproject pins; pytest 8.1 and kubernetes 36.0.3, which that pin still works with);
2. copies the tests to ``--out`` with KubeSpawner's pytest settings (``asyncio_mode = auto``,
   from its pyproject.toml) and adapts only what ties them to a real cluster: the
   ``ssl_app`` fixture, which builds the test hub's certificates, becomes async (JupyterHub 6
   needs a running event loop there);
3. starts the simulated cluster (this checkout's, with this Python) with the images the
   suite's hub and exec pods use in its registry and ``pods/exec`` running commands here,
   writes a kubeconfig and points ``KUBECONFIG`` at it: the connection;
4. runs pytest in the venv, writes ``junit.xml`` and ``pytest.log`` to ``--out``, prints its
   summary line, stops the cluster and exits with pytest's code.

CI does not run it (it installs from the package registry); ``--dry-run`` prints the plan.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINS = (
    "jupyterhub-kubespawner==7.1.0",
    "pytest>=8.1,<8.2",
    "pytest-asyncio>=0.21,<0.23",
    "kubernetes==36.0.3",
    "pytest-timeout",
)
#: images the suite's pods use: the test hub pod and the exec pod
SUITE_IMAGES = ("quay.io/jupyterhub/jupyterhub:latest", "python:3.12-slim")
LISTENING = "richprogress-cluster listening on "

# KubeSpawner 7.1.0's pytest settings (its pyproject.toml, beside tests/, not in tests/)
PYTEST_INI = """[pytest]
addopts = --verbose --durations=10
asyncio_mode = auto
norecursedirs = lib lib64
"""

# The one fixture changed: JupyterHub 6's init_internal_ssl needs a running event loop.
SSL_APP_BEFORE = '@pytest.fixture(scope="session")\ndef ssl_app(tmpdir_factory, kube_ns):'
SSL_APP_AFTER = '@pytest_asyncio.fixture(scope="session")\nasync def ssl_app(tmpdir_factory, kube_ns):'


class UsageError(Exception):
    """A wrong argument: the message says which and what to give instead."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/kubespawner_suite.py",
        description="Run KubeSpawner 7.1.0's own tests against the simulated cluster.",
    )
    parser.add_argument("tests", type=Path, help="KubeSpawner's tests/ folder (tag 7.1.0)")
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "richprogress-kubespawner-suite-venv")
    parser.add_argument("--out", type=Path, help="folder for the adapted tests and the logs (default: a new temporary one)")
    parser.add_argument("--speed", type=float, default=10.0, help="the simulated cluster's speed")
    parser.add_argument("--timeout", type=float, default=3600.0, help="the whole run's limit, seconds")
    parser.add_argument("--per-test", type=float, default=150.0, help="one test's limit, seconds")
    parser.add_argument("--dry-run", action="store_true", help="print what would run, run nothing")
    parser.epilog = "Arguments after -- go to pytest (default: every test file, tests)."
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1 :]
    args = parser.parse_args(argv)
    args.pytest_args = extra
    if args.speed <= 0 or args.timeout <= 0 or args.per_test <= 0:
        raise UsageError("--speed, --timeout and --per-test must be positive")
    tests = args.tests
    if not tests.is_dir():
        raise UsageError(f"{tests} is not a folder: give the tests/ folder of KubeSpawner's repository at tag 7.1.0")
    missing = [name for name in ("conftest.py", "test_spawner.py") if not (tests / name).is_file()]
    if missing:
        raise UsageError(
            f"{tests} has no {' or '.join(missing)}: give the tests/ folder of KubeSpawner's repository at tag 7.1.0"
        )
    return args


def adapt_conftest(text: str) -> str:
    """KubeSpawner's conftest with ``ssl_app`` async; fails if the fixture is not as in 7.1.0."""
    if SSL_APP_BEFORE not in text:
        raise UsageError("conftest.py's ssl_app fixture is not the one of KubeSpawner 7.1.0")
    return text.replace(SSL_APP_BEFORE, SSL_APP_AFTER)


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_venv(venv: Path) -> Path:
    python = venv_python(venv)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *PINS], check=True)
    return python


def cluster_command(kubeconfig: Path, speed: float) -> list[str]:
    command = [sys.executable, "-m", "richprogress.demo.cluster", "--port", "0", "--speed", str(speed)]
    command += ["--kubeconfig", str(kubeconfig), "--exec-commands"]
    for image in SUITE_IMAGES:
        command += ["--extra-image", image]
    return command


def pytest_command(python: Path, out: Path, per_test: float, extra: list[str]) -> list[str]:
    return [
        str(python), "-m", "pytest", "-p", "no:cacheprovider", "--timeout", str(int(per_test)),
        "-rfEs", "--junitxml", str(out / "junit.xml"), *(extra or ["tests"]),
    ]


def start_cluster(command: list[str], log: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with open(log, "w") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith(LISTENING):
        process.kill()
        raise RuntimeError(f"the simulated cluster did not start ({line.strip()!r}); see {log}")
    return process


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        out = args.out or Path(tempfile.mkdtemp(prefix="kubespawner-suite-"))
        kubeconfig = out / "kubeconfig.json"
        cluster = cluster_command(kubeconfig, args.speed)
        tests = pytest_command(venv_python(args.venv), out, args.per_test, args.pytest_args)
        if args.dry_run:
            print("venv:", args.venv, "with", " ".join(PINS))
            print("cluster:", " ".join(cluster))
            print("tests:", out / "tests", "(copied from", args.tests, "with ssl_app async)")
            print("pytest:", " ".join(tests))
            return 0
        adapted = adapt_conftest((args.tests / "conftest.py").read_text())
    except UsageError as e:
        print(f"kubespawner_suite: {e}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "tests", ignore_errors=True)
    shutil.copytree(args.tests, out / "tests")
    (out / "tests" / "conftest.py").write_text(adapted)
    (out / "pytest.ini").write_text(PYTEST_INI)
    ensure_venv(args.venv)
    process = start_cluster(cluster, out / "cluster.log")
    try:
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        with open(out / "pytest.log", "w") as log:
            started = time.monotonic()
            try:
                code = subprocess.run(tests, cwd=out, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=args.timeout).returncode
            except subprocess.TimeoutExpired:
                code = 124
            log.write(f"\npytest exit {code} after {time.monotonic() - started:.0f} s\n")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
    lines = (out / "pytest.log").read_text().splitlines()
    print("\n".join(lines[-3:]))
    print(f"logs: {out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
