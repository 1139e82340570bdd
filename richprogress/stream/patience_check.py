"""Whether the "still waiting" settings can be said: ``patience_message`` and
``patience_waiting_for`` (the mixin's validators call these).

A template that names a field the row is not given, or a key that is no step, would not
break a spawn (the row falls back to a plain sentence, the entry is never read), but it
would never say what the admin wrote: so the hub refuses them at start.
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter
from typing import Any

from richprogress.model.records import PHASE_NAMES, SEVERITIES

__all__ = ["MESSAGE_FIELDS", "message_problem", "waiting_for_problem"]

#: the fields ``patience_message`` may name
MESSAGE_FIELDS = ("waiting_for", "elapsed", "seconds")


def message_problem(template: str) -> str | None:
    """What is wrong with a ``patience_message`` template; None if it renders.

    Fields are plain names: ``str.format`` would also follow ``{waiting_for.__class__}`` or
    ``{seconds[0]}`` into the value's attributes and items, which no message needs and an
    admin's template should not be able to reach.
    """
    try:
        fields = [field for _, field, spec, _ in Formatter().parse(template) if field is not None]
        for field in fields:
            if field not in MESSAGE_FIELDS:
                return (
                    f"it names {{{field}}}, which is not one of its fields "
                    f"({', '.join('{' + f + '}' for f in MESSAGE_FIELDS)}; plain names only)"
                )
        template.format(waiting_for="a machine", elapsed="+1:30", seconds=90)
    except (KeyError, IndexError, AttributeError) as exc:
        return f"it names a field it is not given ({exc}); fields: {', '.join('{' + f + '}' for f in MESSAGE_FIELDS)}"
    except ValueError as exc:
        return f"it is not a valid template ({exc})"
    return None


def waiting_for_problem(value: Mapping[Any, Any]) -> str | None:
    """What is wrong with a ``patience_waiting_for`` dict; None if nothing is."""
    for key, text in value.items():
        step, _, severity = str(key).partition(":")
        if not isinstance(key, str) or step not in PHASE_NAMES or (severity and severity not in SEVERITIES):
            return f"key {key!r} is no step (steps: {', '.join(PHASE_NAMES)}; or 'step:severity' with {', '.join(SEVERITIES)})"
        if not isinstance(text, str) or not text.strip():
            return f"the text for {key!r} must be a non-empty string, not {text!r}"
    return None
