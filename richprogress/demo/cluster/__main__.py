"""Run the simulated cluster as a process.

``python -m richprogress.demo.cluster --host 127.0.0.1 --port 0 --speed 10 --kubeconfig PATH``
prints one line, ``richprogress-cluster listening on http://HOST:PORT``, and runs until
SIGTERM or SIGINT, then stops its notebook stand-ins.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from .cluster import SimulatedCluster
from .replay import REPLAY_SCENARIO, ReplayError, load_replay
from .scenarios import builtin_registry


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m richprogress.demo.cluster",
        description="A simulated Kubernetes API server that plays spawn scenarios.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    parser.add_argument("--port", type=int, default=0, help="port (0: pick a free one)")
    parser.add_argument("--speed", type=float, default=1.0, help="divide simulated delays by this")
    parser.add_argument("--kubeconfig", help="write a kubeconfig pointing at the server here")
    parser.add_argument(
        "--forget-events-on-delete",
        action="store_true",
        help="drop a pod's events when it is deleted (real clusters keep them ~1 h)",
    )
    parser.add_argument(
        "--extra-image",
        action="append",
        default=[],
        metavar="IMAGE",
        help="an image the simulated registry also holds (plays happy-path); repeatable",
    )
    parser.add_argument(
        "--exec-commands",
        action="store_true",
        help="let pods/exec run commands on this machine with the pod's env (KubeSpawner's tests)",
    )
    rates = parser.add_mutually_exclusive_group()
    rates.add_argument(
        "--real-event-rates",
        dest="real_event_rates",
        action="store_true",
        default=True,
        help="write events as client-go's recorders do: throttled, merged, late, expiring after 1 h (the default)",
    )
    rates.add_argument(
        "--every-event",
        dest="real_event_rates",
        action="store_false",
        help="write every occurrence of an event at once instead (a repeat bumps its count)",
    )
    parser.add_argument(
        "--replay",
        metavar="FILE",
        help="a `kubectl get events -o json` dump: pods annotated with the scenario "
        "'replay' play its events at their own times (replay.py)",
    )
    parser.add_argument("--log-level", default="WARNING", help="Python logging level")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> None:
    registry = sorted(builtin_registry()) + args.extra_image if args.extra_image else None
    cluster = SimulatedCluster(
        args.speed,
        forget_events_on_delete=args.forget_events_on_delete,
        registry=registry,
        exec_commands=args.exec_commands,
        real_event_rates=args.real_event_rates,
    )
    if args.replay:
        cluster.scenarios[REPLAY_SCENARIO] = load_replay(args.replay).scenario
    url = await cluster.start(args.host, args.port)
    if args.kubeconfig:
        cluster.write_kubeconfig(args.kubeconfig)
    print(f"richprogress-cluster listening on {url}", flush=True)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    try:
        await stopping.wait()
    finally:
        await cluster.stop()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    try:
        asyncio.run(run(args))
    except ReplayError as e:
        print(f"richprogress-cluster: --replay {e}", file=sys.stderr)
        return 2
    except OSError as e:  # e.g. the port is taken: one clear line, no traceback
        print(f"richprogress-cluster: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
