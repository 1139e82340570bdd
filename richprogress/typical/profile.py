"""Which profile a spawner started with: the one reader of a spawn's profile.

KubeSpawner keeps the chosen slug in ``user_options["profile"]``; a spawn that chose none
(one profile, or a spawn through the API) runs KubeSpawner's default: the profile marked
``default``, else the first one. Typical times, the metrics, the history and the facts an
admin sees all read the profile here, so they key a spawn alike. Every read is
getattr-safe: a spawner without profiles has none. No JupyterHub import here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def spawner_attr(spawner: Any, name: str) -> Any:
    """``spawner.name``, or None when it is missing or its property raises."""
    try:
        return getattr(spawner, name, None)
    except Exception:  # a property of a half-made spawner may raise
        return None


def nonempty_text(value: Any) -> str | None:
    """``value`` if it is a non-empty str, else None."""
    return value if isinstance(value, str) and value else None


def _profiles(spawner: Any) -> list[Mapping[str, Any]]:
    """The spawner's profiles: KubeSpawner's evaluated ``_profile_list`` (``profile_list``
    may be a callable), else ``profile_list`` itself."""
    profiles = spawner_attr(spawner, "_profile_list") or spawner_attr(spawner, "profile_list")
    if isinstance(profiles, Mapping):
        profiles = list(profiles.values())
    if not isinstance(profiles, (list, tuple)):
        return []
    return [profile for profile in profiles if isinstance(profile, Mapping)]


def chosen_profile(spawner: Any) -> tuple[str | None, Mapping[str, Any] | None]:
    """The slug of the spawner's profile and the profile's entry (None when unknown)."""
    options = spawner_attr(spawner, "user_options")
    slug = nonempty_text(options.get("profile")) if isinstance(options, Mapping) else None
    chosen: Mapping[str, Any] | None = None
    for profile in _profiles(spawner):
        if slug is not None:
            if profile.get("slug") == slug:
                return slug, profile
        elif profile.get("default"):
            chosen = profile
            break
        elif chosen is None:
            chosen = profile
    if chosen is None:
        return slug, None
    return slug or nonempty_text(chosen.get("slug")), chosen


def profile_slug_of(spawner: Any) -> str | None:
    """The slug of the profile a spawner started with; None without profiles."""
    return chosen_profile(spawner)[0]


def profile_name_of(spawner: Any) -> str | None:
    """The display name of the profile a spawner started with, if it has one."""
    profile = chosen_profile(spawner)[1]
    return nonempty_text(profile.get("display_name")) if profile is not None else None
