"""Every richprogress setting checked when the hub starts: a bad one stops the hub, in one line.

Traitlets checks a class's settings when an object of it is made, and JupyterHub makes ours
late: the spawner (and with it the formatter and its rules) at each spawn, the spawn history
when the first spawn ends. So a bad value started a hub whose every spawn then failed. This
module runs each setting of each richprogress class through that class's own checks (its
traits' types and its ``@validate`` methods, on an object that is never initialized),
refuses names that are no setting of our classes (a typo would silently do nothing), and
checks our settings in a ``profile_list``'s ``kubespawner_override`` the same way.

When: ``richprogress.setup(c)`` leaves ``c.JupyterHub.template_vars`` as a
``CheckedTemplateVars``, a ``LazyConfigValue`` that traitlets resolves when JupyterHub loads
its config: after the whole config file ran (so settings written after ``setup(c)`` count,
as do command-line ones), before the hub writes its pid file or opens its database. A
``TraitError`` raised there is JupyterHub's own "bad config" path (traitlets'
``catch_config_error``): the hub logs one line and exits with status 1::

    [C ... JupyterHub application:120] Bad config encountered during initialization: richprogress: c.SpawnHistory.keep_per_server = 0: a whole number, at least 1
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Iterator
from typing import Any

from traitlets import TraitError, TraitType
from traitlets.config import Config, Configurable, LazyConfigValue
from traitlets.config.loader import DeferredConfig

from richprogress.model.settings import show

__all__ = ["CheckedTemplateVars", "SettingsError", "check_settings", "settings_problems"]

#: the sections named after our own classes: a name in them that is no setting is refused
OUR_SECTIONS = ("EventFormatter", "SpawnHistory", "TypicalTimes", "RichProgressMixin", "RichKubeSpawner")


class SettingsError(TraitError):
    """A richprogress setting the hub must not start with; its text is the one line."""


def _our_classes(config: Config) -> list[type[Configurable]]:
    """The richprogress classes whose settings ``config`` may hold (the hub's spawner class
    too, when it mixes ours in: ``c.MySpawner.fail_fast`` configures it)."""
    from richprogress.history.store import SpawnHistory
    from richprogress.stream.mixin import RichProgressMixin
    from richprogress.typical.cache import TypicalTimes
    from richprogress.wording.formatter import EventFormatter

    classes: list[type[Configurable]] = [EventFormatter, SpawnHistory, TypicalTimes, RichProgressMixin]
    spawner = _spawner_class(config)
    if spawner is not None and issubclass(spawner, RichProgressMixin):
        classes.append(spawner)
    if config._has_section("RichKubeSpawner") and not any(c.__name__ == "RichKubeSpawner" for c in classes):
        try:
            from richprogress.kube.spawner import RichKubeSpawner
        except ImportError:  # no kubespawner: its section configures nothing here
            pass
        else:
            classes.append(RichKubeSpawner)
    return classes


def _spawner_class(config: Config) -> type | None:
    """``c.JupyterHub.spawner_class`` resolved as JupyterHub resolves it; None when unset or
    unresolvable (JupyterHub says so itself)."""
    if not config._has_section("JupyterHub") or "spawner_class" not in config.JupyterHub:
        return None
    value = config.JupyterHub.spawner_class
    if isinstance(value, type):
        return value
    try:
        from jupyterhub.app import JupyterHub

        resolved = JupyterHub.class_traits()["spawner_class"].validate(None, value)
    except Exception:
        return None
    return resolved if isinstance(resolved, type) else None


def _ours(trait: TraitType[Any, Any]) -> bool:
    owner = getattr(trait, "this_class", None)
    return bool(owner is not None and owner.__module__.startswith("richprogress."))


def _resolved(value: Any, trait: TraitType[Any, Any]) -> Any:
    """A config value as the trait would get it (``c.X.y.append(...)``, command-line text)."""
    if isinstance(value, LazyConfigValue):
        return copy.deepcopy(value).get_value(trait.default())
    if isinstance(value, DeferredConfig):
        return value.get_value(trait)
    return value


def _values(cls: type[Configurable], config: Config) -> Iterator[tuple[str, str, Any]]:
    """(section, name, value) of each setting ``config`` holds for ``cls``: the most
    derived section wins, as when traitlets loads them."""
    found: dict[str, tuple[str, Any]] = {}
    for section in cls.section_names():  # base classes first
        if config._has_section(section):
            for name, value in config[section].items():
                if not isinstance(value, Config):
                    found[name] = (section, value)
    for name, (section, value) in found.items():
        yield section, name, value


def _problem(obj: Configurable, trait: TraitType[Any, Any], section: str, value: Any) -> str | None:
    """Why ``value`` cannot be the trait's, as one line naming ``c.{section}.{name}``."""
    name = trait.name
    setting = f"c.{section}.{name}"
    try:
        value = _resolved(value, trait)
        if value is None and trait.allow_none:
            return None
        checked = trait.validate(obj, value) if hasattr(trait, "validate") else value
    except TraitError:
        what = trait.metadata.get("allowed") or f"expected {trait.info()}"
        return f"{setting} = {show(value)}: {what}"
    try:
        trait._cross_validate(obj, checked)
    except TraitError as exc:
        text = " ".join(str(exc).split())
        # our validators name the setting c.{Class}.{name}: say it as the config did
        own = f"c.{type(obj).__name__}.{name}"
        return setting + text[len(own) :] if text.startswith(own) else f"{setting} = {show(value)}: {text}"
    except Exception as exc:  # a validator that fails is a value it cannot take either
        return f"{setting} = {show(value)}: {type(exc).__name__}: {' '.join(str(exc).split())}"
    return None


def _cross_problems(config: Config) -> Iterator[tuple[str, str]]:
    """Problems of one setting seen with another: the history in JupyterHub's own file."""
    if not config._has_section("SpawnHistory") or "url" not in config.SpawnHistory:
        return
    url = config.SpawnHistory.url
    hub_url = config.JupyterHub.get("db_url") if config._has_section("JupyterHub") else None
    if isinstance(url, str) and isinstance(hub_url, str):
        from richprogress.history.url_check import url_problem

        problem = url_problem(url, hub_url)
        if problem:
            yield "c.SpawnHistory.url", f"c.SpawnHistory.url = {show(url)}: {problem} (c.JupyterHub.db_url = {show(hub_url)})"


def settings_problems(config: Config) -> dict[str, str]:
    """Each refused setting (``c.Section.name``) and the line that says why: names that are
    no setting first, then values class by class, then those seen with another setting,
    then our settings in the spawner's profiles."""
    problems: dict[str, str] = {}
    classes = _our_classes(config)
    # a section's settings are those of every class it configures (c.RichProgressMixin.image
    # configures RichKubeSpawner's image)
    known: dict[str, set[str]] = {}
    for cls in classes:
        names = set(cls.class_traits(config=True))
        for section in cls.section_names():
            known.setdefault(section, set()).update(names)
    for section in OUR_SECTIONS:
        if section in known and config._has_section(section):
            for name, value in config[section].items():
                if name not in known[section] and not isinstance(value, Config):
                    problems[f"c.{section}.{name}"] = (
                        f"c.{section}.{name}: {section} has no setting {name!r}" + _did_you_mean(name, known[section])
                    )
    for cls in classes:
        obj = cls.__new__(cls)  # traits set up, validators bound; never initialized
        traits = cls.class_traits(config=True)
        for section, name, value in _values(cls, config):
            setting = f"c.{section}.{name}"
            trait = traits.get(name)
            if setting in problems or trait is None:
                continue
            if not _ours(trait):
                continue  # KubeSpawner's or JupyterHub's own: theirs to check
            problem = _problem(obj, trait, section, value)
            if problem:
                problems[setting] = problem
    for setting, problem in _cross_problems(config):
        problems.setdefault(setting, problem)
    for cls in [c for c in classes if "profile_list" in c.class_traits()]:  # KubeSpawner's profiles
        for setting, problem in _override_problems(cls, config):
            problems.setdefault(setting, problem)
    return problems


def _overrides(profiles: Any) -> Iterator[tuple[str, Any]]:
    """(where, override dict) of each ``kubespawner_override`` of a ``profile_list``: the
    profiles' own, and those of their options' choices."""
    if not isinstance(profiles, list):
        return  # a callable: its profiles are known only at a spawn
    for i, profile in enumerate(profiles):
        if not isinstance(profile, dict):
            continue
        yield f"[{i}].kubespawner_override", profile.get("kubespawner_override")
        options = profile.get("profile_options")
        for option_name, option in (options.items() if isinstance(options, dict) else ()):
            choices = option.get("choices") if isinstance(option, dict) else None
            for choice_name, choice in (choices.items() if isinstance(choices, dict) else ()):
                if isinstance(choice, dict):
                    where = f"[{i}].profile_options[{option_name!r}].choices[{choice_name!r}].kubespawner_override"
                    yield where, choice.get("kubespawner_override")


def _override_problems(cls: type[Configurable], config: Config) -> Iterator[tuple[str, str]]:
    """Our settings in a profile's ``kubespawner_override``, which KubeSpawner applies at a
    spawn (where a bad one would fail that spawn): checked now like the others."""
    traits = cls.class_traits(config=True)
    found = {name: (section, value) for section, name, value in _values(cls, config)}
    if "profile_list" not in found:
        return
    section, profiles = found["profile_list"]
    obj = cls.__new__(cls)
    ours = {name for name, trait in traits.items() if _ours(trait)}
    for where, override in _overrides(profiles):
        for name, value in (override.items() if isinstance(override, dict) else ()):
            trait = traits.get(name)
            if trait is None and not hasattr(cls, name) and (close := _did_you_mean(name, ours)):
                # KubeSpawner sets any name it is given, so a misspelt one of ours would do
                # nothing, silently; a name close to none of ours is KubeSpawner's to judge
                setting = f"c.{section}.profile_list{where}.{name}"
                yield setting, f"{setting}: {cls.__name__} has no setting {name!r}{close}"
            elif trait is not None and _ours(trait):
                problem = _problem(obj, trait, f"{section}.profile_list{where}", value)
                if problem:
                    yield f"c.{section}.profile_list{where}.{name}", problem


def _did_you_mean(name: str, names: set[str]) -> str:
    from difflib import get_close_matches

    close = get_close_matches(name, sorted(names), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_settings(config: Config) -> None:
    """Raise ``SettingsError`` (one line) if ``config`` holds a setting richprogress refuses:
    the first one, and the names of any others."""
    problems = settings_problems(config)
    if not problems:
        return
    first, *others = problems.values()
    line = f"richprogress: {first}"
    if others:
        line += f" (and {len(others)} more: {', '.join(list(problems)[1:])})"
    raise SettingsError(line)


class CheckedTemplateVars(LazyConfigValue):
    """``c.JupyterHub.template_vars`` as ``setup(c)`` leaves it: the same update of the
    option, and ``check_settings`` on the whole config when JupyterHub loads it.

    It keeps the config that ``setup`` was given (a weak reference: the config owns this
    value), which by the time JupyterHub loads it holds everything the file set; the
    running hub's command-line settings are added to it.
    """

    def __init__(self, config: Config, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._config_ref = weakref.ref(config)

    def get_value(self, initial: Any) -> Any:
        config = self._config_ref()
        if config is not None:
            check_settings(_with_command_line(config))
        return super().get_value(initial)


def _with_command_line(config: Config) -> Config:
    """``config`` with the running application's command-line settings, which win."""
    try:
        from traitlets.config import Application

        cli = Application.instance().cli_config if Application.initialized() else None
    except Exception:
        cli = None
    if not cli:
        return config
    merged = Config()
    merged.merge(config)
    merged.merge(cli)
    return merged
