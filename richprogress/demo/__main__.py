"""``python -m richprogress.demo``: a JupyterHub with richprogress on a simulated cluster.

Starts the simulated Kubernetes API, JupyterHub (dummy login, ``RichKubeSpawner``, one
profile per scenario) and configurable-http-proxy on 127.0.0.1, prints the URL, and runs
until Ctrl-C or SIGTERM, then stops everything it started. The hub's log, whose path it
printed, stays where it was; the rest of the temporary folder is removed.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from .hub import DemoHub, DemoHubError
from .replay_setup import (
    ReplayError,
    check_config,
    load_replay,
    replay_start_timeout,
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m richprogress.demo",
        description="Run a JupyterHub with richprogress on a simulated Kubernetes cluster.",
    )
    parser.add_argument("--port", type=int, default=8000, help="public port (default 8000)")
    parser.add_argument(
        "--speed",
        type=float,
        default=10.0,
        help="how many times faster than a real cluster the scenarios run (default 10)",
    )
    parser.add_argument("--base-url", default="/", help="JupyterHub's base_url (default /)")
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=None,
        help="seconds before a spawn gives up (default: from the speed, 30 at speed 10)",
    )
    parser.add_argument(
        "--state-dir",
        default=None,
        metavar="DIR",
        help="keep the hub database, cookie secret and spawn history in DIR, so that a rerun "
        "with the same DIR is a hub restart (default: a temporary folder, removed on exit "
        "but for the logs)",
    )
    parser.add_argument(
        "--history-url",
        default=None,
        metavar="URL",
        help="SQLAlchemy URL of the spawn history database, e.g. "
        "postgresql://user@127.0.0.1/richprogress (default: a SQLite file in the hub's folder)",
    )
    parser.add_argument(
        "--replay",
        default=None,
        metavar="FILE",
        help="play your own spawn's events: a `kubectl get events -o json` dump (a List, a "
        "JSON array or JSON lines), at their own times divided by --speed, as the spawn "
        "form's first profile",
    )
    parser.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="a jupyterhub_config.py of yours, loaded after the demo's (your c.EventFormatter "
        "rules, a pre_spawn_hook that calls richprogress.note)",
    )
    args = parser.parse_args(argv)
    if args.speed <= 0:
        parser.error("--speed must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # the files first: bad input gets one line before any server starts
    extra_config = ""
    replay = None
    try:
        if args.replay is not None:
            replay = load_replay(args.replay)
            if args.start_timeout is None:
                args.start_timeout = replay_start_timeout(replay, args.speed)
        if args.config is not None:
            extra_config += f"load_subconfig({str(check_config(args.config))!r})\n"
    except ReplayError as error:
        prefix = "" if str(error).startswith("--config") or args.replay is None else "--replay "
        print(f"richprogress demo: {prefix}{error}", file=sys.stderr, flush=True)
        return 2
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    # Ctrl-C and SIGTERM both mean: stop everything, then exit. The children run in their
    # own process groups, so the terminal's Ctrl-C reaches only us and we stop them in order.
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)

    hub = DemoHub(
        port=args.port,
        speed=args.speed,
        base_url=args.base_url,
        start_timeout=args.start_timeout,
        workdir=args.state_dir,
        history_url=args.history_url,
        # the log path printed below must still hold the log after Ctrl-C
        keep_logs=True,
        extra_config=extra_config,
        replay=args.replay,
    )
    print(f"Starting the richprogress demo (speed x{args.speed:g})...", flush=True)
    try:
        url = hub.start()
    except DemoHubError as error:
        print(f"richprogress demo: {error}", file=sys.stderr, flush=True)
        return 1
    status = 0
    try:
        if stop.is_set():
            return 130
        if replay is not None:
            what = (
                f'Start the first profile, "Replay: {Path(args.replay).name}": {replay.events} events of '
                f"{replay.pod} over {replay.duration:g} s, played at x{args.speed:g}"
                + (f" ({replay.skipped} events of other objects left out)" if replay.skipped else "")
                + "."
            )
        else:
            what = "Pick a scenario in the spawn form (image-not-found shows a failure)."
        print(
            f"Open {url} and log in with any name and password.\n"
            f"{what}\n"
            f"Press Ctrl-C to stop. (hub log: {hub.log_path})"
            + (f"\nState is kept in {hub.workdir}: run again with --state-dir to restart the hub." if args.state_dir else ""),
            flush=True,
        )
        while not stop.wait(0.5):
            problem = hub.problem()
            if problem:
                print(f"richprogress demo: {problem}", file=sys.stderr, flush=True)
                status = 1
                break
        print("Stopping the demo...", flush=True)
    finally:
        hub.stop()
        print(f"Stopped. The hub log is kept in {hub.log_path}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
