"""The cause reader: an error message no rule words, or one a rule words only as "failed",
said as the operation in words and its cause in words, keeping the decisive token.

``read_cause(message, container)`` parses the message (``error_chain``), classifies its
clauses (``error_classes``) and picks the cause: the innermost clause of a specific class,
else the innermost of a generic one. "Downloading the image quay.io/x:1 failed: the
registry's name quay.io could not be looked up (DNS)". None when no clause has a class, or
when the message names no operation and is no chain of a specific cause (a sentence a person
wrote reads alike): the event keeps its own words (the raw message is always in the row's
details).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from richprogress.wording.error_chain import ErrorChain, parse_chain
from richprogress.wording.error_classes import ErrorClass, Fixer, candidates, classify_lower


class ReadCause(NamedTuple):
    """What the cause reader found: the ``sentence`` (the operation and its cause), the
    ``cause`` alone and the ``hint`` to show, the ``error_class``,
    its ``fixer``, the ``phase`` of the operation (None when unknown), the raw innermost
    ``clause`` it classified, and the parsed ``chain``."""

    sentence: str
    #: the cause alone, in words ("the registry's name quay.io could not be looked up (DNS)")
    cause: str
    hint: str
    error_class: ErrorClass
    fixer: Fixer
    phase: str | None
    clause: str
    chain: ErrorChain


#: operation -> (how it reads, with {object} and {container}; the step it belongs to)
_OPERATION_WORDS: dict[str, tuple[str, str]] = {
    "pull": ("Downloading the image {object} for the {container} container", "image"),
    "inspect": ("Reading the image {object} on the machine", "image"),
    "mount": ("Mounting the volume {object}", "volume"),
    "unmount": ("Unmounting the volume {object}", "volume"),
    "attach": ("Attaching the disk {object} to the machine", "volume"),
    "provision": ("Creating a disk of storage class {object}", "volume"),
    "resize": ("Resizing the volume {object}", "volume"),
    "sandbox": ("Setting up your server's sandbox (its network and container runtime)", "starting"),
    "probe": ("The {probe} health check of the {container} container", "starting"),
    "start": ("Starting the {container} container", "starting"),
}


def _operation_words(chain: ErrorChain, container: str) -> tuple[str, str | None]:
    words = _OPERATION_WORDS.get(chain.operation)
    if words is None:
        return "", None
    template, phase = words
    obj = chain.object
    if chain.synced:  # the old kubelet's "failed to StartContainer for <c>": the object is the container
        container, obj = chain.object, ""
    sentence = template.format(object=obj, container=container or "server's", probe=obj.lower())
    return " ".join(sentence.split()).replace("the server's container", "your server's container"), phase


#: default rules whose sentence may say only that something failed: the cause reader words
#: why instead, when their sentence is the generic one (``_generic``)
SAYS_ONLY_FAILED = frozenset({
    "image-pull-failed", "volume-provisioning-failed", "volume-attach-failed", "volume-mount-failed",
    "container-unhealthy", "container-error", "sandbox-failed", "volume-resize-failed",
})
#: ... of which these keep their sentence (a health check failing at first is normal) and add why
KEEP_AND_ADD = frozenset({"container-unhealthy"})


def _generic(message: str | None) -> bool:
    """Whether a rule's sentence says only that something failed: "...; the cluster will try
    again" with no reason before it, "The x container could not start", a health check."""
    if not message:
        return True
    if message.endswith("the cluster will try again"):
        return ": " not in message
    return message.endswith(("container could not start", "probe)"))


def says_only_failed(rule_id: str | None, message: str | None) -> bool:
    """Whether the record a default rule ``rule_id`` made says only that something failed."""
    return rule_id in SAYS_ONLY_FAILED and _generic(message)


def pick(chain: ErrorChain) -> tuple[ErrorClass, str] | None:
    """The cause of ``chain``: the innermost clause of a specific class, else the innermost
    of a generic one, with its class; None when no clause has a class."""
    found = _pick(chain)
    return None if found is None else (found[0], found[1])


def _pick(chain: ErrorChain) -> tuple[ErrorClass, str, re.Match[str]] | None:
    among = candidates(" ".join(chain.causes).lower())
    if not among:
        return None  # the common case for a message no class knows: no pattern searched
    generic: tuple[ErrorClass, str, re.Match[str]] | None = None
    for clause in reversed(chain.causes):
        low = clause.lower()
        found = classify_lower(low, True, among)
        if found is not None:
            return found[0], clause, found[1]
        if generic is None:
            weak = classify_lower(low, False, among)
            if weak is not None:
                generic = (weak[0], clause, weak[1])
    return generic


def read_cause(message: str, container: str = "") -> ReadCause | None:
    """The sentence for ``message`` from its cause (see the module's docstring), or None."""
    chain = parse_chain(message)
    found = _pick(chain)
    if found is None:
        return None
    cls, clause, matched = found
    if not chain.operation and (not cls.specific or len(chain.causes) < 2):
        # no operation and no nesting: likely a sentence a person wrote, not an error chain
        # ("The image x does not exist."); a generic class alone says too little to reword it
        return None
    cause = cls.words(matched, chain, message[:4000])
    operation, phase = _operation_words(chain, container)
    if operation:
        sentence = f"{operation} failed: {cause}"
    else:
        sentence = cause[0].upper() + cause[1:]
    return ReadCause(sentence, cause, cls.hint, cls, cls.fixer, phase, clause, chain)
