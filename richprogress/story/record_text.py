"""A record's text fields, read without trusting their types.

Records may come from a user's ``format_hook``, so a field meant to hold a string may hold
anything; the story's modules read them through ``text_field``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def text_field(record: Mapping[str, Any], key: str) -> str | None:
    """A string field, or None when the record has no string there."""
    value = record.get(key)
    return value if isinstance(value, str) else None
