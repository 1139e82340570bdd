"""Scenario files: load, validate, pick one per pod, and expand message templates.

A scenario is a JSON data file in ``scenarios/`` (schema in ``scenarios/README.md``): timed
steps, each with Kubernetes events to emit and pod status changes to apply. Which scenario a
pod plays comes from its ``richprogress.demo/scenario`` annotation, else from its image: an
image that the simulated registry (``registry.json``) holds plays ``happy-path``, any other
image plays ``custom-image`` (the pull fails as "not found").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SCENARIO_ANNOTATION = "richprogress.demo/scenario"
SCENARIO_DIR = Path(__file__).with_name("scenarios")
REGISTRY_PATH = Path(__file__).with_name("registry.json")
DEFAULT_SCENARIO = "happy-path"
UNKNOWN_IMAGE_SCENARIO = "custom-image"

# Template values every pod provides (scenario "vars" may add more).
POD_VARS = (
    "pod",
    "namespace",
    "pod_uid",
    "user",
    "image",
    "image_ref",
    "container",
    "node",
    "scheduler",
    "claim",
    "volume",
    "backoff",
)
_TEMPLATE_NAME = re.compile(r"\{([a-z_][a-z0-9_]*)\}")

_SCENARIO_KEYS = {"name", "title", "description", "outcome", "vars", "steps", "loop"}
_STEP_KEYS = {"delay", "repeat_delay", "note", "events", "pod", "pvc"}
_EVENT_KEYS = {
    "key",
    "reason",
    "type",
    "message",
    "component",
    "instance",
    "object",
    "fieldPath",
    "api",
    "action",
}
_POD_KEYS = {"phase", "scheduled", "unschedulable", "container"}
_CONTAINER_KEYS = {"state", "reason", "message", "exitCode", "ready", "restarted", "log", "never_ran", "listen_port"}
_LOOP_KEYS = {"from", "delay_factor", "max_delay"}
OUTCOMES = ("ready", "never-ready")


class ScenarioError(ValueError):
    """A scenario file that does not follow the schema; the message names file and place."""


@dataclass(frozen=True)
class Scenario:
    """A validated scenario; ``steps`` and ``loop`` are the file's own dicts."""

    name: str
    title: str
    description: str
    outcome: str
    vars: dict[str, str]
    steps: tuple[dict[str, Any], ...]
    loop: dict[str, Any] | None

    @property
    def duration(self) -> float:
        """Simulated seconds of one pass over the steps (without loops)."""
        return float(sum(step.get("delay", 0) for step in self.steps))


def expand(template: str, values: dict[str, str]) -> str:
    """Fill ``{name}`` placeholders; other braces (``{node.kubernetes.io/not-ready: }``) stay."""
    return _TEMPLATE_NAME.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def _fail(where: str, problem: str) -> ScenarioError:
    return ScenarioError(f"{where}: {problem}")


def _check_keys(where: str, obj: Any, allowed: set[str], required: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    if not isinstance(obj, dict):
        raise _fail(where, "must be an object")
    unknown = set(obj) - allowed
    if unknown:
        raise _fail(where, f"unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")
    missing = set(required) - set(obj)
    if missing:
        raise _fail(where, f"missing key(s) {sorted(missing)}")


def _check_template(where: str, value: Any, known: set[str]) -> None:
    if not isinstance(value, str):
        raise _fail(where, "must be a string")
    for name in _TEMPLATE_NAME.findall(value):
        if name not in known:
            raise _fail(where, f"unknown placeholder {{{name}}}; known: {sorted(known)}")


def validate(data: Any, where: str) -> Scenario:
    """Check one scenario's data against the schema and return it as a ``Scenario``."""
    _check_keys(where, data, _SCENARIO_KEYS, {"name", "outcome", "steps"})
    if data["outcome"] not in OUTCOMES:
        raise _fail(f"{where}.outcome", f"must be one of {OUTCOMES}")
    extra = data.get("vars", {})
    if not isinstance(extra, dict) or not all(isinstance(v, str) for v in extra.values()):
        raise _fail(f"{where}.vars", "must map names to strings")
    known = set(POD_VARS) | set(extra)
    steps = data["steps"]
    if not isinstance(steps, list) or not steps:
        raise _fail(f"{where}.steps", "must be a non-empty list")
    for i, step in enumerate(steps):
        here = f"{where}.steps[{i}]"
        _check_keys(here, step, _STEP_KEYS, {"delay"})
        for key in ("delay", "repeat_delay"):
            value = step.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise _fail(f"{here}.{key}", "must be a number of simulated seconds >= 0")
        for j, event in enumerate(step.get("events", [])):
            ev_where = f"{here}.events[{j}]"
            _check_keys(ev_where, event, _EVENT_KEYS, {"reason", "message", "component"})
            for key in ("message", "fieldPath", "instance", "reason", "component"):
                if key in event:
                    _check_template(f"{ev_where}.{key}", event[key], known)
            if event.get("type", "Normal") not in ("Normal", "Warning"):
                raise _fail(f"{ev_where}.type", "must be Normal or Warning")
            if event.get("object", "Pod") not in ("Pod", "PersistentVolumeClaim", "JupyterServer"):
                raise _fail(f"{ev_where}.object", "must be Pod, PersistentVolumeClaim or JupyterServer")
            if event.get("api", "core") not in ("core", "events.k8s.io"):
                raise _fail(f"{ev_where}.api", "must be core or events.k8s.io")
        if "pod" in step:
            pod = step["pod"]
            _check_keys(f"{here}.pod", pod, _POD_KEYS)
            if pod.get("phase", "Pending") not in ("Pending", "Running", "Succeeded", "Failed"):
                raise _fail(f"{here}.pod.phase", "must be Pending, Running, Succeeded or Failed")
            if "unschedulable" in pod:
                _check_template(f"{here}.pod.unschedulable", pod["unschedulable"], known)
            if "container" in pod:
                container = pod["container"]
                _check_keys(f"{here}.pod.container", container, _CONTAINER_KEYS, {"state"})
                if container["state"] not in ("waiting", "running", "terminated"):
                    raise _fail(f"{here}.pod.container.state", "must be waiting, running or terminated")
                if "message" in container:
                    _check_template(f"{here}.pod.container.message", container["message"], known)
                lines = container.get("log", [])
                if not isinstance(lines, list):
                    raise _fail(f"{here}.pod.container.log", "must be a list of lines")
                for k, line in enumerate(lines):
                    _check_template(f"{here}.pod.container.log[{k}]", line, known)
                port = container.get("listen_port", 1)
                if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
                    raise _fail(f"{here}.pod.container.listen_port", "must be a port number")
                if container.get("never_ran", False) and container["state"] != "terminated":
                    raise _fail(f"{here}.pod.container.never_ran", "is only for a terminated container")
        if "pvc" in step:
            _check_keys(f"{here}.pvc", step["pvc"], {"phase"}, {"phase"})
    loop = data.get("loop")
    if loop is not None:
        _check_keys(f"{where}.loop", loop, _LOOP_KEYS, {"from"})
        if not isinstance(loop["from"], int) or not 0 <= loop["from"] < len(steps):
            raise _fail(f"{where}.loop.from", f"must be a step index 0..{len(steps) - 1}")
        for key in ("delay_factor", "max_delay"):
            value = loop.get(key, 1)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise _fail(f"{where}.loop.{key}", "must be a number > 0")
    return Scenario(
        name=data["name"],
        title=data.get("title", data["name"]),
        description=data.get("description", ""),
        outcome=data["outcome"],
        vars=dict(extra),
        steps=tuple(steps),
        loop=loop,
    )


def load_scenario(path: Path) -> Scenario:
    """Load and validate one scenario file; its ``name`` must equal the file's stem."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ScenarioError(f"{path.name}: cannot read: {e}") from e
    scenario = validate(data, path.name)
    if scenario.name != path.stem:
        raise ScenarioError(f"{path.name}: name {scenario.name!r} must equal the file name")
    return scenario


def load_scenarios(directory: Path = SCENARIO_DIR) -> dict[str, Scenario]:
    """Every ``*.json`` scenario in ``directory``, by name, sorted."""
    return {path.stem: load_scenario(path) for path in sorted(directory.glob("*.json"))}


@cache
def builtin_scenarios() -> dict[str, Scenario]:
    """The scenarios shipped with the package (loaded once)."""
    return load_scenarios(SCENARIO_DIR)


def scenario_names() -> list[str]:
    """Names of the shipped scenarios, sorted."""
    return sorted(builtin_scenarios())


# -- the simulated registry --------------------------------------------------------------
def normalize_image(image: str) -> str:
    """Fully qualify an image reference as containerd does (``docker.io/library/x:latest``)."""
    name, digest = (image.split("@", 1) + [""])[:2]
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    if digest:
        return f"{name}@{digest}"
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        name += ":latest"
    return name


def load_registry(path: Path = REGISTRY_PATH) -> frozenset[str]:
    """The image references the simulated registry holds, normalized."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return frozenset(normalize_image(image) for image in data["images"])


@cache
def builtin_registry() -> frozenset[str]:
    return load_registry(REGISTRY_PATH)


def registry_has(image: str, registry: frozenset[str] | None = None) -> bool:
    """Whether the simulated registry can pull ``image``."""
    return normalize_image(image) in (builtin_registry() if registry is None else registry)


def choose_scenario(
    pod: dict[str, Any],
    scenarios: dict[str, Scenario],
    registry: frozenset[str],
) -> str:
    """The scenario a new pod plays: its annotation if known, else by its image."""
    annotations = pod.get("metadata", {}).get("annotations") or {}
    wanted = annotations.get(SCENARIO_ANNOTATION)
    if wanted in scenarios:
        return str(wanted)
    containers = pod.get("spec", {}).get("containers") or [{}]
    image = str(containers[0].get("image", ""))
    if registry_has(image, registry):
        return DEFAULT_SCENARIO
    return UNKNOWN_IMAGE_SCENARIO
