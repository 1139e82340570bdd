"""Names from a route's path that no database keeps: refused with a 400 that names them,
once JupyterHub's own ``prepare`` (authentication) has run, so its error page knows who
asks, and before the handler; every other name goes on to the handler."""

from __future__ import annotations

import asyncio

import pytest
from tornado import web

from richprogress.web.arguments import PathNamesChecked, storable_name


class Prepared:
    """JupyterHub's handler as far as the mixin sees it: a ``prepare`` that authenticates."""

    def __init__(self, *path_args: str, answers: bool = False) -> None:
        self.path_args = list(path_args)
        self.authenticated = False
        self._answers = answers
        self._finished = False

    async def prepare(self) -> None:
        self.authenticated = True
        self._finished = self._answers  # as a redirect to the login page finishes it


class Handler(PathNamesChecked, Prepared):
    pass


@pytest.mark.parametrize(
    ("path_args", "said"),
    [
        (("x\x00",), "the user name holds a control character (U+0000)"),
        (("alice", "gpu\x00"), "the server name holds a control character (U+0000)"),
        (("alice", "x\ud800"), "the server name holds a lone surrogate (U+D800)"),
        (("\udfff", "gpu", "1"), "the user name holds a lone surrogate (U+DFFF)"),
    ],
)
def test_a_name_no_database_keeps_is_400_after_authentication(
    path_args: tuple[str, ...], said: str
) -> None:
    handler = Handler(*path_args)
    with pytest.raises(web.HTTPError) as refused:
        asyncio.run(handler.prepare())
    assert refused.value.status_code == 400
    assert said in str(refused.value.log_message)
    assert handler.authenticated


def test_a_request_prepare_answered_is_not_refused_again() -> None:
    """JupyterHub's prepare may answer the request itself (a redirect): no 400 after it."""
    handler = Handler("x\x00", answers=True)
    asyncio.run(handler.prepare())
    assert handler.authenticated


@pytest.mark.parametrize(
    "path_args", [("alice",), ("alice", ""), ("a<'&\">b", "gpu\u202e\x1b", "12"), ("\ufffd",)]
)
def test_other_names_go_on_to_authentication(path_args: tuple[str, ...]) -> None:
    handler = Handler(*path_args)
    asyncio.run(handler.prepare())
    assert handler.authenticated


def test_storable_name_gives_the_name_back() -> None:
    assert storable_name("gpu-1", "the server name") == "gpu-1"
