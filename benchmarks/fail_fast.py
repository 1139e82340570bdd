"""Fail-fast in the demo: how soon a hopeless spawn ends, and that no other spawn is stopped.

What is measured, exactly:

- A ``DemoHub`` (real JupyterHub, configurable-http-proxy, RichKubeSpawner, simulated
  cluster) at ``--speed``, with the demo's start timeout for that speed and fail-fast's
  hold scaled by the speed (as ``python -m richprogress.demo`` does).
- ``to failure``: wall seconds from the spawn request (the REST call the spawn form's Start
  button makes) to the hub's ``failed`` event on the progress stream (the event on which
  the pending page turns into the failure). Read with the same SSE request as the page.
- ``after 1st fail``: seconds from the first fatal event (its ``first_timestamp``, which
  Kubernetes stamps to the whole second, so up to 1 s more) to the end of the spawn.
- ``stopped early``: whether fail-fast ended it (``stopped_early`` in the timeline JSON)
  rather than the start timeout.
- False stops: every scenario that succeeds on a real cluster, ``--runs`` rounds, all
  scenarios of a round at once; a false stop is a spawn with ``stopped_early`` set or one
  that did not become ready.

Usage: ``python benchmarks/fail_fast.py --speed 10 --runs 5``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import urllib.error
from typing import Any

import aiohttp

from richprogress.demo.hub import DemoHub
from richprogress.model.times import parse_timestamp

HOPELESS = {
    "image-not-found": {"profile": "image-not-found"},
    "typed missing image": {"profile": "custom-image", "image": "unlisted-choice",
                            "image--unlisted-choice": "quay.io/someone/no-such-image:1"},
}
CAN_SUCCEED = ["happy-path", "scale-up", "volume-provisioning", "flaky-pull"]


def create_user(hub: DemoHub, name: str) -> None:
    try:
        hub.api("POST", f"users/{name}")
    except urllib.error.HTTPError as error:
        if error.code != 409:
            raise


async def spawn(hub: DemoHub, name: str, body: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """Request a spawn, read its progress stream to the end; (seconds, last event)."""
    create_user(hub, name)
    started = time.monotonic()
    await asyncio.to_thread(hub.api, "POST", f"users/{name}/server", body)
    last: dict[str, Any] = {}
    url = f"{hub.url}hub/api/users/{name}/server/progress"
    timeout = aiohttp.ClientTimeout(total=3600)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with session.get(url, headers={"Authorization": f"token {hub.api_token}"}) as response:
            async for raw in response.content:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    last = json.loads(line[5:])
    return time.monotonic() - started, last


def timeline(hub: DemoHub, name: str) -> dict[str, Any]:
    return hub.api("GET", f"richprogress/users/{name}/timeline")  # type: ignore[return-value]


async def measure(speed: float, runs: int, fatal_runs: int) -> None:
    with DemoHub(speed=speed) as hub:
        print(f"speed {speed:g}: start timeout {hub.start_timeout:g} s, fail-fast hold {60 / speed:g} s")
        print(f"  {'scenario':22} {'to failure':>11} {'after 1st fail':>15} {'stopped early':>14}")
        for label, body in HOPELESS.items():
            for run in range(fatal_runs):
                name = f"{label.split()[0]}-{int(speed)}-{run}"
                took, last = await spawn(hub, name, dict(body))
                data = timeline(hub, name)
                started = parse_timestamp(data["started"])
                first = next((parse_timestamp(r["first_timestamp"]) for r in data["records"] if r.get("fatal")), None)
                # Kubernetes stamps to the second: the first failure happened within that second
                after = data["elapsed"] - (first - started).total_seconds() if first and started else float("nan")
                early = data["stopped_early"] is not None and bool(last.get("failed"))
                print(f"  {label:22} {took:10.1f}s {after:14.1f}s {str(early):>14}")
        stops = 0
        total = 0
        for run in range(runs):
            names = [f"{p.replace('-', '')}-{int(speed)}-{run}" for p in CAN_SUCCEED]
            results = await asyncio.gather(
                *(spawn(hub, n, {"profile": p}) for n, p in zip(names, CAN_SUCCEED, strict=True))
            )
            for name, profile, (_took, last) in zip(names, CAN_SUCCEED, results, strict=True):
                total += 1
                data = timeline(hub, name)
                if data["stopped_early"] is not None or not last.get("ready"):
                    stops += 1
                    print(f"  FALSE STOP: {profile} run {run}: {data['stopped_early']} {last}")
                await asyncio.to_thread(hub.api, "DELETE", f"users/{name}/server")
        print(f"  false stops: {stops} of {total} spawns ({runs} rounds of {', '.join(CAN_SUCCEED)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", type=float, default=10.0)
    parser.add_argument("--runs", type=int, default=5, help="rounds of the scenarios that can succeed")
    parser.add_argument("--fatal-runs", type=int, default=2, help="runs of each hopeless scenario")
    args = parser.parse_args()
    asyncio.run(measure(args.speed, args.runs, args.fatal_runs))


if __name__ == "__main__":
    main()
