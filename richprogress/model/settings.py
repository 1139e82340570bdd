"""How a refused setting is said: one line naming the setting, its value and what is allowed.

Every richprogress config class checks its settings with traitlets ``@validate`` methods,
and the hub's start-up check (``richprogress.settings_check``) runs the same methods on the
config before the hub opens its database. Both say a refusal the same way::

    c.SpawnHistory.keep_per_server = 0: a whole number, at least 1

Each config trait carries what it accepts in its ``allowed`` metadata (``.tag(allowed=...)``),
so a value of the wrong type is refused in the same words as one out of range, and the
configuration reference (docs/configuration.md) lists the same words.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

from traitlets import HasTraits, TraitError

__all__ = ["allowed", "check_number", "refusal", "setting_name", "show", "takes_arguments"]

#: the longest value a refusal shows whole (a 10 kB rules dict says nothing more at 10 kB)
_SHOW_LIMIT = 160


def show(value: Any) -> str:
    """``value`` as a refusal shows it: its repr (controls escaped), on one line, cut short."""
    try:
        text = repr(value)
    except Exception:  # a repr that raises is the admin's, and must not hide the refusal
        text = f"<{type(value).__name__}>"
    text = " ".join(text.split())
    if len(text) > _SHOW_LIMIT:
        text = text[:_SHOW_LIMIT] + "..."
    return text


def setting_name(owner: HasTraits | type[HasTraits], name: str) -> str:
    """``c.Class.name`` for a trait of ``owner`` (an instance or the class)."""
    cls = owner if isinstance(owner, type) else type(owner)
    return f"c.{cls.__name__}.{name}"


def allowed(owner: HasTraits | type[HasTraits], name: str) -> str:
    """What the trait ``name`` of ``owner`` accepts, in words (its ``allowed`` metadata)."""
    trait = owner.class_traits()[name] if isinstance(owner, type) else owner.traits()[name]
    return str(trait.metadata.get("allowed") or f"expected {trait.info()}")


def refusal(owner: HasTraits | type[HasTraits], name: str, value: Any, why: str | None = None) -> TraitError:
    """The error refusing ``value`` for the trait ``name`` of ``owner``:
    ``c.Class.name = value: what is allowed`` (and ``why``, when there is more to say)."""
    text = f"{setting_name(owner, name)} = {show(value)}: {allowed(owner, name)}"
    if why:
        text += f" ({' '.join(why.split())})"
    return TraitError(text)


def check_number(
    owner: HasTraits,
    proposal: Any,
    *,
    least: float | None = None,
    above: float | None = None,
    most: float | None = None,
) -> Any:
    """A ``@validate`` body for a number: finite, and within the bounds given; the value,
    or the trait's refusal."""
    name = proposal["trait"].name
    value = proposal["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise refusal(owner, name, value)
    if (least is not None and value < least) or (above is not None and value <= above):
        raise refusal(owner, name, value)
    if most is not None and value > most:
        raise refusal(owner, name, value)
    return value


def takes_arguments(function: Any, count: int) -> bool:
    """Whether ``function`` can be called with ``count`` positional arguments (True when
    its signature cannot be read, as for some builtins: trust those)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(*([None] * count))
    except TypeError:
        return False
    return True
