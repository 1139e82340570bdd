"""What the diagnosis tells the user to do, and what it says when no record explains a
failure: the hints by kind of failure and by step, and the timeout sentence.
"""

from __future__ import annotations

from richprogress.model.records import PHASE_LABELS

# a namespace quota with no room left, and an admission webhook's "no": as the rules say them
from richprogress.wording.default_rules.refusals import HINT_QUOTA as HINT_QUOTA
from richprogress.wording.default_rules.refusals import HINT_WEBHOOK as HINT_WEBHOOK

# the server asks for a kind of machine the cluster has none of: only an admin can change that
from richprogress.wording.scheduling import HINT_NO_SUCH_MACHINE as HINT_NO_SUCH_MACHINE

# "your administrator", as the default rules' hints say it: one word for one person
ASK_ADMIN = "If it keeps failing, ask your administrator for help and send them this page."
HINT_RETRY = "Wait a few minutes and start your server again. " + ASK_ADMIN
HINT_IMAGE_NAME = (
    "Check the image name and tag you chose (spelling, registry, tag). "
    "If the name is right, the image may be private: ask your administrator for help and "
    "send them this page."
)
HINT_WRONG_PLATFORM = (
    "Choose another image or server option: this image has no build for the cluster's machines. "
    "If it should, ask your administrator for help and send them this page."
)
HINT_MACHINE_GONE = (
    "The machine your server was given went away (taken back by the cloud provider, or shut down). "
    "Start your server again: it will start on another machine."
)
HINT_ADMIN = "This needs your administrator: ask them for help and send them this page."
HINT_SMALLER = "Choose a smaller server option if there is one, or start again later. " + ASK_ADMIN
HINT_MEMORY = (
    "Your server used more memory than it is allowed. Choose an option with more memory if "
    "there is one, or start it with fewer things running. " + ASK_ADMIN
)
HINT_CRASH = (
    "Your server keeps stopping right after it starts. Ask your administrator for help and send them "
    "this page."
)
HINT_SLOW_IMAGE = (
    "The first download of a large image onto a machine can take many minutes; it is usually "
    "faster the next time. Start your server again. " + ASK_ADMIN
)

#: Hint by the step it died in, when neither the rule nor a known failure gives one.
PHASE_HINTS: dict[str, str] = {
    "requested": HINT_RETRY,
    "scheduling": HINT_RETRY,
    "scaling": HINT_RETRY,
    "scheduled": HINT_RETRY,
    "volume": HINT_ADMIN,
    "image": HINT_IMAGE_NAME,
    "starting": HINT_ADMIN,
    "ready": HINT_RETRY,
}

#: Hint for a timeout with no record explaining it: nothing was wrong, only slow.
TIMEOUT_HINTS: dict[str, str] = {**PHASE_HINTS, "image": HINT_SLOW_IMAGE, "volume": HINT_RETRY}

#: How "while ..." reads for each step in the timeout sentence (a label alone reads badly
#: for the steps named after a state, e.g. "Machine found").
_WHILE: dict[str, str] = {
    name: "while " + label[0].lower() + label[1:] for name, label in PHASE_LABELS.items()
}
_WHILE["scheduled"] = "just after a machine was found"
_WHILE["ready"] = "just as it was getting ready"


def timeout_sentence(phase: str | None) -> str:
    """What to say when the hub gave up and no record says why."""
    while_ = _WHILE.get(phase or "requested", _WHILE["requested"])
    return f"Your server did not start within the time limit {while_}."

