"""``richprogress.note`` and guarded hooks on a plain spawner with ``RichProgressMixin``, in
process: what the timeline (the pages' source) holds, and the errors a wrong call gets.

``OwnStart`` is a real ``jupyterhub.spawner.Spawner`` whose own ``start()`` notes a row
and waits for the test to let it finish (no sleeps to race against).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from jupyterhub.spawner import Spawner

import richprogress
from richprogress.stream.mixin import RichProgressMixin
from richprogress.web.views.failure import failure_view


class OwnStart(Spawner):
    """An admin's spawner: its start() tells the user what it does."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.go = asyncio.Event()

    async def start(self) -> str:
        richprogress.note(self, "Reserving a GPU", phase="scheduling")
        await self.go.wait()
        richprogress.note(self, "GPU reserved", phase="scheduled")
        return "http://127.0.0.1:9999"

    async def stop(self, now: bool = False) -> None:
        pass

    async def poll(self) -> int | None:
        return None


class RichOwnStart(RichProgressMixin, OwnStart):
    pass


def make(**traits: Any) -> RichOwnStart:
    traits.setdefault("patience_after", 0)
    user = SimpleNamespace(name="alice", id=1, url="/user/alice/", escaped_name="alice")
    spawner = RichOwnStart(user=user, **traits)
    spawner._spawn_pending = True  # as the hub's spawn handler sets it before anything runs
    return spawner


async def next_note(reader: Any) -> dict[str, Any]:
    """The next event of ``reader`` that carries a note (the base Spawner's own
    "Spawning server..." message comes too)."""
    while True:
        event = await asyncio.wait_for(reader.__anext__(), 5)
        if event.get("record", {}).get("rule") == "note":
            return event


async def test_notes_from_an_own_start_reach_a_live_reader_as_they_happen():
    spawner = make()
    start = asyncio.ensure_future(spawner.start())
    reader = spawner.progress()
    first = await next_note(reader)
    assert first["record"]["message"] == "Reserving a GPU"
    assert first["progress"] == 10  # the note's step moves the bar
    spawner.go.set()
    second = await next_note(reader)
    assert second["record"]["message"] == "GPU reserved"
    await start
    await reader.aclose()
    assert spawner.spawn_timeline.outcome == "ready"


async def test_a_note_from_a_pre_spawn_hook_is_kept_by_the_start_that_follows():
    calls: list[str] = []

    def hook(spawner: Any) -> None:
        calls.append(richprogress.note(spawner, "Copying your course files"))

    spawner = make(pre_spawn_hook=hook)
    await spawner.run_pre_spawn_hook()
    spawner.go.set()
    await spawner.start()
    messages = [r["message"] for r in spawner.spawn_timeline.records() if r["rule"] == "note"]
    assert messages == ["Copying your course files", "Reserving a GPU", "GPU reserved"]
    assert spawner.spawn_timeline.records()[0]["id"] == calls[0]


@pytest.mark.parametrize(
    ("hook", "step"),
    [("pre_spawn_hook", "pre-spawn step"), ("auth_state_hook", "sign-in step")],
)
async def test_a_raising_hook_ends_the_spawn_with_its_cause(hook, step):
    async def broken(spawner: Any, *args: Any) -> None:
        raise OSError("/srv/courses/<x> is not mounted")

    spawner = make(**{hook: broken})
    with pytest.raises(OSError):
        if hook == "pre_spawn_hook":
            await spawner.run_pre_spawn_hook()
        else:
            await spawner.run_auth_state_hook({})
    timeline = spawner.spawn_timeline
    assert timeline.outcome == "failed"
    sentence = f"The hub's {step} failed: /srv/courses/<x> is not mounted"
    assert timeline.failure_message == sentence
    view = failure_view("alice", "", timeline, "Spawn failed: whatever JupyterHub says", viewer_name="alice")
    assert view is not None
    assert view.summary == sentence
    assert "administrator" in (view.hint or "")
    assert sentence in view.report_text and "Traceback" not in view.report_text


async def test_an_exception_without_text_is_named_by_its_class():
    def broken(spawner: Any) -> None:
        raise KeyError()

    spawner = make(pre_spawn_hook=broken)
    with pytest.raises(KeyError):
        await spawner.run_pre_spawn_hook()
    assert spawner.spawn_timeline.failure_message == "The hub's pre-spawn step failed: KeyError"


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"message": b"bytes"}, TypeError, "message must be a str, not bytes"),
        ({"message": "  "}, ValueError, "message is empty"),
        ({"message": "x", "phase": "booting"}, ValueError, "phase must be one of requested, scheduling"),
        ({"message": "x", "phase": None}, ValueError, "not None"),
        ({"message": "x", "severity": "critical"}, ValueError, "severity must be one of info, warning, error"),
        ({"message": "x", "hint": ["a"]}, TypeError, "hint must be a str or None, not list"),
    ],
    ids=["bytes", "empty", "phase", "no-phase", "severity", "hint"],
)
def test_bad_arguments_name_what_to_fix(kwargs, error, words):
    spawner = make()
    message = kwargs.pop("message")
    with pytest.raises(error, match="^richprogress.note: ") as raised:
        richprogress.note(spawner, message, **kwargs)
    assert words in str(raised.value)
    assert spawner.spawn_timeline is None  # nothing was added anywhere


def test_a_spawner_without_richprogress_is_told_how_to_get_it():
    plain = OwnStart(user=SimpleNamespace(name="alice", id=1, url="/user/alice/", escaped_name="alice"))
    with pytest.raises(TypeError, match="OwnStart does not use richprogress: make the spawner class richprogress.RichKubeSpawner"):
        richprogress.note(plain, "Copying")


def test_a_note_outside_a_spawn_is_logged_not_raised(caplog):
    # JupyterHub runs auth_state_hook to show the spawn form too: its note must not break it
    spawner = make()
    spawner._spawn_pending = False
    with caplog.at_level("WARNING"):
        assert richprogress.note(spawner, "Checking your quota") is None
    assert "richprogress.note: no spawn of this server is in progress; not shown: Checking your quota" in caplog.text
    assert spawner.spawn_timeline is None


def test_hostile_text_is_one_short_line_with_its_controls_shown():
    spawner = make()
    richprogress.note(spawner, "<img src=x onerror=alert(1)>\n\x1b[31mred\u202eevil" + "z" * 100_000, hint="\x07" * 3)
    (record,) = spawner.spawn_timeline.records()
    assert record["message"].startswith("<img src=x onerror=alert(1)> \\x1b[31mred\\u202eevilzzz")
    assert record["message"].endswith("more characters)") and len(record["message"]) < 600
    assert record["hint"] == "\\x07\\x07\\x07"


async def test_a_note_from_another_thread_is_refused_with_the_way_to_do_it():
    spawner = make()
    errors: list[BaseException] = []

    def from_thread() -> None:
        try:
            richprogress.note(spawner, "Copying")
        except RuntimeError as error:
            errors.append(error)

    await asyncio.get_running_loop().run_in_executor(None, from_thread)
    (error,) = errors
    assert "call it on the hub's event loop" in str(error) and "call_soon_threadsafe" in str(error)
    assert spawner.spawn_timeline is None
