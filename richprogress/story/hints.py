"""What the diagnosis tells the user to do, and what it says when no record explains a
failure: the hints by kind of failure and by step, and the timeout sentence.
"""

from __future__ import annotations

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
    "The first download of a large image onto a machine can take many minutes. Start your server "
    "again: the next start may be faster, as the machine may have kept the image. " + ASK_ADMIN
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

#: Where the spawn was when the start time limit ran out, by the step it reached: said as
#: what it was still doing, so the sentence never says "did not start ... while starting".
_STILL: dict[str, str] = {
    "requested": "The cluster had not begun to start the server",
    "scheduling": "The server was still waiting for a machine to run it",
    "scaling": "The server was still waiting for a new machine to join the cluster",
    "scheduled": "A machine had just been found for the server",
    "volume": "The server was still waiting for its storage",
    "image": "The server was still pulling its image",
    "starting": "The server's container was still starting",
    "ready": "The server was just getting ready",
}


def timeout_sentence(phase: str | None, limit: str = "") -> str:
    """What to say when the hub gave up and no record says why: the step the spawn was
    still in when the limit (``limit``: "5 min", or "" when not known) ran out."""
    still = _STILL.get(phase or "requested", _STILL["requested"])
    ran_out = f"the {limit} start limit ran out" if limit else "the start time limit ran out"
    return f"{still} when {ran_out}."
