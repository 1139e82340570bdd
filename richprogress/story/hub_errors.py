"""The hub's own verdict on a spawn, read from its error's text: which time limit ran out.

A spawn that no event explains still ended for a reason the hub or KubeSpawner stated:

- JupyterHub's ``http_timeout``: the server's container runs, but nothing answered the hub's
  HTTP check in time: ``Server at http://10.1.2.3:8888/user/x/ didn't respond in 30 seconds``
  (``jupyterhub.utils.wait_for_http_server``, the same text in JupyterHub 5.5 and 6.1);
- the start timeout: KubeSpawner's ``pod jhub/jupyter-x did not start in 300 seconds!``
  (kubespawner 7.1, ``_start``), or ours when the hub's own ``start_timeout`` cancelled the
  start (``stream.spawn_end.failure_message``: ``The server did not start within 300 seconds.``).

``read_hub_error`` tells them apart; ``no_answer_sentence`` words the first. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from richprogress.model.times import format_duration

HubErrorKind = Literal["no-answer", "start-timeout"]

# jupyterhub/utils.py: f"Server at {url} didn't respond in {timeout} seconds"
_NO_ANSWER = re.compile(
    r"Server at (?P<url>\S+?) didn['\u2019]t respond in (?P<seconds>\d+(?:\.\d+)?) seconds", re.IGNORECASE
)
# kubespawner/spawner.py: f'pod {ref_key} did not start in {self.start_timeout} seconds!'
# stream/spawn_end.py: f"The server did not start within {start_timeout:g} seconds."
_START_TIMEOUT = re.compile(
    r"(?:pod \S+|server) did not start (?:with)?in (?P<seconds>\d+(?:\.\d+)?) seconds", re.IGNORECASE
)


@dataclass(frozen=True)
class HubError:
    """Which of the hub's limits ended a spawn, and what its text says about it."""

    kind: HubErrorKind
    #: the limit, in seconds
    seconds: float
    #: where the hub knocked (``no-answer``): scheme, host and port only; "" when unknown
    address: str = ""


def read_hub_error(message: str | None) -> HubError | None:
    """The hub's time limit that ``message`` (the spawn's failure text) reports, or None."""
    if not message:
        return None
    text = message[:2000]
    found = _NO_ANSWER.search(text)
    if found:
        parts = urlsplit(found.group("url"))
        address = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
        return HubError("no-answer", float(found.group("seconds")), address)
    found = _START_TIMEOUT.search(text)
    if found:
        return HubError("start-timeout", float(found.group("seconds")))
    return None


def limit_words(seconds: float | None) -> str:
    """A time limit as the page says it: "30 s", "5 min", "4 min 06 s"."""
    if not seconds or seconds <= 0:
        return ""
    if seconds >= 60 and int(seconds) % 60 == 0:
        return f"{int(seconds) // 60} min"
    return format_duration(seconds)


def no_answer_sentence(error: HubError) -> str:
    """The hub's HTTP check never got an answer: the container runs (KubeSpawner saw it
    start), the server in it did not answer where the hub asked. The address is said as
    "port 8888 of 10.1.2.3", which reads whole even where the failure page sets a URL
    apart on its own line."""
    parts = urlsplit(error.address) if error.address else None
    where = ""
    if parts is not None and parts.hostname:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        where = f" on port {port} of {parts.hostname}"
    return (
        f"The server's container is running, but the notebook server in it never answered the hub{where} "
        f"within {limit_words(error.seconds)} (it may listen on another port or address, or still be loading)."
    )


HINT_NO_ANSWER = (
    "Start your server again; a server that loads slowly may make it the next time. If it keeps "
    "happening, ask your administrator for help and send them this page: the server may listen on "
    "another port or address than the hub expects, or need a longer http_timeout."
)
