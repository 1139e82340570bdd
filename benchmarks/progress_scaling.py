"""Progress streaming at scale: stock ``KubeSpawner.progress()`` vs ``RichKubeSpawner``.

What is measured, exactly:

- One hub event loop (this process) with N spawns pending at once, each with one open
  progress stream (a consumer of ``spawner.progress()``, as JupyterHub's SSE handler is),
  and E unrelated Pod events already in the namespace (old pods' events, as a busy
  namespace keeps for an hour).
- Events reach the events reflector exactly the way KubeSpawner's watch loop delivers
  them: ``reflector.resources[key] = event`` (the watch's HTTP read and JSON parsing are
  skipped: that code is the same reflector code for both spawners, so it would add the
  same cost to both columns). Each pending spawn gets K new events for its pod, spread
  evenly over the measuring window.
- ``cpu/wall``: process CPU seconds divided by wall seconds over the measured window.
  Everything in the process counts: the feeding, the reflector, the progress generators,
  formatting (ours runs the real formatter and rules), timeline bookkeeping.
- ``progress``: ``cpu/wall`` minus a *base*, the same feeding with no progress work: the
  CPU spent on progress. The ratio line uses it. The base differs by side, because the
  two sides spend their CPU differently:

  - ours (cost per event of a watched pod): an *in-run* base. The window is cut into
    ``SLICES`` (10) measured slices, each right after a base slice of the same length in
    which as many look-alike events are fed, at the same rate, into a plain dict instead
    of the reflector, in the same process with the same spawns and streams open (idle).
    Base and measured slices thus see the same machine state a second apart, so a noisy
    neighbour or a slow spell shows in both and cancels, where two separate runs'
    difference (ours costs about as much as the feeding alone) could swing the ratio by
    half. A rich run therefore takes two windows of wall time.
  - stock (cost per open stream per second, whatever is fed): a separate ``base`` run per
    N in a fresh loop (events put into a plain dict at the same times); an in-run base
    would contain stock's own polling.
- ``us/ev``: CPU microseconds per event fed in the measured window, feeding included;
  ``base``: the same for the base's feeding alone. Ours' progress cost per event is their
  difference (printed after the table), which, unlike ``progress``, does not depend on
  the event rate.
- One event loop cannot use more than 1.0; when stock saturates, ``demand`` says how much
  it would need: N x (CPU of one ``self.events`` read at this E), since each stock stream
  reads it once a second. For ours ``demand`` is ``progress``.
- The event rate matters for ours (its cost is per event of a watched pod) and not for
  stock (its cost is per open stream per second per event in the namespace): the header
  prints it. 3 events per stream per 10 s is a busy spawn wave (a happy-path spawn has 5
  events in ~4 s, a scale-up about 12 in 3 minutes).
- ``p50``/``p99``: from the moment an event is put into the reflector to the moment the
  progress generator yields it (stock: the event dict; ours: the record). ``delivered`` is
  the share of fed events that came out before the drain deadline.
- Sweeps (E = 30,000): N = 10, 100, 300, 1000 open streams with R = 3 records per
  timeline, then R = 100 and 450 records per timeline at N = 100 (the records beyond the
  window's 3 are fed and delivered before it: a long spawn, a reader on a long timeline).
  Stock runs at N <= 300 only, at R = 3: it saturates the loop from N = 300 on.
  ``prog/ev`` is ours' progress CPU per event (``us/ev`` minus its in-run base), the
  figure the goal (<= 60 us, flat in N and R) is judged on.
- Memory: after the spawns finish, the index's subscriptions left behind (must be 0) and
  records kept per finished spawn's timeline (bounded by ``spawn_timeline_max_records``).

The spawners are real (``KubeSpawner(_mock=True)`` / ``RichKubeSpawner(_mock=True)``);
only ``_start`` is replaced by a stand-in that loads options, "creates" the pod in the
pods reflector and waits until the benchmark ends the spawn.

At the ratio's point (E=30,000, N=300) ours runs ``--repeats`` times (each with its in-run
base) and the run with the median ``progress`` is reported.

Usage: ``python benchmarks/progress_scaling.py [--quick] [--window SECONDS] [--per-stream K]
[--repeats R] [--followed-kinds F]`` (about 7 minutes; ``--quick``: N = 10 and 300 only). To measure another
checkout with the same script, put it first on ``PYTHONPATH``. Where the time goes:
``benchmarks/profile_progress.py`` (cProfile on the same rich case).
The last line is ``ratio_cpu_e30000_n300=<stock progress / ours progress>`` (measured, so
with stock saturated it understates stock's need; the demand ratio is printed above it).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

NAMESPACE = "default"
PER_STREAM = 3  # default new events per pending spawn during the window (--per-stream)
#: --followed-kinds: custom kinds each spawner follows (``followed_objects``), each
#: with its own events reflector holding E/10 old events of other objects of that kind; the
#: Pod events reflector then also indexes events by their related pod (as by default)
FOLLOWED_KINDS = 0
#: ours: the window is cut into this many measured slices, each right after a base slice
SLICES = 10


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _event(pod: str, pod_uid: str, reason: str, message: str, when: datetime, n: int) -> dict[str, Any]:
    stamp = _iso(when)
    return {
        "kind": "Event",
        "apiVersion": "v1",
        "metadata": {
            "name": f"{pod}.{uuid.uuid4().hex[:16]}",
            "namespace": NAMESPACE,
            "uid": str(uuid.uuid4()),
            "resourceVersion": str(n),
            "creationTimestamp": stamp,
        },
        "involvedObject": {"kind": "Pod", "namespace": NAMESPACE, "name": pod, "uid": pod_uid, "apiVersion": "v1"},
        "reason": reason,
        "message": message,
        "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "reportingComponent": "kubelet",
        "reportingInstance": "node-1",
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "eventTime": None,
        "count": 1,
    }


STEPS = [
    ("Scheduled", "Successfully assigned default/{pod} to node-1"),
    ("Pulling", 'Pulling image "quay.io/jupyter/base-notebook:latest"'),
    ("Pulled", 'Successfully pulled image "quay.io/jupyter/base-notebook:latest" in 2.1s'),
    ("Created", "Created container: notebook"),
    ("Started", "Started container notebook"),
]


def background_events(count: int) -> dict[str, Any]:
    """``count`` events of 500 old pods, from the last hour."""
    now = datetime.now(timezone.utc)
    resources = {}
    for n in range(count):
        pod = f"jupyter-old-{n % 500}"
        reason, message = STEPS[n % len(STEPS)]
        event = _event(pod, f"old-{n % 500}", reason, message.format(pod=pod), now - timedelta(seconds=3600 - n % 3000), n)
        resources[f"{NAMESPACE}/{event['metadata']['name']}"] = event
    return resources


def fake_user(name: str, user_id: int) -> SimpleNamespace:
    return SimpleNamespace(name=name, id=user_id, url=f"/user/{name}/", escaped_name=name)


@dataclass
class Result:
    impl: str
    events: int
    streams: int
    wall: float
    cpu: float
    demand: float
    latencies: list[float] = field(default_factory=list)
    fed: int = 0
    notes: str = ""
    #: ``cold`` runs: per event, thread CPU microseconds of the reflector write (the inline
    #: handling) and from its return to the record leaving ``progress()`` (the reader's wake-up)
    cold_write: list[float] = field(default_factory=list)
    cold_reader: list[float] = field(default_factory=list)

    base: float = 0.0
    #: events fed in the base's own measurement and its CPU seconds (ours: the in-run base)
    base_fed: int = 0
    base_cpu: float = 0.0

    @property
    def us_per_event(self) -> float:
        """CPU per fed event over the measured window, feeding included (microseconds)."""
        return self.cpu / self.fed * 1e6 if self.fed else 0.0

    @property
    def base_us_per_event(self) -> float:
        """CPU per event of the base (feeding alone) at the same rate (microseconds)."""
        return self.base_cpu / self.base_fed * 1e6 if self.base_fed else 0.0

    @property
    def cpu_per_wall(self) -> float:
        return self.cpu / self.wall if self.wall else 0.0

    @property
    def progress(self) -> float:
        """CPU/wall spent on progress: the run minus feeding alone (never below 0.0001)."""
        return max(self.cpu_per_wall - self.base, 0.0001)

    def pct(self, q: float) -> float | None:
        if not self.latencies:
            return None
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _classes() -> tuple[type, type]:
    from kubespawner import KubeSpawner

    from richprogress.kube.spawner import RichKubeSpawner

    class StockBench(KubeSpawner):
        reflectors: dict[Any, Any] = {}
        bench_done: asyncio.Future[None]

        async def _start(self) -> str:
            await self.bench_done
            return "http://127.0.0.1:1"

    class RichBench(RichKubeSpawner):
        reflectors: dict[Any, Any] = {}
        bench_done: asyncio.Future[None]
        bench_uid = ""

        async def _start(self) -> str:
            await self.load_user_options()
            if self._rp_filter is not None:
                self._rp_filter.creating_pod(None)
            pod = {
                "metadata": {
                    "name": self.pod_name,
                    "namespace": self.namespace,
                    "uid": self.bench_uid,
                    "resourceVersion": "1",
                    "creationTimestamp": _iso(datetime.now(timezone.utc)),
                },
                "status": {"phase": "Pending"},
            }
            self.pod_reflector.resources[f"{self.namespace}/{self.pod_name}"] = pod
            await self.bench_done
            return "http://127.0.0.1:1"

    return StockBench, RichBench


async def feed_only(n_streams: int, window: float, per_stream: int) -> tuple[float, float, int]:
    """Feeding the same number of events, at the same times, into a plain dict with
    nothing listening, in a fresh loop: stock's base. Returns CPU/wall, CPU seconds and
    the number of events fed."""
    now = datetime.now(timezone.utc)
    feed = [
        _event(f"jupyter-user{i}", f"pod-uid-{i}", "Pulling", "Pulling image", now, k * n_streams + i)
        for k in range(per_stream)
        for i in range(n_streams)
    ]
    resources: dict[str, Any] = {}
    interval = window / len(feed)
    gc.collect()
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    for n, event in enumerate(feed):
        delay = wall0 + n * interval - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        resources[event["metadata"]["name"]] = event
    remaining = wall0 + window - time.perf_counter()
    if remaining > 0:
        await asyncio.sleep(remaining)
    cpu = time.process_time() - cpu0
    return cpu / (time.perf_counter() - wall0), cpu, len(feed)


async def run_one(
    impl: str,
    n_events: int,
    n_streams: int,
    window: float,
    per_stream: int = PER_STREAM,
    profiler: Any = None,
    records: int = 0,
    cold: bool = False,
) -> Result:
    """One measured run; ``records``: records each timeline holds at the window's end
    (``records - per_stream`` are fed and delivered before the window; ours only).
    ``cold``: flush the CPU caches before each measured event and time each event's own
    thread CPU (``benchmarks/lone_event.py``)."""
    from kubespawner.spawner import EventReflector

    from richprogress.kube.spawner import IndexedEventReflector, IndexedPodReflector

    stock_cls, rich_cls = _classes()
    rich = impl == "rich"
    cls = rich_cls if rich else stock_cls
    loop = asyncio.get_running_loop()
    # ours keeps its default patience timer (30 s): it wakes nothing within the window
    from traitlets.config import Config

    # one config object for all spawners, as JupyterHub passes its own to each spawner
    traits: dict[str, Any] = {"k8s_api_host": "http://127.0.0.1:9", "start_timeout": 3600, "config": Config()}
    if rich:
        traits["followed_objects"] = [{"kind": f"Kind{j}", "name": "{pod_name}"} for j in range(FOLLOWED_KINDS)]
        traits["follow_related_events"] = bool(FOLLOWED_KINDS)
    spawners = [cls(_mock=True, user=fake_user(f"user{i}", i), **traits) for i in range(n_streams)]

    # the reflectors, loaded with the namespace's old events, as after their first list
    def make(reflector_class: Any, **kwargs: Any) -> Any:
        reflector = reflector_class(parent=spawners[0], namespace=NAMESPACE, **kwargs)
        reflector.first_load_future.set_result(None)
        return reflector

    background = background_events(n_events)
    if rich:
        from richprogress.kube.followed import FollowedEventReflector, RelatedPodEventReflector

        events_class = RelatedPodEventReflector if FOLLOWED_KINDS else IndexedEventReflector
        events = make(events_class, fields={"involvedObject.kind": "Pod"})
        events.adopt(background)
        for j in range(FOLLOWED_KINDS):
            kind = f"Kind{j}"
            followed = make(FollowedEventReflector, fields={"involvedObject.kind": kind})
            old_ones = background_events(n_events // 10)
            for event in old_ones.values():
                event["involvedObject"] = {**event["involvedObject"], "kind": kind, "apiVersion": "example.org/v1"}
            followed.adopt(old_ones)
            cls.reflectors[(f"followed-events:{kind}", NAMESPACE)] = followed
        pvc = make(IndexedEventReflector, fields={"involvedObject.kind": "PersistentVolumeClaim"})
        pvc.adopt({})
        pods = make(IndexedPodReflector, labels={"component": "singleuser-server"})
        pods.adopt({})
        cls.reflectors.update({("events", NAMESPACE): events, ("pvc-events", NAMESPACE): pvc, ("pods", NAMESPACE): pods})
    else:
        events = make(EventReflector, fields={"involvedObject.kind": "Pod"})
        events.resources = background
        cls.reflectors[("events", NAMESPACE)] = events

    done: asyncio.Future[None] = loop.create_future()
    for i, spawner in enumerate(spawners):
        spawner.bench_done = done
        spawner.bench_uid = f"pod-uid-{i}"

    delivered: dict[tuple[str, int], float] = {}
    # cold runs: thread CPU (ns) when each event was written, when the write returned, and
    # when its record left progress()
    cpu_fed: dict[tuple[str, int], int] = {}
    cpu_written: dict[tuple[str, int], int] = {}
    cpu_out: dict[tuple[str, int], int] = {}

    async def consume(spawner: Any) -> None:
        async for item in spawner.progress():
            now = time.perf_counter()
            if rich:
                key = (item["record"]["id"], item["record"]["count"])
            else:
                raw = item.get("raw_event")
                if raw is None:
                    continue
                key = (raw["metadata"]["uid"], raw.get("count") or 1)
            delivered.setdefault(key, now)
            if cold:
                cpu_out.setdefault(key, time.thread_time_ns())

    starts = [asyncio.ensure_future(spawner.start()) for spawner in spawners]
    await asyncio.sleep(0)
    consumers = [asyncio.ensure_future(consume(spawner)) for spawner in spawners]
    await asyncio.sleep(0.5)  # let every stream open and subscribe

    # long timelines (R): records fed and delivered before the window, so each reader's
    # timeline holds ``records`` of them by the window's end
    prefill = max(0, records - per_stream) if rich else 0
    if prefill:
        stamp = datetime.now(timezone.utc)
        count = 0
        for k in range(prefill):
            reason, message = STEPS[k % len(STEPS)]
            for i, spawner in enumerate(spawners):
                event = _event(spawner.pod_name, f"pod-uid-{i}", reason, f"{message.format(pod=spawner.pod_name)} ({k})", stamp, 5 * 10**6 + count)
                events.resources[f"{NAMESPACE}/{event['metadata']['name']}"] = event
                count += 1
            await asyncio.sleep(0)
        deadline = time.perf_counter() + 120
        while len(delivered) < count and time.perf_counter() < deadline:
            await asyncio.sleep(0.05)

    # the events to feed: K per pending spawn, new (not in the reflector yet)
    now = datetime.now(timezone.utc)
    feed: list[tuple[str, dict[str, Any]]] = []
    for k in range(per_stream):
        reason, message = STEPS[k % len(STEPS)]
        for i, spawner in enumerate(spawners):
            event = _event(spawner.pod_name, f"pod-uid-{i}", reason, message.format(pod=spawner.pod_name), now, 10**7 + k * n_streams + i)
            feed.append((f"{NAMESPACE}/{event['metadata']['name']}", event))
    fed_at: dict[tuple[str, int], float] = {}
    # ours: the same number of look-alike events fed into a plain dict, in slices that
    # alternate with the measured ones (see the module docstring: the in-run base)
    base_feed = [
        (f"{NAMESPACE}/base-{n}", _event(f"jupyter-base{n % n_streams}", f"base-uid-{n}", "Pulling", "Pulling image", now, n))
        for n in range(len(feed) if rich else 0)
    ]
    plain: dict[str, Any] = {}
    slices = SLICES if rich else 1
    per_slice = -(-len(feed) // slices)
    slice_wall = window / slices
    measured = [0.0, 0.0]  # cpu, wall of the measured slices
    base_sum = [0.0, 0.0]  # cpu, wall of the base slices

    async def feed_slice(items: list[tuple[str, dict[str, Any]]], target: dict[str, Any], timed: bool) -> None:
        interval = slice_wall / max(len(items), 1)
        start = time.perf_counter()
        for n, (ref, event) in enumerate(items):
            delay = start + n * interval - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            key = (event["metadata"]["uid"], 1)
            if timed:
                if cold:
                    evict_caches()
                    cpu_fed[key] = time.thread_time_ns()
                fed_at[key] = time.perf_counter()
            target[ref] = event  # measured: what the watch loop does with a watch event
            if timed and cold:
                cpu_written[key] = time.thread_time_ns()
        remaining = start + slice_wall - time.perf_counter()
        if remaining > 0:
            await asyncio.sleep(remaining)

    async def timed_slice(items: list[tuple[str, dict[str, Any]]], target: dict[str, Any], sums: list[float], timed: bool) -> None:
        cpu0 = time.process_time()
        wall0 = time.perf_counter()
        await feed_slice(items, target, timed)
        sums[0] += time.process_time() - cpu0
        sums[1] += time.perf_counter() - wall0

    gc.collect()
    if profiler is not None:
        profiler.enable()
    for k in range(slices):
        if rich:
            await timed_slice(base_feed[k * per_slice : (k + 1) * per_slice], plain, base_sum, False)
        await timed_slice(feed[k * per_slice : (k + 1) * per_slice], events.resources, measured, True)
    cpu, wall = measured
    if profiler is not None:
        profiler.disable()

    # drain: give late events a chance (stock polls once a second, and may be saturated)
    deadline = time.perf_counter() + max(3.0, min(30.0, wall))
    while len(delivered.keys() & fed_at.keys()) < len(fed_at) and time.perf_counter() < deadline:
        await asyncio.sleep(0.1)
    latencies = [delivered[key] - fed_at[key] for key in fed_at if key in delivered]

    # what one stock read of the namespace's events costs at this E
    probe = spawners[0]
    t0 = time.process_time()
    reads = 3
    for _ in range(reads):
        probe.events  # noqa: B018 - the property is the work being measured
    per_read = (time.process_time() - t0) / reads
    demand = n_streams * per_read

    # keys subscribed on the followed kinds' indexes while the spawns run
    followed_keys = sum(
        r.index.stats()["subscribed_keys"] for key, r in cls.reflectors.items() if str(key[0]).startswith("followed-")
    )
    # end the spawns; check what finished spawns leave behind
    done.set_result(None)
    await asyncio.wait(starts, timeout=30)
    _finished, pending = await asyncio.wait(consumers, timeout=30)
    for task in pending:
        task.cancel()
    notes = ""
    if rich:
        stats = events.index.stats()
        kept = [len(s.spawn_timeline.records()) for s in spawners]
        notes = f"R={min(kept)}-{max(kept)} "
        notes += (
            f"subscriptions left={stats['subscribed_keys'] + pods.index.stats()['subscribed_keys']}"
            f" records/finished spawn={max(kept)} (bound {spawners[0].spawn_timeline_max_records})"
            f" outcomes={sorted({s.spawn_timeline.outcome for s in spawners})}"
        )
        if FOLLOWED_KINDS:
            notes += f" followed keys subscribed={followed_keys}"
    for task in starts:
        if not task.cancelled():
            task.exception()
    result = Result(impl, n_events, n_streams, wall, cpu, demand, latencies, len(fed_at), notes)
    for key, out in cpu_out.items():
        if key in cpu_written:
            result.cold_write.append((cpu_written[key] - cpu_fed[key]) / 1000)
            result.cold_reader.append((out - cpu_written[key]) / 1000)
    if rich:
        result.base = base_sum[0] / base_sum[1]
        result.base_fed = len(base_feed)
        result.base_cpu = base_sum[0]
    return result


#: written through before each event of a ``cold`` run: larger than this machine's caches
_EVICTION_BUFFER = bytearray(48 * 2**20)


def evict_caches() -> None:
    """Touch one byte per cache line of a buffer larger than the CPU's caches, so the next
    event's code and data come from memory, as for a lone event on a busy hub."""
    _EVICTION_BUFFER[::64] = b"\x01" * (len(_EVICTION_BUFFER) // 64)


def write_kubeconfig() -> str:
    """KubeSpawner loads a kubeconfig at construction; no request is ever made to it."""
    path = os.path.join(tempfile.mkdtemp(prefix="richprogress-bench-"), "kubeconfig.json")
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "none", "cluster": {"server": "http://127.0.0.1:9"}}],
        "users": [{"name": "none", "user": {}}],
        "contexts": [{"name": "none", "context": {"cluster": "none", "user": "none"}}],
        "current-context": "none",
    }
    with open(path, "w") as handle:
        json.dump(config, handle)
    return path


def repeated_rich(n_events: int, n_streams: int, window: float, per_stream: int, repeats: int) -> Result:
    """Ours, ``repeats`` times (each with its in-run base); the run with the median
    progress CPU, so one unlucky run (a busy neighbour on a shared machine) cannot swing
    the ratio."""
    runs: list[Result] = []
    for _ in range(repeats):
        result = asyncio.run(run_one("rich", n_events, n_streams, window, per_stream))
        runs.append(result)
        gc.collect()
    runs.sort(key=lambda r: r.progress)
    chosen = runs[len(runs) // 2]
    chosen.notes += " runs (progress/in-run base)=" + ",".join(f"{r.progress:.4f}/{r.base:.4f}" for r in runs)
    return chosen


def fmt_ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.1f}"


def prepare_environment() -> None:
    """Point kubernetes_asyncio at a dummy kubeconfig and quiet traitlets (call first)."""
    # kubernetes_asyncio reads KUBECONFIG when it is imported
    os.environ["KUBECONFIG"] = write_kubeconfig()
    for name in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        os.environ.pop(name, None)
    import logging

    logging.getLogger("traitlets").setLevel(logging.ERROR)


#: the scaling sweep: open streams at E=30,000 (R=3), and records per timeline at N=100
SWEEP_E = 30_000
SWEEP_N = (10, 100, 300, 1000)
SWEEP_R = (3, 100, 450)
R_AT_N = 100
#: stock runs only up to here: it is saturated (the whole loop) from N=300 on
STOCK_MAX_N = 300


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only N=10 and N=300 at E=30,000, R=3")
    parser.add_argument("--window", type=float, default=10.0, help="seconds of feeding per run (default 10)")
    parser.add_argument(
        "--per-stream", type=int, default=PER_STREAM, help=f"new events per stream in the window (default {PER_STREAM})"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="runs of ours at E=30,000/N=300 (the ratio's point); the median is used (default 3)",
    )
    parser.add_argument(
        "--followed-kinds", type=int, default=0,
        help="custom kinds each of ours follows (followed_objects), each with its own events reflector (default 0)",
    )
    args = parser.parse_args(argv)
    global FOLLOWED_KINDS
    FOLLOWED_KINDS = args.followed_kinds
    prepare_environment()

    window = args.window
    # (E, N, R): the N sweep, then the R sweep at N=R_AT_N (its R=3 point is in the N sweep)
    combos = [(SWEEP_E, n, SWEEP_R[0]) for n in SWEEP_N]
    combos += [(SWEEP_E, R_AT_N, r) for r in SWEEP_R[1:]]
    if args.quick:
        combos = [(SWEEP_E, 10, 3), (SWEEP_E, 300, 3)]

    print(
        f"# {args.per_stream} new events per stream over a {window:g} s window"
        f" ({args.per_stream / window:.2f} events/s per stream); python {sys.version.split()[0]}"
    )
    header = (
        f"{'impl':<6} {'E':>6} {'N':>4} {'R':>4} {'cpu/wall':>9} {'progress':>9} {'demand':>8}"
        f" {'us/ev':>7} {'base':>6} {'prog/ev':>7} {'p50 ms':>8} {'p99 ms':>8} {'delivered':>10}  notes"
    )
    print(header)
    results: dict[tuple[str, int, int, int], Result] = {}
    bases: dict[int, tuple[float, float, int]] = {}
    started = time.perf_counter()
    for n_events, n_streams, n_records in combos:
        impls = ["rich"]
        if n_records == SWEEP_R[0] and n_streams <= STOCK_MAX_N:
            impls.insert(0, "stock")
        if "stock" in impls and n_streams not in bases:
            bases[n_streams] = asyncio.run(feed_only(n_streams, window, args.per_stream))
            base_cpu_wall, base_cpu, base_fed = bases[n_streams]
            print(
                f"{'base':<6} {'-':>6} {n_streams:>4} {'-':>4} {base_cpu_wall:>9.4f} {'':>9} {'':>8}"
                f" {base_cpu / base_fed * 1e6:>7.1f}",
                flush=True,
            )
        for impl in impls:
            if impl == "rich" and (n_events, n_streams, n_records) == (30_000, 300, 3) and args.repeats > 1:
                result = repeated_rich(n_events, n_streams, window, args.per_stream, args.repeats)
            else:
                result = asyncio.run(
                    run_one(impl, n_events, n_streams, window, args.per_stream, records=n_records)
                )
                if impl == "stock":
                    result.base, result.base_cpu, result.base_fed = bases[n_streams]
            if impl == "rich":
                result.demand = result.progress
            results[(impl, n_events, n_streams, n_records)] = result
            share = len(result.latencies) / result.fed if result.fed else 0.0
            print(
                f"{impl:<6} {n_events:>6} {n_streams:>4} {n_records if impl == 'rich' else '-':>4}"
                f" {result.cpu_per_wall:>9.4f} {result.progress:>9.4f}"
                f" {result.demand:>8.3f} {result.us_per_event:>7.1f} {result.base_us_per_event:>6.1f}"
                f" {result.us_per_event - result.base_us_per_event:>7.1f}"
                f" {fmt_ms(result.pct(0.5)):>8} {fmt_ms(result.pct(0.99)):>8}"
                f" {share:>9.1%}  {result.notes}",
                flush=True,
            )
            gc.collect()
    print(f"# total {time.perf_counter() - started:.0f} s")
    rich_rows = [(key, r) for key, r in results.items() if key[0] == "rich"]
    if rich_rows:
        print("# ours, progress CPU per event (us/ev minus the in-run base) and p99 latency:")
        for (_impl, e, n, r), result in rich_rows:
            print(
                f"#   E={e} N={n} R={r}: {result.us_per_event - result.base_us_per_event:.1f} us/event,"
                f" p99 {fmt_ms(result.pct(0.99))} ms"
            )
    stock = results.get(("stock", 30_000, 300, 3))
    ours = results.get(("rich", 30_000, 300, 3))
    if stock and ours:
        demand_ratio = stock.demand / ours.demand
        print(
            f"# at E=30000 N=300 stock needs {stock.demand:.2f} CPU-s per s (one loop caps at 1.0):"
            f" demand ratio {demand_ratio:.0f}"
        )
        print(
            f"# ours: {ours.us_per_event:.1f} us of CPU per event with the feeding,"
            f" {ours.base_us_per_event:.1f} us for the feeding alone (in-run base),"
            f" so {ours.us_per_event - ours.base_us_per_event:.1f} us per event on progress;"
            f" stock: {stock.us_per_event:.0f} us per event fed, base {stock.base_us_per_event:.1f}"
        )
        ratio = stock.progress / ours.progress
        print(f"ratio_cpu_e30000_n300={ratio:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
