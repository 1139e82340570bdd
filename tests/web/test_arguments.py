"""Names from a route's path that no database keeps: refused with a 400 that names them,
before JupyterHub's own ``prepare`` (authentication, which may query the hub's database)
runs; every other name goes on to it."""

from __future__ import annotations

import asyncio

import pytest
from tornado import web

from richprogress.web.arguments import PathNamesChecked, storable_name


class Prepared:
    """JupyterHub's handler as far as the mixin sees it: a ``prepare`` that authenticates."""

    def __init__(self, *path_args: str) -> None:
        self.path_args = list(path_args)
        self.authenticated = False

    async def prepare(self) -> None:
        self.authenticated = True


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
def test_a_name_no_database_keeps_is_400_before_authentication(
    path_args: tuple[str, ...], said: str
) -> None:
    handler = Handler(*path_args)
    with pytest.raises(web.HTTPError) as refused:
        asyncio.run(handler.prepare())
    assert refused.value.status_code == 400
    assert said in str(refused.value.log_message)
    assert not handler.authenticated


@pytest.mark.parametrize(
    "path_args", [("alice",), ("alice", ""), ("a<'&\">b", "gpu\u202e\x1b", "12"), ("\ufffd",)]
)
def test_other_names_go_on_to_authentication(path_args: tuple[str, ...]) -> None:
    handler = Handler(*path_args)
    asyncio.run(handler.prepare())
    assert handler.authenticated


def test_storable_name_gives_the_name_back() -> None:
    assert storable_name("gpu-1", "the server name") == "gpu-1"
