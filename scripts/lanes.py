"""Run every check of `scripts/dev test` as jobs, a few at a time, and print where the time went.

A job is one tier of the tests on one lane of versions (``newest``: what ``setup`` installs;
``z2jh``: the versions z2jh 4.x's hub image ships, in ``.venv-z2jh``), JupyterHub's own
suites, or the static checks. The slow tiers mostly wait on hubs, browsers and the simulated
cluster (a browser job uses about half a core), so ``--parallel`` jobs run side by side, the
longest first. Each job has its own pytest ``--basetemp``, JUnit file, log and output folder
(``RICHPROGRESS_TEST_OUTPUT``); every server a test starts takes free ports of its own.

The ``z2jh`` lane runs only the tiers that touch JupyterHub, KubeSpawner, tornado,
SQLAlchemy or prometheus_client (everything but ``unit``, which the import rules keep free of
them), and its browser replays at one speed (``RICHPROGRESS_REPLAY_SPEEDS``).

At the end: the log of every job that failed, then the table of tiers (tests, passed, wall
time per tier and lane), also written to ``test-output/tiers.txt``. Exit status 1 when a
job failed.

    python3 scripts/lanes.py [--parallel 3] [--only NAME ...] [-- pytest args]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from richprogress.demo.processes import PORTS_VARIABLE

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "test-output"
Z2JH_PYTHON = ROOT / ".venv-z2jh" / "bin" / "python"
#: JupyterHub's suites share one event loop per module, as JupyterHub's own settings say
JUPYTERHUB_SUITE_OPTIONS = [
    "-p", "jupyterhub_suites_plugin",
    "-o", "asyncio_default_fixture_loop_scope=module",
    "-o", "asyncio_default_test_loop_scope=module",
    "-W", "ignore::DeprecationWarning",
]  # fmt: skip
#: the ports of the job's servers: a slice each, below the kernel's ephemeral ports (32768-)
PORTS_FROM, PORTS_PER_JOB, EPHEMERAL_FROM = 10000, 1400, 32768
#: the contradiction replays: both speeds on the newest lane, the quick one on z2jh's
ONE_SPEED = "10"
CONTRADICTIONS = "ui-tests/test_contradictions.py"


@dataclass
class Job:
    name: str
    tier: str
    lane: str
    commands: list[list[str]]
    env: dict[str, str] = field(default_factory=dict)
    #: the job whose success this one needs first (the z2jh lane needs its virtualenv)
    after: str | None = None
    junit: list[Path] = field(default_factory=list)
    #: the job's own temporary folder (its pytest runs' --basetemp), made empty at its start
    temp: Path | None = None
    log: Path = OUTPUT / "logs" / "unset.log"
    started: float = 0.0
    wall: float = 0.0
    returncode: int | None = None

    @property
    def slug(self) -> str:
        return self.name.replace(" ", "-").replace("/", "-")


def pytest_job(lane: str, tier: str, paths: Sequence[str], extra: Sequence[str], *,
               name: str | None = None, env: dict[str, str] | None = None) -> Job:
    python = str(Z2JH_PYTHON) if lane == "z2jh" else sys.executable
    job = Job(name or f"{lane} {tier}", tier, lane, [], dict(env or {}),
              after="z2jh virtualenv" if lane == "z2jh" else None)
    job.junit = [OUTPUT / "junit" / f"{job.slug}.xml"]
    job.commands = [[python, "-m", "pytest", "-m", tier, *paths, "-q", "-rfEs",
                     f"--junitxml={job.junit[0]}", f"--basetemp={basetemp(job)}", *extra]]
    job.env.setdefault("RICHPROGRESS_TEST_OUTPUT", str(OUTPUT / lane))
    if lane == "z2jh":
        job.env["PATH"] = f"{Z2JH_PYTHON.parent}{os.pathsep}{os.environ['PATH']}"
        job.env["VIRTUAL_ENV"] = str(Z2JH_PYTHON.parents[1])
    return job


def basetemp(job: Job) -> Path:
    # one pytest temporary folder per job: pytest removes older numbered folders, which
    # another job running beside it may still be using
    job.temp = Path(tempfile.gettempdir()) / "richprogress-tests" / job.slug
    return job.temp


def jupyterhub_suites(extra: Sequence[str]) -> Job:
    job = Job("newest jupyterhub-suites", "jupyterhub", "newest", [])
    job.junit = [OUTPUT / "junit" / "jupyterhub-pages.xml", OUTPUT / "junit" / "jupyterhub-slowspawner.xml"]
    temp = basetemp(job)
    job.commands = [
        [sys.executable, "-m", "pytest", *JUPYTERHUB_SUITE_OPTIONS, "-rfEs", "-q",
         f"--junitxml={job.junit[0]}", f"--basetemp={temp}/pages", *extra,
         "--pyargs", "jupyterhub.tests.test_pages", "jupyterhub.tests.browser.test_browser"],
        [sys.executable, "-m", "pytest", *JUPYTERHUB_SUITE_OPTIONS, "-rfEs", "-q",
         "-p", "jupyterhub.tests.conftest", "-p", "jupyterhub.tests.browser.conftest",
         f"--junitxml={job.junit[1]}", f"--basetemp={temp}/slowspawner", *extra,
         "tests/jupyterhub_suites_slowspawner.py"],
    ]  # fmt: skip
    tests = str(ROOT / "tests")
    job.env["PYTHONPATH"] = os.pathsep.join(filter(None, [tests, str(ROOT), os.environ.get("PYTHONPATH")]))
    return job


def all_jobs(extra: Sequence[str]) -> list[Job]:
    """Every job, the longest first (as measured on a 2-core machine with a core kept busy:
    browser jobs 11-16 min, hub 7-8, JupyterHub's suites 7-9, postgres 3-4, the rest 2 or less)."""
    quick = {"RICHPROGRESS_REPLAY_SPEEDS": ONE_SPEED}
    return [
        pytest_job("newest", "browser", [CONTRADICTIONS], extra, name="newest browser/replays"),
        pytest_job("newest", "browser", ["ui-tests", f"--ignore={CONTRADICTIONS}"], extra),
        Job("z2jh virtualenv", "setup", "z2jh", [[str(ROOT / "scripts" / "dev"), "z2jh-venv"]]),
        pytest_job("z2jh", "browser", ["ui-tests"], extra, env=quick),
        pytest_job("newest", "hub", ["tests"], extra),
        jupyterhub_suites(extra),
        pytest_job("z2jh", "hub", ["tests"], extra),
        pytest_job("newest", "postgres", ["tests"], extra),
        pytest_job("z2jh", "postgres", ["tests"], extra),
        pytest_job("newest", "cluster", ["tests"], extra),
        pytest_job("z2jh", "cluster", ["tests"], extra),
        pytest_job("newest", "stack", ["tests"], extra),
        pytest_job("z2jh", "stack", ["tests"], extra),
        pytest_job("newest", "unit", ["tests"], extra),
        Job("newest checks", "checks", "newest", [
            [sys.executable, "-m", "ruff", "check", "conftest.py", "richprogress", "tests", "ui-tests", "benchmarks", "scripts"],
            [sys.executable, "-m", "mypy"],
            ["lint-imports"],
            [str(ROOT / "scripts" / "dev"), "docs"],
        ]),
    ]  # fmt: skip


def start(job: Job) -> subprocess.Popen[bytes]:
    job.log.parent.mkdir(parents=True, exist_ok=True)
    for junit in job.junit:
        junit.unlink(missing_ok=True)
    if job.temp is not None:
        shutil.rmtree(job.temp, ignore_errors=True)
        # pytest makes its --basetemp itself, but not that folder's parent (a job of
        # several pytest runs gives each a folder inside its own)
        job.temp.mkdir(parents=True)
    # the commands one after another in one shell, stopping at the first that fails (a
    # pytest that selected no test, exit 5, is not a failure: `--only` with `-k` may do
    # that); each job in a process group of its own
    steps = [shlex.join(command) + (" || [ $? -eq 5 ]" if "pytest" in command else "")
             for command in job.commands]
    job.started = time.monotonic()
    return subprocess.Popen(
        ["bash", "-c", "set -e\n" + "\n".join(steps)],
        cwd=ROOT, env={**os.environ, **job.env}, stdout=job.log.open("wb"),
        stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip


def counts(job: Job) -> tuple[int, int, int, int] | None:
    """(tests, passed, failed, skipped) from the job's JUnit files; None when it ran no pytest."""
    if not job.junit:
        return None
    tests = failed = skipped = 0
    for junit in job.junit:
        if not junit.is_file():
            continue
        root = ET.parse(junit).getroot()
        for suite in root.iter("testsuite"):
            tests += int(suite.get("tests", 0))
            failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            skipped += int(suite.get("skipped", 0))
    return tests, tests - failed - skipped, failed, skipped


def minutes(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60:02d} s" if whole >= 60 else f"{whole} s"


def table(jobs: Sequence[Job], total: float, parallel: int) -> str:
    rows = [("tier", "lane", "tests", "passed", "failed", "skipped", "wall", "")]
    order = ["checks", "setup", "unit", "stack", "cluster", "hub", "postgres", "browser", "jupyterhub"]
    for job in sorted(jobs, key=lambda j: (j.lane, order.index(j.tier) if j.tier in order else 99, j.name)):
        numbers = counts(job)
        shown = [str(n) for n in numbers] if numbers else ["-"] * 4
        status = "" if job.returncode == 0 else ("not run" if job.returncode is None else "FAILED")
        tier = job.name.split(" ", 1)[1] if job.name != f"{job.lane} {job.tier}" else job.tier
        rows.append((tier, job.lane, *shown, minutes(job.wall) if job.started else "-", status))
    ran = [counts(j) for j in jobs]
    sums = [sum(c[i] for c in ran if c) for i in range(4)]
    rows.append(("all", "both", *map(str, sums), minutes(total), f"wall clock, {parallel} at a time"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row[:-1], widths[:-1], strict=True))]
        lines.append("  ".join(cells + [row[-1]]).rstrip())
    return "\n".join(lines) + "\n"


def schedule(jobs: list[Job], waiting: list[Job], running: dict[str, tuple[Job, subprocess.Popen[bytes]]],
             done: dict[str, Job], parallel: int, began: float) -> None:
    """Start jobs while fewer than ``parallel`` run, in the order given; say each end."""
    while waiting or running:
        for job in list(waiting):
            if len(running) >= parallel:
                break
            if job.after and job.after in {j.name for j in jobs} and job.after not in done:
                continue
            waiting.remove(job)
            if job.after and job.after in done and done[job.after].returncode != 0:
                print(f"== {job.name}: not run ({job.after} failed)", flush=True)
                done[job.name] = job
                continue
            print(f"== {job.name}: started ({minutes(time.monotonic() - began)} in)", flush=True)
            running[job.name] = (job, start(job))
        time.sleep(0.5)
        for name, (job, process) in list(running.items()):
            if process.poll() is None:
                continue
            job.returncode, job.wall = process.returncode, time.monotonic() - job.started
            del running[name]
            done[name] = job
            numbers = counts(job)
            said = f"{numbers[1]} passed, {numbers[2]} failed, {numbers[3]} skipped" if numbers else ""
            verdict = "ok" if job.returncode == 0 else f"FAILED (exit {job.returncode})"
            print(f"== {job.name}: {verdict} in {minutes(job.wall)} {said}".rstrip(), flush=True)


def give_ports(jobs: Sequence[Job]) -> None:
    """Each job's servers on ports of its own (``richprogress.demo.processes.free_port``)."""
    if PORTS_FROM + len(jobs) * PORTS_PER_JOB > EPHEMERAL_FROM:
        raise ValueError(f"{len(jobs)} jobs of {PORTS_PER_JOB} ports do not fit below {EPHEMERAL_FROM}")
    for index, job in enumerate(jobs):
        first = PORTS_FROM + index * PORTS_PER_JOB
        job.env.setdefault(PORTS_VARIABLE, f"{first}-{first + PORTS_PER_JOB - 1}")


def run(jobs: list[Job], parallel: int, output: Path = OUTPUT) -> int:
    """Run ``jobs``, print the logs of those that failed and the table; 0 when all passed."""
    began = time.monotonic()
    waiting = list(jobs)
    running: dict[str, tuple[Job, subprocess.Popen[bytes]]] = {}
    done: dict[str, Job] = {}
    give_ports(jobs)
    for job in jobs:
        job.log = output / "logs" / f"{job.slug}.log"
    try:
        schedule(jobs, waiting, running, done, parallel, began)
    finally:
        for job, process in running.values():  # interrupted: take each job's servers down
            os.killpg(process.pid, signal.SIGTERM)
            job.returncode = process.wait()
    total = time.monotonic() - began
    for job in jobs:
        if job.returncode not in (0, None) and job.log.is_file():
            print(f"\n== log of {job.name} ({job.log}), its last 400 lines:")
            print("\n".join(job.log.read_text(errors="replace").splitlines()[-400:]))
    summary = table(jobs, total, parallel)
    output.mkdir(parents=True, exist_ok=True)
    (output / "tiers.txt").write_text(summary)
    print(f"\n== tiers ({output / 'tiers.txt'})\n" + summary, end="")
    return 0 if all(job.returncode == 0 for job in jobs) else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parallel", type=int, default=int(os.environ.get("RICHPROGRESS_TEST_PARALLEL", "3")),
                        help="jobs at a time (default 3, or RICHPROGRESS_TEST_PARALLEL)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only the jobs whose name contains NAME (repeatable), e.g. 'z2jh', 'newest unit'")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to every pytest")
    args = parser.parse_args(argv)
    # configurable-http-proxy, as scripts/dev puts it on the PATH
    os.environ["PATH"] = f"{ROOT / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}"
    jobs = all_jobs(args.pytest_args)
    if args.only:
        jobs = [job for job in jobs if any(word in job.name for word in args.only)]
        names = {job.name for job in jobs}
        needed = [job for job in all_jobs(args.pytest_args) if any(j.after == job.name for j in jobs)]
        jobs = [job for job in needed if job.name not in names] + jobs
    if not jobs:
        parser.error(f"no job matches {args.only}")
    return run(jobs, max(1, args.parallel))


if __name__ == "__main__":
    sys.exit(main())
