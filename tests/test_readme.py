"""The README says only what is true: its options exist, its commands exist, its examples run.

- every ``c.Class.option`` the README names is a configurable trait of that class;
- the two set-up commands are exactly ``scripts/dev demo`` and ``scripts/dev test``, and
  ``scripts/dev`` handles both (``.ci/run`` calls the second);
- every route in the endpoints table is one ``richprogress.web.default_handlers`` serves;
- the worked extra rule, taken from the README's own code block, gives the sentence the
  README promises;
- every image the README shows is in the repository.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from traitlets.config import Config, Configurable

from richprogress.web import default_handlers
from richprogress.wording.formatter import EventFormatter

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

#: where each class the README configures lives
CLASSES = {
    "EventFormatter": "richprogress.wording.formatter",
    "RichProgressMixin": "richprogress.stream.mixin",
    "RichKubeSpawner": "richprogress.kube.spawner",
    "TypicalTimes": "richprogress.typical.cache",
    "JupyterHub": "jupyterhub.app",
    "KubeSpawner": "kubespawner",
    "Spawner": "jupyterhub.spawner",
    "SpawnHistory": "richprogress.history",
}

OPTIONS = sorted(set(re.findall(r"\bc\.([A-Z]\w*)\.([a-z_]\w*)", README)))


def _class(name: str) -> type[Configurable]:
    return getattr(importlib.import_module(CLASSES[name]), name)  # type: ignore[no-any-return]


def test_readme_names_the_options_of_every_class() -> None:
    named = {cls for cls, _ in OPTIONS}
    assert {"EventFormatter", "RichProgressMixin", "RichKubeSpawner"} <= named
    # the reference lists every option of our own classes
    for cls_name in ("EventFormatter", "RichProgressMixin", "RichKubeSpawner", "SpawnHistory"):
        cls = _class(cls_name)
        own = set(cls.class_own_traits(config=True))
        assert own <= {opt for c, opt in OPTIONS if c == cls_name}, f"{cls_name} options missing from README"


@pytest.mark.parametrize(("cls_name", "option"), OPTIONS, ids=[f"{c}.{o}" for c, o in OPTIONS])
def test_each_option_in_the_readme_exists(cls_name: str, option: str) -> None:
    assert cls_name in CLASSES, f"README configures unknown class c.{cls_name}"
    traits = _class(cls_name).class_traits(config=True)
    assert option in traits, f"c.{cls_name}.{option} is not a configurable option"


def _code_blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.DOTALL)


def test_the_two_commands_come_first_and_exist() -> None:
    two = next(block for block in _code_blocks("bash") if "scripts/dev demo" in block)
    commands = [line.split("#")[0].strip() for line in two.strip().splitlines()]
    assert commands == ["scripts/dev demo", "scripts/dev test"]
    # ... and this is the first code block of the README
    assert README.index("```bash\n" + two) == README.index("```")
    script = (ROOT / "scripts" / "dev").read_text(encoding="utf-8")
    assert re.search(r"^\s+demo\) ", script, re.MULTILINE)
    assert re.search(r"^\s+test\)", script, re.MULTILINE)
    assert "python3 -m richprogress.demo" in script
    assert "scripts/dev test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_described_install_steps_are_what_scripts_dev_does() -> None:
    script = (ROOT / "scripts" / "dev").read_text(encoding="utf-8")
    for step in ("apt-get install", "chromium", "npm install", 'pip install -q --disable-pip-version-check -e ".[test]"'):
        assert step in script, step
    for word in ("configurable-http-proxy", "axe-core"):
        assert word in (ROOT / "package.json").read_text(encoding="utf-8")


ROUTES = re.findall(r"^\| `GET ([^`]+)`", README, flags=re.MULTILINE)


def _served(path: str) -> bool:
    return any(re.fullmatch(route[0], "/" + path) for route in default_handlers)


@pytest.mark.parametrize("route", ROUTES)
def test_each_route_in_the_readme_is_served(route: str) -> None:
    # fill the placeholders with sample values; "..." stands for the timeline prefix
    sample = (
        route.replace("{user}", "alice")
        .replace("{server_name}", "gpu")
        .replace("{path}", "richprogress.js")
        .replace("{id}", "7")
        .replace(".../", "api/richprogress/users/alice/")
        .split("?")[0]
    )
    assert _served(sample), f"no handler serves {route!r} (as {sample!r})"


def test_readme_lists_the_timeline_routes() -> None:
    assert len(ROUTES) >= 4


def test_the_worked_extra_rule_reads_as_promised() -> None:
    block = next(b for b in _code_blocks("python") if '"id": "gpu-busy"' in b)
    c = Config()
    exec(block, {"c": c})  # the README's own code, as jupyterhub_config.py would run it
    formatter = EventFormatter(config=c)
    event = {
        "kind": "Event",
        "metadata": {"uid": "u-1", "name": "jupyter-alice.1"},
        "involvedObject": {"kind": "Pod", "name": "jupyter-alice", "namespace": "jhub"},
        "reason": "FailedScheduling",
        "type": "Warning",
        "message": "0/5 nodes are available: 5 Insufficient nvidia.com/gpu. preemption: "
        "0/5 nodes are available: 5 No preemption victims found for incoming pod.",
        "reportingComponent": "default-scheduler",
        "lastTimestamp": "2026-11-29T10:00:00Z",
        "count": 1,
    }
    record = formatter.format_event(event)
    assert f"**{record['message']}**" in README
    assert record["hint"] and record["hint"] in README
    # and without the rule, the default sentence the README quotes
    assert f'"{EventFormatter().format_event(event)["message"]}"' in README


@pytest.mark.parametrize("image", sorted(set(re.findall(r"\]\((docs/images/[^)]+\.png)\)", README))))
def test_each_image_exists(image: str) -> None:
    assert (ROOT / image).is_file()
