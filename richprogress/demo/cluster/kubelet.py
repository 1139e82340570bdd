"""The simulated kubelet (and scheduler, autoscaler, volume controllers): plays scenarios.

For each created pod it picks a scenario and plays its steps in simulated time (delays are
divided by the cluster's speed): it emits Kubernetes Events (a repeated event keeps its uid,
its count grows, and watchers see MODIFIED) and moves the pod's status. When the pod becomes
Running and ready, it gets its own loopback IP (127.0.0.2, 127.0.0.3, ...) and a notebook
stand-in listens there. Deleting a pod stops all of that: a Killing event if containers
ran, ``deletionTimestamp``, then after a short grace the DELETED watch event.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from . import custom
from .events import build_event, repeat_event
from .notebook import NotebookStandIn, pod_env
from .podlogs import PodLog
from .recorder import (
    SERIES_FINISH_SECONDS,
    SERIES_REFRESH_SECONDS,
    LegacyRecorder,
    SeriesRecorder,
    expire,
)
from .scenarios import (
    SCENARIO_ANNOTATION,
    Scenario,
    choose_scenario,
    expand,
    normalize_image,
)
from .store import NotFound, Obj, ObjectStore, utc_now_seconds

log = logging.getLogger(__name__)

# A deleted pod disappears after min(gracePeriodSeconds, this) simulated seconds.
MAX_GRACE_SECONDS = 2.0
# The kubelet's first restart back-off; "{backoff}" in messages grows from it per loop pass.
KUBELET_BACKOFF_SECONDS = 10.0
# containerd's startedAt of a container that never ran (Go's zero time, as RFC 3339)
_ZERO_TIME = "1970-01-01T00:00:00Z"
# With real event rates: how often (simulated seconds) expired events are deleted.
EXPIRY_CHECK_SECONDS = 60.0


def go_duration(seconds: float) -> str:
    """Seconds as Go's time.Duration prints them: 10s, 1m20s, 5m0s."""
    whole = int(round(seconds))
    minutes, rest = divmod(whole, 60)
    return f"{minutes}m{rest}s" if minutes else f"{rest}s"


def loopback_addresses() -> Iterator[str]:
    """Pod addresses in order: 127.0.0.2 ... 127.0.0.254, then 127.0.1.1 ... (all loopback)."""
    for third in range(256):
        for last in range(2 if third == 0 else 1, 255):
            yield f"127.0.{third}.{last}"


@dataclass(eq=False)
class PodRun:
    """What the kubelet knows about one pod it is playing a scenario for."""

    namespace: str
    name: str
    uid: str
    scenario: Scenario
    values: dict[str, str]
    task: asyncio.Task[None] | None = None
    standin: NotebookStandIn | None = None
    ip: str | None = None
    started: bool = False  # some container has run: deletion emits Killing
    events: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (ns, name)
    restart_count: int = 0
    last_state: dict[str, Any] = field(default_factory=dict)
    image_digest: str = field(default_factory=lambda: secrets.token_hex(32))
    log: PodLog = field(default_factory=PodLog)
    log_restart_pending: bool = False  # the container terminated; its next run starts a new log
    running_since: str | None = None  # when the container last started running (its startedAt)
    listen_port: int | None = None  # the stand-in listens here instead of the pod's port
    container_id: str = field(default_factory=lambda: secrets.token_hex(32))


class SimulatedKubelet:
    """Moves pods through their scenario; implements ``api.PodLifecycle``."""

    def __init__(
        self,
        store: ObjectStore,
        scenarios: dict[str, Scenario],
        registry: frozenset[str],
        speed: Callable[[], float],
        forget_events_on_delete: bool = False,
        real_event_rates: bool = False,
    ) -> None:
        self.store = store
        self.scenarios = scenarios
        self.registry = registry
        self._speed = speed
        self.forget_events_on_delete = forget_events_on_delete
        self.runs: dict[tuple[str, str], PodRun] = {}
        self._used_ips: set[str] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        # simulated clock: wall time since start, each stretch multiplied by the speed then
        self._sim_seconds = 0.0
        self._wall_at = time.monotonic()
        # recorder.py: events written as client-go's recorders write them (else every one)
        self.real_event_rates = real_event_rates
        self._written: dict[tuple[str, str], float] = {}
        self.legacy_recorder = LegacyRecorder(store, self._written)
        self.series_recorder = SeriesRecorder(store, self._written)
        self._upkeep: asyncio.Task[None] | None = None

    # -- time ------------------------------------------------------------------------
    async def sleep(self, simulated_seconds: float) -> None:
        speed = self._speed() or 1.0
        await asyncio.sleep(max(0.0, simulated_seconds) / speed)

    def now(self) -> float:
        """Simulated seconds since the kubelet started."""
        wall = time.monotonic()
        self._sim_seconds += (wall - self._wall_at) * (self._speed() or 1.0)
        self._wall_at = wall
        return self._sim_seconds

    async def _recorder_upkeep(self) -> None:
        """The recorders' timers and the API server's event TTL, in simulated time."""
        next_finish = self.now() + SERIES_FINISH_SECONDS
        next_refresh = self.now() + SERIES_REFRESH_SECONDS
        while True:
            # not self.sleep: that is the scenarios' clock (tests count its waits)
            await asyncio.sleep(EXPIRY_CHECK_SECONDS / (self._speed() or 1.0))
            now = self.now()
            expire(self.store, self._written, now)
            if now >= next_refresh:
                self.series_recorder.refresh(now)
                next_refresh = now + SERIES_REFRESH_SECONDS
            if now >= next_finish:
                self.series_recorder.finish(now)
                next_finish = now + SERIES_FINISH_SECONDS

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- pod creation ----------------------------------------------------------------
    def pod_created(self, pod: Obj) -> None:
        if self.real_event_rates and self._upkeep is None:
            self._upkeep = self._spawn(self._recorder_upkeep())
        meta = pod["metadata"]
        name = choose_scenario(pod, self.scenarios, self.registry)
        wanted = (meta.get("annotations") or {}).get(SCENARIO_ANNOTATION)
        if wanted and wanted != name:
            log.warning("pod %s asks for unknown scenario %r; playing %r", meta["name"], wanted, name)
        scenario = self.scenarios[name]
        run = PodRun(meta["namespace"], meta["name"], meta["uid"], scenario, self._values(pod, scenario))
        self.runs[(run.namespace, run.name)] = run
        run.task = self._spawn(self._play(run))
        log.info("pod %s/%s plays scenario %s", run.namespace, run.name, name)

    def _values(self, pod: Obj, scenario: Scenario) -> dict[str, str]:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        container = (spec.get("containers") or [{}])[0]
        image = str(container.get("image", ""))
        labels = meta.get("labels") or {}
        env = pod_env(pod)
        user = env.get("JUPYTERHUB_USER") or labels.get("hub.jupyter.org/username", "")
        claim = ""
        for volume in spec.get("volumes") or []:
            pvc = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
            if pvc and pvc.get("claimName"):
                claim = pvc["claimName"]
                break
        if not claim:
            base = meta["name"].removeprefix("jupyter-")
            claim = f"claim-{base}"
        values = {
            "node": "sim-node-1",
            **scenario.vars,
            "pod": meta["name"],
            "namespace": meta["namespace"],
            "pod_uid": meta["uid"],
            "user": user,
            "image": image,
            "image_ref": normalize_image(image) if image else "",
            "container": str(container.get("name", "notebook")),
            "scheduler": str(spec.get("schedulerName") or "default-scheduler"),
            "claim": claim,
            "volume": f"pvc-{uuid.uuid4()}",
        }
        # Scenario vars may themselves use pod values (e.g. "{namespace}").
        return {key: expand(value, values) for key, value in values.items()}

    # -- playing ---------------------------------------------------------------------
    async def _play(self, run: PodRun) -> None:
        scenario = run.scenario
        loop = scenario.loop
        growth = float(loop.get("delay_factor", 1.0)) if loop else 1.0
        cap = float(loop.get("max_delay", 300.0)) if loop else 300.0
        try:
            run.values["backoff"] = go_duration(min(KUBELET_BACKOFF_SECONDS, cap))
            for step in scenario.steps:
                await self._step(run, step, step.get("delay", 0))
            iteration = 0
            while loop is not None:
                iteration += 1
                # Back-off like the kubelet's: each pass waits delay_factor times longer.
                factor = growth ** (iteration - 1)
                run.values["backoff"] = go_duration(min(KUBELET_BACKOFF_SECONDS * growth**iteration, cap))
                for step in scenario.steps[loop["from"] :]:
                    # Only the back-off waits (repeat_delay) grow; the gaps within one try
                    # (pull, fail, back-off message) stay as short as in the first pass.
                    if "repeat_delay" in step:
                        delay = min(step["repeat_delay"] * factor, cap)
                    else:
                        delay = step.get("delay", 0)
                    await self._step(run, step, delay)
        except asyncio.CancelledError:
            raise
        except NotFound:
            return  # the pod went away under us
        except Exception:
            log.exception("scenario %s failed for pod %s", scenario.name, run.name)

    async def _step(self, run: PodRun, step: dict[str, Any], delay: float) -> None:
        await self.sleep(delay)
        if (run.namespace, run.name) not in self.runs:
            raise NotFound(run.name)
        for spec in step.get("events", []):
            self.emit_event(run, spec)
        if "pvc" in step:
            self._set_pvc_phase(run, step["pvc"]["phase"])
        if "pod" in step:
            await self._apply_pod(run, step["pod"])

    # -- events ----------------------------------------------------------------------
    def emit_event(self, run: PodRun, spec: dict[str, Any]) -> Obj | None:
        """Emit one event of the scenario; a key seen before repeats that event.

        With real event rates the recorders decide instead (recorder.py): the event may be
        merged, counted into an earlier one, written late or not at all (None)."""
        values = run.values
        key = spec.get("key")
        if key and key in run.events and not self.real_event_rates:
            ns, name = run.events[key]
            if self.store.find("events", ns, name) is not None:
                return self.store.update("events", ns, name, repeat_event)
        obj_kind = spec.get("object", "Pod")
        if obj_kind == "Pod":
            involved_name, involved_uid = run.name, run.uid
            pod = self.store.find("pods", run.namespace, run.name)
            involved_rv = pod["metadata"]["resourceVersion"] if pod else ""
        elif obj_kind == custom.KIND:
            server = self._custom_object(run)
            involved_name, involved_uid = run.name, server["metadata"]["uid"]
            involved_rv = server["metadata"]["resourceVersion"]
        else:
            involved_name = values["claim"]
            pvc = self.store.find("persistentvolumeclaims", run.namespace, involved_name)
            involved_uid = pvc["metadata"]["uid"] if pvc else str(uuid.uuid5(uuid.NAMESPACE_URL, involved_name))
            involved_rv = pvc["metadata"]["resourceVersion"] if pvc else ""
        involved: dict[str, Any] = {
            "kind": obj_kind,
            "namespace": run.namespace,
            "name": involved_name,
            "uid": involved_uid,
            "apiVersion": custom.API_VERSION if obj_kind == custom.KIND else "v1",
            "resourceVersion": involved_rv,
        }
        if "fieldPath" in spec:
            involved["fieldPath"] = expand(spec["fieldPath"], values)
        component = expand(spec["component"], values)
        instance = expand(spec.get("instance", "{node}" if component == "kubelet" else ""), values)
        event = build_event(
            namespace=run.namespace,
            involved=involved,
            reason=expand(spec["reason"], values),
            message=expand(spec["message"], values),
            event_type=spec.get("type", "Normal"),
            component=component,
            instance=instance,
            api=spec.get("api", "core"),
            action=spec.get("action"),
        )
        if self.real_event_rates:
            recorder = self.series_recorder if spec.get("api") == "events.k8s.io" else self.legacy_recorder
            return recorder.record(event, self.now())
        created = self.store.create("events", event)
        if key:
            run.events[key] = (run.namespace, created["metadata"]["name"])
        return created

    def _custom_object(self, run: PodRun) -> Obj:
        """The pod's ``JupyterServer`` (custom.py), created when a scenario first reports on it."""
        found = self.store.find(custom.PLURAL, run.namespace, run.name)
        if found is not None:
            return found
        pod = self.store.get("pods", run.namespace, run.name)
        return self.store.create(
            custom.PLURAL, custom.server_object(pod, run.values["image"], run.values["user"])
        )

    # -- pod status ------------------------------------------------------------------
    async def _apply_pod(self, run: PodRun, change: dict[str, Any]) -> None:
        pod = self.store.get("pods", run.namespace, run.name)
        phase = change.get("phase", pod["status"].get("phase", "Pending"))
        container = change.get("container")
        ready = bool(container and container["state"] == "running" and container.get("ready", True))
        if container and container["state"] in ("running", "terminated"):
            run.started = True
        if container and container["state"] == "running" and run.log_restart_pending:
            run.log_restart_pending = False
            run.log.restart()
        if container:
            # what the container's program writes (a traceback before it exits)
            for line in container.get("log", []):
                run.log.write(expand(line, run.values))
            if container["state"] == "running":
                run.listen_port = container.get("listen_port")
        if phase == "Running" and run.ip is None:
            await self._assign_ip(run, pod, start_standin=ready and phase == "Running")
        elif ready and phase == "Running" and run.standin is None:
            try:
                await self._start_standin(run, pod, run.ip)
            except OSError:
                # someone took the address meanwhile: move the pod to a free one
                self._used_ips.discard(run.ip or "")
                run.ip = None
                await self._assign_ip(run, pod, start_standin=True)
        if not ready and run.standin is not None:
            await run.standin.stop()
            run.standin = None

        def mutate(obj: Obj) -> None:
            self._mutate_status(run, obj, change, phase, ready)

        self.store.update("pods", run.namespace, run.name, mutate)

    def _mutate_status(
        self, run: PodRun, pod: Obj, change: dict[str, Any], phase: str, ready: bool
    ) -> None:
        status = pod.setdefault("status", {})
        now = utc_now_seconds()
        status["phase"] = phase
        conditions = {c["type"]: c for c in status.get("conditions", [])}

        def condition(kind: str, value: bool, reason: str | None = None, message: str | None = None) -> None:
            old = conditions.get(kind)
            text = "True" if value else "False"
            entry: dict[str, Any] = {
                "type": kind,
                "status": text,
                "lastProbeTime": None,
                "lastTransitionTime": old["lastTransitionTime"] if old and old["status"] == text else now,
            }
            if reason:
                entry["reason"] = reason
            if message:
                entry["message"] = message
            conditions[kind] = entry

        if "unschedulable" in change:
            condition("PodScheduled", False, "Unschedulable", expand(change["unschedulable"], run.values))
        if change.get("scheduled"):
            condition("PodScheduled", True)
            pod["spec"]["nodeName"] = run.values["node"]
            status["hostIP"] = "10.0.0.10"
            status["hostIPs"] = [{"ip": "10.0.0.10"}]
            status.setdefault("startTime", now)
            condition("Initialized", True)
        if run.ip is not None and phase == "Running":
            status["podIP"] = run.ip
            status["podIPs"] = [{"ip": run.ip}]
            condition("PodReadyToStartContainers", True)
        spec_container = change.get("container")
        if spec_container is not None:
            status["containerStatuses"] = [
                self._container_status(run, c, spec_container, ready)
                for c in pod["spec"].get("containers", [])
            ]
            if spec_container.get("restarted"):
                run.restart_count += 1
            condition("ContainersReady", ready, None if ready else "ContainersNotReady",
                      None if ready else f"containers with unready status: [{run.values['container']}]")
            condition("Ready", ready, None if ready else "ContainersNotReady",
                      None if ready else f"containers with unready status: [{run.values['container']}]")
        order = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
        status["conditions"] = [conditions[k] for k in order if k in conditions]

    def _container_status(
        self, run: PodRun, container: Obj, change: dict[str, Any], ready: bool
    ) -> Obj:
        now = utc_now_seconds()
        state_name = change["state"]
        state: dict[str, Any] = {}
        if state_name == "running":
            if run.running_since is None:
                run.running_since = now
            state["startedAt"] = run.running_since
        elif state_name == "waiting":
            state["reason"] = change.get("reason", "ContainerCreating")
            if "message" in change:
                state["message"] = expand(change["message"], run.values)
        else:
            # containerd stamps a container that never ran (StartError) with the zero time
            started = _ZERO_TIME if change.get("never_ran") else run.running_since or now
            state.update(
                {
                    "exitCode": int(change.get("exitCode", 0)),
                    "reason": change.get("reason", "Completed"),
                    "startedAt": started,
                    "finishedAt": now,
                    "containerID": f"containerd://{run.container_id}",
                }
            )
            if "message" in change:  # the termination message (terminationMessagePath, or the runtime's error)
                state["message"] = expand(change["message"], run.values)
            run.last_state = {"terminated": dict(state)}
            run.log_restart_pending = True
            run.container_id = secrets.token_hex(32)  # a restart runs a new container
        if state_name != "running":
            run.running_since = None
        restarts = run.restart_count + (1 if change.get("restarted") else 0)
        status: dict[str, Any] = {
            "name": container.get("name", "notebook"),
            "image": container.get("image", ""),
            "imageID": "",
            "ready": ready,
            "restartCount": restarts,
            "started": state_name == "running",
            "state": {state_name: state},
            "lastState": dict(run.last_state) if state_name != "terminated" else {},
        }
        if run.started:
            repository = normalize_image(status["image"]).rsplit(":", 1)[0]
            status["imageID"] = f"{repository}@sha256:{run.image_digest}"
            status["containerID"] = f"containerd://{run.container_id}"
        return status

    def _set_pvc_phase(self, run: PodRun, phase: str) -> None:
        claim = run.values["claim"]
        if self.store.find("persistentvolumeclaims", run.namespace, claim) is None:
            return

        def mutate(obj: Obj) -> None:
            obj.setdefault("status", {})["phase"] = phase
            if phase == "Bound":
                obj.setdefault("spec", {})["volumeName"] = run.values["volume"]

        self.store.update("persistentvolumeclaims", run.namespace, claim, mutate)

    # -- addresses and stand-ins -----------------------------------------------------
    async def _assign_ip(self, run: PodRun, pod: Obj, start_standin: bool) -> None:
        for ip in loopback_addresses():
            if ip in self._used_ips:
                continue
            if start_standin:
                try:
                    await self._start_standin(run, pod, ip)
                except OSError:
                    continue  # someone else (another test run?) listens there
            self._used_ips.add(ip)
            run.ip = ip
            return
        raise RuntimeError("no free loopback address for a simulated pod")

    async def _start_standin(self, run: PodRun, pod: Obj, ip: str | None) -> None:
        if ip is None:
            return
        standin = NotebookStandIn(pod, ip, log=run.log.write, port=run.listen_port)
        await standin.start()
        run.standin = standin
        log.info("notebook stand-in for %s listens on %s", run.name, standin.url)

    def pod_log(self, namespace: str, name: str) -> PodLog | None:
        """The output of the pod's container (while the pod exists), or None."""
        run = self.runs.get((namespace, name))
        return run.log if run is not None else None

    # -- deletion --------------------------------------------------------------------
    def delete_pod(self, namespace: str, name: str, grace_seconds: float | None) -> Obj:
        pod = self.store.get("pods", namespace, name)
        run = self.runs.get((namespace, name))
        grace = MAX_GRACE_SECONDS if grace_seconds is None else min(grace_seconds, MAX_GRACE_SECONDS)
        if run is not None and run.task is not None:
            run.task.cancel()
            run.task = None
        if "deletionTimestamp" not in pod["metadata"]:
            if run is not None and run.started:
                self.emit_event(
                    run,
                    {
                        "reason": "Killing",
                        "message": "Stopping container {container}",
                        "component": "kubelet",
                        "fieldPath": "spec.containers{{container}}",
                    },
                )

            def mark(obj: Obj) -> None:
                obj["metadata"]["deletionTimestamp"] = utc_now_seconds()
                obj["metadata"]["deletionGracePeriodSeconds"] = int(grace)

            pod = self.store.update("pods", namespace, name, mark)
        if grace <= 0:
            self._spawn(self._finish_delete(namespace, name, pod["metadata"]["uid"], 0.0))
        else:
            self._spawn(self._finish_delete(namespace, name, pod["metadata"]["uid"], grace))
        return pod

    async def _finish_delete(self, namespace: str, name: str, uid: str, grace: float) -> None:
        await self.sleep(grace)
        pod = self.store.find("pods", namespace, name)
        if pod is None or pod["metadata"]["uid"] != uid:
            return  # already gone (a second delete finished first)
        run = self.runs.pop((namespace, name), None)
        if run is not None:
            run.log.close()
            await self._release(run)
        self.store.delete("pods", namespace, name)
        self._collect_garbage(namespace, uid)

    async def _release(self, run: PodRun) -> None:
        if run.task is not None:
            run.task.cancel()
            run.task = None
        if run.standin is not None:
            await run.standin.stop()
            run.standin = None
        if run.ip is not None:
            self._used_ips.discard(run.ip)
            run.ip = None

    def _collect_garbage(self, namespace: str, uid: str) -> None:
        # Services, secrets and the JupyterServer owned by the pod go with it, as
        # Kubernetes' GC does (with an operator the owner is the other way round).
        for resource in ("services", "secrets", custom.PLURAL):
            for obj in self.store.list(resource, namespace):
                owners = obj["metadata"].get("ownerReferences") or []
                if any(owner.get("uid") == uid for owner in owners):
                    self.store.delete(resource, namespace, obj["metadata"]["name"])
        if self.forget_events_on_delete:
            for event in self.store.list("events", namespace):
                if event.get("involvedObject", {}).get("uid") == uid:
                    self.store.delete("events", namespace, event["metadata"]["name"])

    async def stop(self) -> None:
        """Stop every playback, deletion and stand-in."""
        for run in list(self.runs.values()):
            await self._release(run)
        self.runs.clear()
        self._upkeep = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
