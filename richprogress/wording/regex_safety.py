"""Whether a rule's regular expression can take exponential time on some message.

Python's ``re`` backtracks, and cannot be interrupted: a pattern such as ``(a+)+$`` run on
forty ``a`` and a ``!`` (which an event's message can hold: a user-typed image name, a
file name) keeps the hub's event loop busy for minutes, and every user's page with it. The
shape that does it is a repeat inside a repeat (a "star height" of two, as the safe-regex
checker calls it): the outer one can split the same text among the inner one's turns in
exponentially many ways before it gives up. Read from the pattern's parse, not by running
it, so the check is instant and the same on every machine.

A repeat whose turns are set apart by a character its inner repeat cannot take
(``\\d+(\\.\\d+)*``), one that cannot backtrack (possessive, ``a++``, or inside an atomic
group ``(?>...)``, both new in Python 3.11) and a short one (``(a+){2}``) pass.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import Any

if sys.version_info >= (3, 11):
    from re import _constants as sre_constants
    from re import _parser as sre_parse
else:  # pragma: no cover - the same modules under their old names
    import sre_constants
    import sre_parse

__all__ = ["backtracking_problem"]

#: a repeat allowed more turns than this counts as unbounded (``{0,1000}`` backtracks too)
_BOUNDED = 10

_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT}
_POSSESSIVE = getattr(sre_constants, "POSSESSIVE_REPEAT", None)
_ATOMIC = getattr(sre_constants, "ATOMIC_GROUP", None)


def backtracking_problem(pattern: str) -> str | None:
    """Why ``pattern`` may take exponential time, in words; None if it cannot (or does not
    parse: compiling it says why)."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError):
        return None
    if _risky(list(parsed.data)):
        return (
            "it repeats a part that itself repeats (as in (a+)+), which can take exponential "
            "time on a message that almost matches; write it with one repeat (e.g. [\\w\\s]* "
            "rather than (\\w+\\s?)*), or make the inner one possessive (\\w++)"
        )
    return None


def _unbounded(av: Any) -> bool:
    high = av[1]
    return bool(high is sre_constants.MAXREPEAT or high > _BOUNDED)


def _flat(items: Iterable[Any]) -> list[Any]:
    """A sequence with its groups opened: ``(\\.\\d+)`` is ``\\.`` then ``\\d+``."""
    out: list[Any] = []
    for op, av in items:
        if op is sre_constants.SUBPATTERN:
            out.extend(_flat(av[-1]))
        else:
            out.append((op, av))
    return out


def _risky(items: list[Any]) -> bool:
    """True if an unbounded, backtracking repeat in ``items`` (at any depth) has a body in
    which an unbounded repeat can take its neighbours' text (nothing mandatory sets the
    turns apart)."""
    for op, av in items:
        if op is _ATOMIC or op is _POSSESSIVE:
            continue  # cannot backtrack into it
        if op in _REPEATS:
            body = _flat(av[2])
            if _unbounded(av) and any(_ambiguous(alternative) for alternative in _alternatives(body)):
                return True
            if _risky(list(av[2])):
                return True
            continue
        for child in _children(op, av):
            if _risky(list(child)):
                return True
    return False


def _alternatives(body: list[Any]) -> Iterable[list[Any]]:
    """The sequences a repeat's body can be: itself, and each branch's (opened)."""
    yield body
    for op, av in body:
        if op is sre_constants.BRANCH:
            for branch in av[1]:
                yield _flat(branch)


def _ambiguous(sequence: list[Any]) -> bool:
    """Whether one turn of an outer repeat over ``sequence`` can split its text in more than
    one way: it holds a repeat of variable length (``a+``, ``a{1,3}``), and every other part
    may match nothing or characters that repeat also takes."""
    for index, (op, av) in enumerate(sequence):
        if op not in _REPEATS or av[1] == av[0] or not _matches_text(av[2]):
            continue  # a fixed number of turns ({3}) takes its text one way only
        inner = _chars(av[2])
        others = sequence[:index] + sequence[index + 1 :]
        if not any(_separates(other, inner) for other in others):
            return True
    return False


def _separates(item: Any, inner: frozenset[str] | None) -> bool:
    """A part that must match a character the inner repeat cannot (a ``.`` between
    ``\\d+`` turns): it marks where one turn ends."""
    op, av = item
    if op in _REPEATS or op is _POSSESSIVE:
        if av[0] == 0:
            return False  # optional: it separates nothing
        item_chars = _chars(av[2])
    elif op is sre_constants.AT:
        return False
    else:
        item_chars = _chars([item])
    if item_chars is None or inner is None:
        return True  # not known here: trust it rather than refuse an admin's rule
    return not (item_chars & inner)


#: the characters tried when comparing what two parts match (ASCII, and some others
#: that categories such as \\w and \\s hold)
_SAMPLE = [chr(c) for c in range(1, 128)] + ["\u00e9", "\u00a0", "\u3000", "\u0663"]


def _chars(items: Iterable[Any]) -> frozenset[str] | None:
    """The sample characters a sequence of single-character parts can match; None when a
    part is not one."""
    found: set[str] = set()
    for op, av in items:
        if op is sre_constants.LITERAL:
            found.add(chr(av))
        elif op is sre_constants.NOT_LITERAL:
            found.update(c for c in _SAMPLE if c != chr(av))
        elif op is sre_constants.ANY:
            found.update(c for c in _SAMPLE if c != "\n")
        elif op is sre_constants.IN:
            found.update(c for c in _SAMPLE if _in_set(c, av))
        elif op in _REPEATS or op is _POSSESSIVE:
            inner = _chars(av[2])
            if inner is None:
                return None
            found |= inner
        elif op is sre_constants.SUBPATTERN:
            inner = _chars(av[-1])
            if inner is None:
                return None
            found |= inner
        else:
            return None
    return frozenset(found)


_CATEGORIES = {
    sre_constants.CATEGORY_DIGIT: re.compile(r"\d"),
    sre_constants.CATEGORY_NOT_DIGIT: re.compile(r"\D"),
    sre_constants.CATEGORY_SPACE: re.compile(r"\s"),
    sre_constants.CATEGORY_NOT_SPACE: re.compile(r"\S"),
    sre_constants.CATEGORY_WORD: re.compile(r"\w"),
    sre_constants.CATEGORY_NOT_WORD: re.compile(r"\W"),
}


def _in_set(char: str, members: list[Any]) -> bool:
    """Whether ``char`` is in a ``[...]`` set as parsed."""
    negate = False
    hit = False
    for op, av in members:
        if op is sre_constants.NEGATE:
            negate = True
        elif op is sre_constants.LITERAL:
            hit = hit or char == chr(av)
        elif op is sre_constants.RANGE:
            hit = hit or av[0] <= ord(char) <= av[1]
        elif op is sre_constants.CATEGORY:
            category = _CATEGORIES.get(av)
            hit = hit or (category is not None and category.match(char) is not None)
    return hit != negate


def _children(op: Any, av: Any) -> Iterable[Any]:
    """The sub-patterns of one parsed item (those that can hold repeats)."""
    if op is sre_constants.SUBPATTERN:
        yield av[-1]
    elif op is sre_constants.BRANCH:
        yield from av[1]
    elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
        yield av[1]
    elif op is sre_constants.GROUPREF_EXISTS:
        yield av[1]
        if av[2] is not None:
            yield av[2]


def _matches_text(body: Any) -> bool:
    """Whether a repeat's body matches text at all (a repeated empty group is no risk)."""
    return any(op is not sre_constants.AT for op, _ in body)
