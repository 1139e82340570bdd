"""What reading failed containers' logs costs the hub's event loop.

A failed spawn on Kubernetes reads the last lines of its container's log
(``richprogress.kube.container_log``: 40 lines, at most 32 KiB asked, 8 KiB kept, redacted).
This script measures, on the hub's side only:

- ``keep``: microseconds of CPU to cut, clean and redact one 8 KiB log (``container_log``),
  the pure part that runs on the loop once the answer is in;
- ``name``: microseconds of CPU to read the kept lines for a cause they name
  (``wording.log_causes.read_log_cause``), on a log that names none (every pattern tried on
  every line: the worst case) and on the demo's crash traceback;
- ``one read``: CPU of one read done alone (kubernetes_asyncio's request and answer, then
  the keeping), what one failed spawn costs;
- ``lag``: how late a 10 ms ticker on the loop wakes (p50, p99, max) while N log reads of
  8 KiB each run at once through kubernetes_asyncio (N spawns failing in the same
  instant), against the loop idle; and how long the N reads took together.

The simulated Kubernetes API runs in a child process (as a real API server is elsewhere),
with N pods whose notebook container has written 40 lines of ~200 bytes (8 KiB) each, one
in four with a token or a password in them.

Usage: ``python benchmarks/container_log.py [--reads 50] [--rounds 5]`` (about half a minute).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).absolute().parents[1]))

from richprogress.kube.container_log import read_container_log  # noqa: E402
from richprogress.story.container_log import container_log  # noqa: E402
from richprogress.wording.log_causes import read_log_cause  # noqa: E402

NAMESPACE = "default"
LINE_BYTES = 200
LINES = 40


def log_text(i: int) -> str:
    """40 lines of about 200 bytes, as a chatty notebook writes them."""
    lines = []
    for n in range(LINES):
        secret = f" JUPYTERHUB_API_TOKEN={os.urandom(16).hex()}" if n % 4 == 0 else ""
        head = f"[I 2026-12-01 10:00:{n:02d}.123 ServerApp] pod {i} line {n}{secret} "
        lines.append((head + "x" * LINE_BYTES)[:LINE_BYTES])
    return "\n".join(lines) + "\n"


def serve(n_pods: int, ready: Any, stop: Any) -> None:
    """The child: a simulated cluster with ``n_pods`` started pods and 8 KiB logs."""
    import aiohttp

    from richprogress.demo.cluster import SCENARIO_ANNOTATION, SimulatedCluster

    async def main() -> None:
        cluster = SimulatedCluster(speed=200)
        url = await cluster.start()
        async with aiohttp.ClientSession(url) as session:
            for i in range(n_pods):
                body = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": f"jupyter-b{i}", "annotations": {SCENARIO_ANNOTATION: "happy-path"}},
                    "spec": {"containers": [{"name": "notebook", "image": "quay.io/jupyterhub/singleuser:latest"}]},
                }
                async with session.post(f"/api/v1/namespaces/{NAMESPACE}/pods", json=body) as r:
                    assert r.status == 201, await r.text()
        for i in range(n_pods):
            while True:
                run = cluster.kubelet.runs.get((NAMESPACE, f"jupyter-b{i}"))
                if run is not None and run.standin is not None:
                    break
                await asyncio.sleep(0.02)
            run.log.lines.clear()
            run.log.write(log_text(i))
        ready.send(url)
        while not stop.poll():
            await asyncio.sleep(0.05)
        await cluster.stop()

    asyncio.run(main())


async def ticker(lags: list[float], until: asyncio.Event, every: float = 0.01) -> None:
    loop = asyncio.get_running_loop()
    while not until.is_set():
        asked = loop.time()
        await asyncio.sleep(every)
        lags.append((loop.time() - asked - every) * 1000)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(url: str, reads: int, rounds: int) -> None:
    from kubernetes_asyncio import client

    configuration = client.Configuration()
    configuration.host = url
    api_client = client.ApiClient(configuration)
    api = client.CoreV1Api(api_client)
    try:
        # the pure part: cut, clean, redact one 8 KiB log
        text = log_text(0)
        repeats = 2000
        began = time.thread_time()
        for _ in range(repeats):
            container_log("notebook", False, text)
        keep_us = (time.thread_time() - began) / repeats * 1e6
        kept = container_log("notebook", False, text)
        print(f"log: {len(text.encode())} bytes, {LINES} lines; kept {sum(len(x) + 1 for x in kept['lines'])} bytes")
        print(f"keep (cut, clean, redact) one 8 KiB log: {keep_us:.0f} us CPU")
        traceback = [*kept["lines"][:-4], "Traceback (most recent call last):", '  File "/opt/conda/bin/x", line 1',
                     "    main()", "ModuleNotFoundError: No module named 'jupyterlab_git'"]
        for label, lines, listening in (("names none", kept["lines"], True), ("a traceback", traceback, False)):
            began = time.thread_time()
            for _ in range(repeats):
                read_log_cause(lines, listening=listening, expected_port=8888)
            name_us = (time.thread_time() - began) / repeats * 1e6
            print(f"name the cause of 40 kept lines ({label}): {name_us:.0f} us CPU")

        idle: list[float] = []
        done = asyncio.Event()
        tick = asyncio.ensure_future(ticker(idle, done))
        await asyncio.sleep(1.0)
        done.set()
        await tick
        print(f"idle loop: ticker lag p50 {quantile(idle, 0.5):.2f} ms, p99 {quantile(idle, 0.99):.2f} ms, max {max(idle):.2f} ms")

        # one read at a time: the CPU one failed spawn's read costs the hub's process
        began = time.thread_time()
        for i in range(reads):
            await read_container_log(api, NAMESPACE, f"jupyter-b{i}", "notebook", False, timeout=10)
        one_ms = (time.thread_time() - began) / reads * 1000
        print(f"one read, alone (request, answer, keep): {one_ms:.2f} ms CPU")

        all_lags: list[float] = []
        walls: list[float] = []
        round_max: list[float] = []
        for _ in range(rounds):
            lags: list[float] = []
            done = asyncio.Event()
            tick = asyncio.ensure_future(ticker(lags, done))
            await asyncio.sleep(0.05)
            began_wall = time.perf_counter()
            found = await asyncio.gather(
                *(read_container_log(api, NAMESPACE, f"jupyter-b{i}", "notebook", False, timeout=10) for i in range(reads))
            )
            walls.append(time.perf_counter() - began_wall)
            done.set()
            await tick
            assert all(f is not None and len(f["lines"]) == LINES for f in found), "a read failed"
            assert not any("TOKEN=" in line and "[redacted]" not in line for f in found if f for line in f["lines"])
            all_lags += lags
            round_max.append(max(lags))
        print(
            f"{reads} reads at once, {rounds} rounds: ticker lag p50 {quantile(all_lags, 0.5):.2f} ms, "
            f"p99 {quantile(all_lags, 0.99):.2f} ms, max {max(all_lags):.2f} ms; "
            f"all {reads} done in {statistics.median(walls) * 1000:.0f} ms (median round)"
        )
        print("worst lag of each round: " + ", ".join(f"{m:.0f} ms" for m in round_max))
    finally:
        await api_client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reads", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    tempfile.tempdir = tempfile.mkdtemp(prefix="richprogress-bench-")
    ready_recv, ready_send = multiprocessing.Pipe(duplex=False)
    stop_recv, stop_send = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("spawn").Process(target=serve, args=(args.reads, ready_send, stop_recv))
    child.start()
    try:
        if not ready_recv.poll(120):
            raise SystemExit("the simulated cluster did not get ready")
        url = ready_recv.recv()
        asyncio.run(measure(url, args.reads, args.rounds))
    finally:
        stop_send.send(True)
        child.join(20)
        if child.is_alive():
            child.kill()


if __name__ == "__main__":
    main()
