"""A setting richprogress cannot use stops the hub at start, in one line; good config starts.

Each bad setting is checked the way the hub meets it: ``richprogress.setup(c)``, then the
config loaded by JupyterHub (``JupyterHub(config=c)`` runs the same loading as
``jupyterhub -f``), which must refuse it with one line naming the setting, its value and
what is allowed. A few of them start a real ``jupyterhub`` process, which must exit with a
non-zero status and that line in its log, having opened no database. Good config (the
demo's, the README's examples, kubespawner #910's rule format, examples/) loads, and a real
hub with it answers.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from jupyterhub.app import JupyterHub
from traitlets.config import Application, Config, PyFileConfigLoader

import richprogress
from richprogress.settings_check import SettingsError, check_settings
from tests.helpers.config import loaded, refused_when_loaded
from tests.helpers.hub import hub_process
from tests.helpers.paths import DATA, REPO
from tests.helpers.refused_hub import refused_at_start

PR910_RULES = json.loads((DATA / "kubespawner-pr910" / "default-rules.json").read_text())

GOOD_RULE = '{"match": {"reason": "Pulling"}, "template": "Downloading"}'


def rules(bad: str, option: str = "rules") -> str:
    """``c.EventFormatter.<option>`` holding three good rules, then ``bad`` at index 3."""
    return f"c.EventFormatter.{option} = [{GOOD_RULE}, {GOOD_RULE.replace('Pulling', 'Pulled')}, {GOOD_RULE.replace('Pulling', 'Created')}, {bad}]\n"


#: (id, config lines, the setting named, a piece of the value, a piece of what is allowed or wrong)
BAD = [
    # -- rules: every one of these started a hub whose spawns all failed in the pump
    ("rule-bad-regex", rules('{"match": {"message": "(["}, "template": "x"}'),
     "c.EventFormatter.rules[3]", "'(['", "is not a valid regular expression"),
    ("rule-unknown-key", rules('{"match": {"reason": "x"}, "template": "x", "colour": "red"}'),
     "c.EventFormatter.rules[3]", "colour", "allowed:"),
    ("rule-unknown-field", rules('{"match": {"colour": "red"}, "template": "x"}'),
     "c.EventFormatter.rules[3]", "'colour'", "known fields:"),
    ("rule-missing-group", rules('{"match": {"reason": "Failed"}, "template": "The image {image} is missing"}'),
     "c.EventFormatter.rules[3]", "image", "cannot produce"),
    ("rule-bad-severity", rules('{"match": {"reason": "x"}, "template": "x", "severity": "fatal"}'),
     "c.EventFormatter.rules[3]", "'fatal'", "severity must be one of info, warning, error"),
    ("rule-bad-phase", rules('{"match": {"reason": "x"}, "template": "x", "phase": "pulling"}'),
     "c.EventFormatter.rules[3]", "'pulling'", "phase must be one of"),
    ("rule-fatal-no", rules('{"match": {"reason": "x"}, "template": "x", "fatal": "no"}'),
     "c.EventFormatter.rules[3]", "str", "fatal must be true, false or a callable"),
    ("rules-a-string", 'c.EventFormatter.rules = "nope"\n',
     "c.EventFormatter.rules", "'nope'", "a list or dict of rules"),
    ("rule-int-template", rules('{"match": {"reason": "x"}, "template": 42}'),
     "c.EventFormatter.rules[3]", "int", "template must be a string or a callable"),
    ("rule-no-template", rules('{"match": {"reason": "x"}}'),
     "c.EventFormatter.rules[3]", "'template'", "missing required key"),
    ("extra-rule-bad-regex", rules('{"match": {"reason": "Failed", "message": "(?P<image"}, "template": "x"}', "extra_rules"),
     "c.EventFormatter.extra_rules[3]", "'(?P<image'", "is not a valid regular expression"),
    ("rule-exponential-regex", rules('{"match": {"message": "(a+)+$"}, "template": "x"}'),
     "c.EventFormatter.rules[3]", "'(a+)+$'", "can take exponential time"),
    ("hook-not-callable", 'c.EventFormatter.format_hook = "my_hooks.add_help"\n',
     "c.EventFormatter.format_hook", "'my_hooks.add_help'", "None, or a callable hook(spawner, event, record)"),
    ("hook-wrong-arguments", "c.EventFormatter.format_hook = lambda record: record\n",
     "c.EventFormatter.format_hook", "<function <lambda>", "cannot be called with (spawner, event, record)"),
    ("formatter-unknown-setting", "c.EventFormatter.extra_rule = []\n",
     "c.EventFormatter.extra_rule", "'extra_rule'", "did you mean 'extra_rules'?"),
    # -- followed objects: a typo made every spawn request a 500
    ("followed-typo", 'c.RichKubeSpawner.followed_objects = [{"knd": "JupyterServer"}]\n',
     "c.RichKubeSpawner.followed_objects[0]", "knd", "allowed: ['api_version', 'kind', 'name']"),
    ("followed-a-string", 'c.RichKubeSpawner.followed_objects = "JupyterServer"\n',
     "c.RichKubeSpawner.followed_objects", "'JupyterServer'", "a list of {'kind', 'name', 'api_version'} dicts"),
    ("followed-name-field-typo", 'c.RichKubeSpawner.followed_objects = [{"kind": "JupyterServer", "name": "{pod_nmae}"}]\n',
     "c.RichKubeSpawner.followed_objects[0]", "{pod_nmae}", "fields: {pod_name}"),
    ("followed-callable-without-argument", "c.RichKubeSpawner.followed_objects = lambda: []\n",
     "c.RichKubeSpawner.followed_objects", "<function <lambda>", "take the spawner"),
    # -- the spawner's numbers and texts
    ("max-records-zero", "c.RichKubeSpawner.spawn_timeline_max_records = 0\n",
     "c.RichKubeSpawner.spawn_timeline_max_records", "= 0", "a whole number, at least 1"),
    ("max-records-negative", "c.RichProgressMixin.spawn_timeline_max_records = -5\n",
     "c.RichProgressMixin.spawn_timeline_max_records", "= -5", "a whole number, at least 1"),
    ("patience-after-negative", "c.RichKubeSpawner.patience_after = -30\n",
     "c.RichKubeSpawner.patience_after", "= -30", "seconds, 0 (no still-waiting rows) or more"),
    ("patience-growth-one", "c.RichKubeSpawner.patience_growth = 1\n",
     "c.RichKubeSpawner.patience_growth", "= 1", "a number greater than 1"),
    ("patience-message-attribute", 'c.RichKubeSpawner.patience_message = "{waiting_for.__class__}"\n',
     "c.RichKubeSpawner.patience_message", "{waiting_for.__class__}", "plain names only"),
    ("patience-message-index", 'c.RichKubeSpawner.patience_message = "{elapsed[0]}"\n',
     "c.RichKubeSpawner.patience_message", "{elapsed[0]}", "plain names only"),
    ("patience-message-field-typo", 'c.RichKubeSpawner.patience_message = "Still waiting for {waitng_for}"\n',
     "c.RichKubeSpawner.patience_message", "{waitng_for}", "naming only {waiting_for}, {elapsed}, {seconds}"),
    ("patience-waiting-for-not-a-step", 'c.RichKubeSpawner.patience_waiting_for = {"pulling": "the image"}\n',
     "c.RichKubeSpawner.patience_waiting_for", "'pulling'", "is no step"),
    ("fail-fast-a-word", 'c.RichKubeSpawner.fail_fast = "no"\n',
     "c.RichKubeSpawner.fail_fast", "'no'", "True or False"),
    ("fail-fast-repeats-negative", "c.RichKubeSpawner.fail_fast_repeats = -1\n",
     "c.RichKubeSpawner.fail_fast_repeats", "= -1", "0 (do not count) or more"),
    ("fail-fast-hold-infinite", 'c.RichKubeSpawner.fail_fast_hold = float("inf")\n',
     "c.RichKubeSpawner.fail_fast_hold", "= inf", "seconds, 0 (do not time) or more"),
    ("clock-skew-negative", "c.RichKubeSpawner.event_clock_skew = -5\n",
     "c.RichKubeSpawner.event_clock_skew", "= -5", "seconds, 0 to 3600"),
    ("pvc-events-a-word", 'c.RichKubeSpawner.pvc_events_enabled = "yes"\n',
     "c.RichKubeSpawner.pvc_events_enabled", "'yes'", "True or False"),
    ("related-events-a-word", 'c.RichKubeSpawner.follow_related_events = "yes"\n',
     "c.RichKubeSpawner.follow_related_events", "'yes'", "True or False"),
    ("spawner-setting-typo", "c.RichKubeSpawner.fail_fsat = False\n",
     "c.RichKubeSpawner.fail_fsat", "'fail_fsat'", "did you mean 'fail_fast'?"),
    ("kubespawner-section", 'c.KubeSpawner.fail_fast = "off"\n',
     "c.KubeSpawner.fail_fast", "'off'", "True or False"),
    ("profile-override", 'c.KubeSpawner.profile_list = [{"slug": "gpu", "display_name": "GPU", "kubespawner_override": {"fail_fast_hold": -1}}]\n',
     "c.KubeSpawner.profile_list[0].kubespawner_override.fail_fast_hold", "= -1", "seconds, 0 (do not time) or more"),
    ("profile-override-typo", 'c.KubeSpawner.profile_list = [{"slug": "gpu", "display_name": "GPU", "kubespawner_override": {"show_contianer_log": "nobody"}}]\n',
     "c.KubeSpawner.profile_list[0].kubespawner_override.show_contianer_log", "'show_contianer_log'", "did you mean 'show_container_log'?"),
    ("profile-choice-override", ('c.KubeSpawner.profile_list = [{"slug": "x", "display_name": "X", "profile_options": {"size": {"display_name": "Size", '
                                 '"choices": {"big": {"display_name": "Big", "kubespawner_override": {"spawn_timeline_max_records": 0}}}}}}]\n'),
     "c.KubeSpawner.profile_list[0].profile_options['size'].choices['big'].kubespawner_override.spawn_timeline_max_records",
     "= 0", "a whole number, at least 1"),
    # -- the spawn history: these broke storing, or its pages, at the first spawn
    ("keep-zero", "c.SpawnHistory.keep_per_server = 0\n",
     "c.SpawnHistory.keep_per_server", "= 0", "a whole number, at least 1"),
    ("keep-a-word", 'c.SpawnHistory.keep_per_server = "many"\n',
     "c.SpawnHistory.keep_per_server", "'many'", "a whole number, at least 1"),
    ("memory-servers-negative", "c.SpawnHistory.memory_servers = -1\n",
     "c.SpawnHistory.memory_servers", "= -1", "a whole number, at least 1"),
    ("max-age-negative", "c.SpawnHistory.max_age_days = -1\n",
     "c.SpawnHistory.max_age_days", "= -1", "days, 0 (no age limit) to 36500"),
    ("max-age-overflows", "c.SpawnHistory.max_age_days = 1e12\n",
     "c.SpawnHistory.max_age_days", "= 1000000000000.0", "to 36500"),
    ("retry-negative", "c.SpawnHistory.retry_seconds = -1\n",
     "c.SpawnHistory.retry_seconds", "= -1", "seconds, 0 or more"),
    ("sweep-a-word", 'c.SpawnHistory.sweep_seconds = "hourly"\n',
     "c.SpawnHistory.sweep_seconds", "'hourly'", "seconds, 0 or more"),
    ("history-setting-typo", "c.SpawnHistory.keep_per_sever = 5\n",
     "c.SpawnHistory.keep_per_sever", "'keep_per_sever'", "did you mean 'keep_per_server'?"),
    ("url-hub-file-with-query", 'c.SpawnHistory.url = "sqlite:////srv/jupyterhub/jupyterhub.sqlite?timeout=5"\n',
     "c.SpawnHistory.url", "jupyterhub.sqlite?timeout=5", "is JupyterHub's own database"),
    ("url-hub-file-by-another-path", 'c.SpawnHistory.url = "sqlite:////srv/jupyterhub/./../jupyterhub/jupyterhub.sqlite"\n',
     "c.SpawnHistory.url", "/./../jupyterhub/", "is JupyterHub's own database"),
    ("url-hub-db-url", ('c.JupyterHub.db_url = "sqlite:///" + tmp + "/hub.sqlite"\n'
                        'c.SpawnHistory.url = "sqlite:///" + tmp + "/./hub.sqlite?timeout=5"\n'),
     "c.SpawnHistory.url", "hub.sqlite?timeout=5", "is JupyterHub's own database"),
    ("url-hub-db-hard-link", ('c.JupyterHub.db_url = "sqlite:///" + tmp + "/hub.sqlite"\n'
                              'import os; open(tmp + "/hub.sqlite", "a").close(); os.link(tmp + "/hub.sqlite", tmp + "/history.sqlite")\n'
                              'c.SpawnHistory.url = "sqlite:///" + tmp + "/history.sqlite"\n'),
     "c.SpawnHistory.url", "history.sqlite", "is JupyterHub's own database"),
    ("url-trailing-slash", 'c.SpawnHistory.url = "sqlite:////srv/jupyterhub/history/"\n',
     "c.SpawnHistory.url", "history/'", "names a folder, not a file"),
    ("spool-empty", 'c.SpawnHistory.spool_path = ""\n',
     "c.SpawnHistory.spool_path", "''", "an empty path: name a file, or set spool_max_bytes = 0"),
    ("spool-a-folder", 'c.SpawnHistory.spool_path = tmp\n',
     "c.SpawnHistory.spool_path", "", "names a folder, not a file"),
    ("spool-folder-missing", 'c.SpawnHistory.spool_path = tmp + "/no-such-folder/history.spool"\n',
     "c.SpawnHistory.spool_path", "no-such-folder/history.spool", "does not exist"),
    ("url-in-memory", 'c.SpawnHistory.url = "sqlite://"\n',
     "c.SpawnHistory.url", "'sqlite://'", "keeps nothing"),
    ("url-unknown-database", 'c.SpawnHistory.url = "postgress://richprogress@db/richprogress"\n',
     "c.SpawnHistory.url", "postgress://", "SQLAlchemy knows no database 'postgress'"),
    ("url-not-a-url", 'c.SpawnHistory.url = "db.example.org:5432"\n',
     "c.SpawnHistory.url", "'db.example.org:5432'", "not a SQLAlchemy URL"),
    # -- typical times
    ("expected-key-typo", 'c.TypicalTimes.expected = {"*": {"totl": 60}}\n',
     "c.TypicalTimes.expected['*']", "'totl'", "use 'total' or a step"),
    ("window-zero", "c.TypicalTimes.window_days = 0\n",
     "c.TypicalTimes.window_days", "= 0", "more than 0 and at most 36500"),
    ("min-samples-zero", "c.TypicalTimes.min_samples = 0\n",
     "c.TypicalTimes.min_samples", "= 0", "a whole number, at least 1"),
    ("max-samples-negative", "c.TypicalTimes.max_samples = -1\n",
     "c.TypicalTimes.max_samples", "= -1", "a whole number, at least 1"),
]


@pytest.mark.parametrize(("lines", "setting", "value", "allowed"), [pytest.param(*case[1:], id=case[0]) for case in BAD])
def test_a_bad_setting_is_refused_when_the_config_loads(tmp_path: Path, lines: str, setting: str, value: str, allowed: str) -> None:
    refused_when_loaded(tmp_path, lines, setting, value, allowed)


def test_several_bad_settings_are_named_in_the_one_line() -> None:
    with pytest.raises(SettingsError) as refused:
        loaded("c.SpawnHistory.keep_per_server = 0\nc.TypicalTimes.min_samples = 0\nc.RichKubeSpawner.fail_fast = 'x'\n")
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith("richprogress: c.SpawnHistory.keep_per_server = 0: a whole number, at least 1")
    assert line.endswith("(and 2 more: c.TypicalTimes.min_samples, c.RichKubeSpawner.fail_fast)")


def test_a_spawners_own_section_is_checked_too() -> None:
    # c.MySpawner.fail_fast configures a subclass of the mixin: it is checked as ours
    c = Config()
    richprogress.setup(c)
    from jupyterhub.spawner import LocalProcessSpawner

    from richprogress import RichProgressMixin

    class MySpawner(RichProgressMixin, LocalProcessSpawner):
        pass

    c.JupyterHub.spawner_class = MySpawner
    c.MySpawner.spawn_timeline_max_records = 0
    with pytest.raises(SettingsError, match=r"^richprogress: c\.MySpawner\.spawn_timeline_max_records = 0: "):
        JupyterHub(config=c)


def test_a_command_line_setting_is_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "jupyterhub_config.py"
    config.write_text("import richprogress\nrichprogress.setup(c)\n")
    app = JupyterHub()
    app.log.setLevel(logging.CRITICAL)
    app.parse_command_line(["--SpawnHistory.keep_per_server=0"])
    monkeypatch.setattr(Application, "_instance", app, raising=False)
    with pytest.raises(SystemExit) as exited:
        app.load_config_file(str(config))  # JupyterHub's own "Bad config" path: exit 1
    assert exited.value.code == 1


# -- good config loads ----------------------------------------------------------------------


def _readme_blocks() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return [block for block in re.findall(r"```python\n(.*?)```", readme, re.S) if "c.EventFormatter" in block]


GOOD = [
    pytest.param("", id="setup-only"),
    pytest.param(f"c.EventFormatter.rules = {PR910_RULES!r}\n", id="pr910-rules"),
    *[pytest.param(block, id=f"readme-knobs-{i}") for i, block in enumerate(_readme_blocks())],
    pytest.param(
        'c.RichKubeSpawner.followed_objects = [{"kind": "JupyterServer", "api_version": "hub.example.org/v1alpha1", "name": "{pod_name}"}, {"kind": "Certificate", "name": "{username}-tls"}]\n'
        "c.RichKubeSpawner.followed_objects = lambda spawner: []\n"
        'c.RichKubeSpawner.patience_waiting_for = {"requested": "a free GPU", "scaling:warning": "a machine"}\n'
        'c.RichKubeSpawner.patience_message = "Still waiting for {waiting_for} ({elapsed}, {seconds:d} s)"\n'
        "c.RichKubeSpawner.fail_fast_repeats = 0\nc.RichKubeSpawner.fail_fast_hold = 0\n"
        "c.RichKubeSpawner.image = 'quay.io/jupyter/base-notebook'\nc.RichProgressMixin.start_timeout = 600\n"
        'c.SpawnHistory.url = "sqlite:///" + tmp + "/history.sqlite?timeout=5"\nc.SpawnHistory.max_age_days = 0\n'
        "c.SpawnHistory.retry_seconds = 0\nc.SpawnHistory.sweep_seconds = 0\n"
        'c.TypicalTimes.expected = {"*": {"total": [60, 180], "scaling": [120, 240]}, "gpu": {"total": [300, 600], "image": 240}}\n',
        id="documented-examples",
    ),
]


@pytest.mark.parametrize("lines", GOOD)
def test_good_config_loads(tmp_path: Path, lines: str) -> None:
    app = loaded(lines, tmp=tmp_path)
    assert "richprogress" in app.template_vars


def test_the_pr910_rules_load_unchanged_as_a_dict() -> None:
    c = Config()
    richprogress.setup(c)
    c.EventFormatter.rules = {f"{i:02d}": rule for i, rule in enumerate(PR910_RULES)}
    check_settings(c)


def _load_file(path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Config:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    loader = PyFileConfigLoader(path.name, str(path.parent))
    return loader.load_config()


def test_the_demo_config_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _load_file(REPO / "richprogress" / "demo" / "jupyterhub_config.py", {"RICHPROGRESS_DEMO_WORKDIR": str(tmp_path)}, monkeypatch)
    app = JupyterHub(config=config)  # the check runs as the config loads: nothing refused
    assert "richprogress" in app.template_vars


def test_the_example_config_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    config = _load_file(REPO / "examples" / "jupyterhub_config.py", {}, monkeypatch)
    app = JupyterHub(config=config)
    assert "richprogress" in app.template_vars


# -- a real jupyterhub process ----------------------------------------------------------------

REAL_BAD = [
    pytest.param(rules('{"match": {"message": "(["}, "template": "x"}'),
                 "richprogress: c.EventFormatter.rules[3] (id 'rule-3'): match['message'] is not a valid regular expression '(['",
                 id="rule-bad-regex"),
    pytest.param('c.RichKubeSpawner.followed_objects = [{"knd": "JupyterServer"}]\n',
                 "richprogress: c.RichKubeSpawner.followed_objects[0]: unknown key(s) ['knd']", id="followed-typo"),
    pytest.param('c.SpawnHistory.url = "sqlite:///" + os.getcwd() + "/jupyterhub.sqlite?timeout=5"\n',
                 "richprogress: c.SpawnHistory.url = 'sqlite:///", id="url-hub-file-with-query"),
]


@pytest.mark.parametrize(("lines", "line"), REAL_BAD)
def test_a_real_hub_with_a_bad_setting_does_not_start(tmp_path: Path, lines: str, line: str) -> None:
    refused_at_start(tmp_path, lines, line)


GOOD_SPAWNER = """
import richprogress
from jupyterhub.spawner import LocalProcessSpawner
from richprogress import RichProgressMixin

class Spawner(RichProgressMixin, LocalProcessSpawner):
    pass
"""


def test_a_real_hub_with_good_settings_starts(tmp_path: Path) -> None:
    knobs = "\n".join(_readme_blocks())
    extra = f"richprogress.setup(c)\nc.EventFormatter.rules = {PR910_RULES!r}\n{knobs}\n"
    extra += 'c.SpawnHistory.url = "sqlite:///' + str(tmp_path / "history.sqlite") + '"\n'
    extra += "c.Spawner.patience_after = 10\nc.Spawner.spawn_timeline_max_records = 100\n"
    with hub_process(tmp_path, GOOD_SPAWNER, spawner_class="Spawner", users=["alice"], tokens={"admin": "token-admin-good-config"}, extra_config=extra) as hub:
        assert hub.api("", "admin").status_code == 200
    assert "richprogress:" not in hub.log.read_text()


def test_the_reference_says_what_every_setting_accepts() -> None:
    from richprogress.history.store import SpawnHistory
    from richprogress.kube.spawner import RichKubeSpawner
    from richprogress.stream.mixin import RichProgressMixin
    from richprogress.typical.cache import TypicalTimes
    from richprogress.wording.formatter import EventFormatter

    reference = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `(c\.\w+\.\w+)` \|.*$", reference, re.M)}
    missing = []
    for cls in (EventFormatter, RichProgressMixin, RichKubeSpawner, TypicalTimes, SpawnHistory):
        for name, trait in cls.class_traits(config=True).items():
            if not trait.this_class.__module__.startswith("richprogress") or trait.this_class is not cls:
                continue
            accepts = trait.metadata.get("allowed")
            row = rows.get(f"c.{cls.__name__}.{name}", "")
            if not accepts or accepts not in row:
                missing.append(f"c.{cls.__name__}.{name}")
    assert missing == []
