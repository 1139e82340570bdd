"""The README and docs/ say only what is true: options exist, commands exist, examples run.

- every ``c.Class.option`` the README or a page of docs/ names is a configurable trait of
  that class, and docs/configuration.md lists every option of our own classes;
- the two set-up commands are exactly ``scripts/dev demo`` and ``scripts/dev test``, and
  ``scripts/dev`` does what the README says of them (``.ci/run`` calls the second);
- every route in the endpoints tables is one that richprogress's handlers serve;
- the README's first rule and the worked extra rule of docs/rules.md, run as config, give
  the sentences those pages promise;
- every image the README and docs/ show is in the repository;
- the README stays short, names the admin failures page early, and no page points at
  issue numbers or design notes outside the repository.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from traitlets.config import Config, Configurable

from richprogress.wording.formatter import EventFormatter
from scripts.lanes import all_jobs
from tests.helpers.paths import REPO

DOCS = REPO / "docs"
README = (REPO / "README.md").read_text(encoding="utf-8")
PAGES = {path.name: path.read_text(encoding="utf-8") for path in sorted(DOCS.glob("*.md"))}
ALL_TEXT = "\n".join([README, *PAGES.values()])
SCRIPT = (REPO / "scripts" / "dev").read_text(encoding="utf-8")

#: where each class the README and docs configure lives
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

OPTION = r"\bc\.([A-Z]\w*)\.([a-z_]\w*)"
OPTIONS = sorted(set(re.findall(OPTION, ALL_TEXT)))
REFERENCE = sorted(set(re.findall(OPTION, PAGES["configuration.md"])))


def _default_handlers() -> list[tuple[str, ...]]:
    from richprogress.web import default_handlers

    return list(default_handlers)


def _class(name: str) -> type[Configurable]:
    return getattr(importlib.import_module(CLASSES[name]), name)  # type: ignore[no-any-return]


def test_the_reference_names_every_option_of_our_classes() -> None:
    for cls_name in ("EventFormatter", "RichProgressMixin", "RichKubeSpawner", "SpawnHistory", "TypicalTimes"):
        own = set(_class(cls_name).class_own_traits(config=True))
        listed = {opt for c, opt in REFERENCE if c == cls_name}
        if cls_name == "RichKubeSpawner":
            # the mixin's options are listed once, under RichProgressMixin
            listed |= {opt for c, opt in REFERENCE if c == "RichProgressMixin"}
        assert own <= listed, f"{cls_name} options missing from docs/configuration.md: {own - listed}"


@pytest.mark.parametrize(("cls_name", "option"), OPTIONS, ids=[f"{c}.{o}" for c, o in OPTIONS])
def test_each_option_named_exists(cls_name: str, option: str) -> None:
    assert cls_name in CLASSES, f"the docs configure unknown class c.{cls_name}"
    traits = _class(cls_name).class_traits(config=True)
    assert option in traits, f"c.{cls_name}.{option} is not a configurable option"


def _code_blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.DOTALL)


def _function(name: str) -> str:
    """The body of one shell function of scripts/dev."""
    match = re.search(rf"^{name}\(\) \{{\n(.*?)^\}}", SCRIPT, flags=re.MULTILINE | re.DOTALL)
    assert match, name
    return match.group(1)


def test_the_two_commands_come_first_and_exist() -> None:
    two = next(block for block in _code_blocks(README, "bash") if "scripts/dev demo" in block)
    commands = [line.split("#")[0].strip() for line in two.strip().splitlines()]
    assert commands == ["scripts/dev demo", "scripts/dev test"]
    # ... and this is the first code block of the README
    assert README.index("```bash\n" + two) == README.index("```")
    assert re.search(r"^\s+demo\) setup_demo; exec python3 -m richprogress.demo", SCRIPT, re.MULTILINE)
    assert re.search(r"^\s+test\)\n\s+setup\n", SCRIPT, re.MULTILINE)
    assert "scripts/dev test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_demo_installs_only_what_it_needs() -> None:
    # the README: npm install and the kubernetes extra, no root, no Debian package
    demo = _function("setup_demo")
    assert "node_packages" in demo and "python_packages kubernetes" in demo
    assert "debian_packages" not in demo and "apt-get" not in demo
    assert 'pip install -e ".[kubernetes]"' in README
    for word in ("configurable-http-proxy", "axe-core"):
        assert word in (REPO / "package.json").read_text(encoding="utf-8")
    assert "npm install" in _function("node_packages")


def test_the_tests_install_everything_and_without_root_name_what_is_missing() -> None:
    setup = _function("setup")
    assert "debian_packages" in setup and "python_packages test" in setup
    debian = _function("debian_packages")
    for package in ("chromium", "postgresql", "prometheus"):
        assert package in debian and package in README
    # without root: name the packages, then stop
    assert re.search(r'id -u\)" != 0.*?sudo apt-get install \$\{missing\[\*\]\}.*?exit 1', debian, re.DOTALL)
    assert "without root it names the missing" in README.replace("\n", " ").replace("**", "")
    assert 'pip install -e ".[test]"' in README
    assert 'pip install -q --disable-pip-version-check -e ".[$extra]"' in _function("python_packages")


def test_a_second_run_skips_pip_when_installed() -> None:
    # "a second run starts at once": pip runs only when the install check fails
    packages = _function("python_packages")
    assert packages.index('installed "$extra"') < packages.index("pip install")
    check = _function("installed")
    for what in ("__version__", "direct_url.json", "editable", "optional-dependencies"):
        assert what in check, what
    assert "a second run starts at once" in README


def test_the_docs_are_built_with_warnings_as_errors() -> None:
    assert "python3 -m sphinx -W --keep-going" in _function("docs_build")
    assert re.search(r"^\s+docs\) docs_build ;;$", SCRIPT, re.MULTILINE)
    # `scripts/dev test` builds them in its checks job
    checks = next(job for job in all_jobs([]) if job.tier == "checks")
    assert [str(REPO / "scripts" / "dev"), "docs"] in checks.commands
    assert (DOCS / "conf.py").is_file() and "myst_parser" in (DOCS / "conf.py").read_text()
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^docs = \[.*"sphinx.*"myst-parser', pyproject, re.MULTILINE)
    assert '"jupyterhub-richprogress[kubernetes,docs]"' in pyproject


def test_every_page_is_in_the_table_of_contents() -> None:
    index = PAGES["index.md"]
    for name in PAGES:
        if name != "index.md":
            assert re.search(rf"^{re.escape(name[:-3])}$", index, re.MULTILINE), name


ROUTES = sorted(
    set(re.findall(r"^\| `GET ([^`]+)`", PAGES["endpoints.md"] + PAGES["history.md"], flags=re.MULTILINE))
)


def _served(path: str) -> bool:
    return any(re.fullmatch(route[0], "/" + path) for route in _default_handlers())


@pytest.mark.parametrize("route", ROUTES)
def test_each_route_in_the_docs_is_served(route: str) -> None:
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


def test_the_docs_list_the_timeline_and_history_routes() -> None:
    assert len(ROUTES) >= 8


@pytest.mark.parametrize("page", ["richprogress/failures", "richprogress/failed/alice", "richprogress/failed/alice/gpu"])
def test_the_pages_the_docs_name_are_served(page: str) -> None:
    assert _served(page), page


GPU_EVENT = {
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


def _formatter_from(block: str) -> EventFormatter:
    c = Config()
    exec(block, {"c": c})  # the page's own code, as jupyterhub_config.py would run it
    return EventFormatter(config=c)


def test_the_worked_extra_rule_reads_as_promised() -> None:
    rules = PAGES["rules.md"]
    block = next(b for b in _code_blocks(rules, "python") if '"id": "gpu-busy"' in b)
    record = _formatter_from(block).format_event(GPU_EVENT)
    assert f"**{record['message']}**" in rules
    assert record["hint"] and record["hint"] in rules
    # and without the rule, the default sentence the page quotes
    assert f'"{EventFormatter().format_event(GPU_EVENT)["message"]}"' in rules


def test_the_readme_first_knobs_run_as_config() -> None:
    block = next(b for b in _code_blocks(README, "python") if "c.EventFormatter.extra_rules" in b)
    record = _formatter_from(block).format_event(GPU_EVENT)
    assert record["message"] == "All GPU machines are busy right now"
    assert record["hint"] and record["hint"] in README


IMAGES = sorted(
    {m for m in re.findall(r"\]\((docs/images/[^)]+\.png)\)", README)}
    | {f"docs/{m}" for text in PAGES.values() for m in re.findall(r"\]\((images/[^)]+\.png)\)", text)}
)


@pytest.mark.parametrize("image", IMAGES)
def test_each_image_exists(image: str) -> None:
    assert (REPO / image).is_file()


def test_the_readme_pictures_come_from_the_demo() -> None:
    shown = re.findall(r"\]\((docs/images/[^)]+\.png)\)", README)
    ours = [image for image in shown if "before-stock" not in image and "dark" not in image]
    assert ours and all(Path(image).name.startswith("demo-") for image in ours), ours
    assert "demo-" in (DOCS / "take_pictures.py").read_text(encoding="utf-8")


def test_the_readme_is_short_and_names_the_failures_page_early() -> None:
    assert len(README.splitlines()) <= 300
    assert README.index("hub/richprogress/failures") < README.index("## Before and after")


@pytest.mark.parametrize(
    "name", ["README.md", "CHANGELOG.md", *(f"docs/{page}" for page in PAGES)]
)
def test_no_page_points_at_issue_numbers_or_design_notes(name: str) -> None:
    text = (REPO / name).read_text(encoding="utf-8")
    for pattern in (r"\bissue \d+", r"\bitem \d+", r"\bcontract \d+", r"DESIGN\.md"):
        assert not re.search(pattern, text, re.IGNORECASE), (name, pattern)


LAYER_FOLDERS = sorted(
    str(path.parent.relative_to(REPO / "richprogress"))
    for path in (REPO / "richprogress").glob("**/__init__.py")
    if path.parent != REPO / "richprogress" and "demo" not in path.parts
)


@pytest.mark.parametrize("folder", LAYER_FOLDERS)
def test_the_architecture_page_lists_every_module_of_a_folder(folder: str) -> None:
    """docs/architecture.md's "Module by module" names each module under its folder's heading,
    and no module that is gone."""
    text = PAGES["architecture.md"]
    heading = f"**`{folder}/`**"
    assert heading in text, f"docs/architecture.md has no section {heading}"
    section = text.split(heading, 1)[1].split("\n**`", 1)[0]
    listed = set(re.findall(r"^- `(\w+\.py)`", section, flags=re.M))
    present = {path.name for path in (REPO / "richprogress" / folder).glob("*.py")}
    present.discard("__init__.py")
    assert present - listed == set(), f"not listed under {heading}"
    assert listed - present - {"__init__.py"} == set(), f"listed under {heading} but gone"
