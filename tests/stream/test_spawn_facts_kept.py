"""The facts of one spawn stay that spawn's: kept with its timeline at start, final once
it ended, whatever the spawner is told later (a spawn form, a new profile); and a stored
spawn is told with the facts it was stored with.

The facts are what the failure page's facts box, "Copy details" and the timeline
endpoints show (``web.views.payloads.spawner_facts``), so these tests read them there.
The hub-level tests (tests/web/test_handlers.py, tests/history/test_history_hub.py) check
the same through the real pages and endpoints.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from richprogress.history.facts import shown_facts_of
from richprogress.history.rows import snapshot
from richprogress.model.timeline import SpawnTimeline
from richprogress.stream.spawn_end import SpawnEnd
from richprogress.stream.spawn_facts import keep_facts
from richprogress.web.views.payloads import spawner_facts

MISSING = "quay.io/jupyter/no-such-notebook:2026-11"
DEFAULT = "quay.io/jupyter/base-notebook:latest"


def kube_like(image: str = MISSING, timeout: int = 246) -> SimpleNamespace:
    return SimpleNamespace(
        namespace="jhub",
        pod_name="jupyter-alice",
        image=image,
        start_timeout=timeout,
        user=SimpleNamespace(name="alice"),
        name="",
    )


def shown(spawner: Any, timeline: SpawnTimeline) -> dict[str, str]:
    return dict(spawner_facts(spawner, timeline))


def test_a_spawn_form_after_the_failure_changes_nothing() -> None:
    spawner = kube_like()
    timeline = SpawnTimeline()
    keep_facts(spawner, timeline)  # at start(), the options final
    timeline.finish("failed", "no such image")
    before = shown(spawner, timeline)
    assert before["Images"] == MISSING and before["Start timeout"] == "246 s"
    # the spawn form (or a hub admin) gives the spawner other options
    spawner.image, spawner.start_timeout = DEFAULT, 30
    assert shown(spawner, timeline) == before


def test_options_applied_after_start_are_kept_when_kubespawner_loads_its_profile() -> None:
    spawner = kube_like(image=DEFAULT, timeout=30)  # KubeSpawner's traits before its profile
    timeline = SpawnTimeline()
    keep_facts(spawner, timeline)
    spawner.image, spawner.start_timeout = MISSING, 246  # load_user_options()
    keep_facts(spawner, timeline)  # RichKubeSpawner.load_user_options
    spawner.image = "something/else:1"  # any later change
    facts = shown(spawner, timeline)
    assert facts["Images"] == MISSING and facts["Start timeout"] == "246 s"


def test_a_running_spawn_learns_its_node_from_its_pod() -> None:
    spawner = kube_like()
    timeline = SpawnTimeline()
    keep_facts(spawner, timeline)
    assert "Node" not in shown(spawner, timeline)
    spawner.pod_reflector = SimpleNamespace(
        pods={"jhub/jupyter-alice": {"spec": {"nodeName": "node-7", "containers": [{"image": MISSING}]}}}
    )
    assert shown(spawner, timeline)["Node"] == "node-7"
    timeline.finish("failed", "no such image")
    snapshot(SpawnEnd(spawner, timeline, "failed"))  # the history reads them as it ends
    spawner.pod_reflector = SimpleNamespace(pods={})  # then the pod is deleted
    assert shown(spawner, timeline)["Node"] == "node-7"


def test_a_timeline_nobody_kept_facts_for_is_read_once_after_its_end() -> None:
    spawner = kube_like()
    timeline = SpawnTimeline()
    timeline.finish("failed", "")
    first = shown(spawner, timeline)
    spawner.image = DEFAULT
    assert shown(spawner, timeline) == first


def test_the_stored_spawn_keeps_the_facts_the_live_page_showed() -> None:
    spawner = kube_like()
    timeline = SpawnTimeline()
    keep_facts(spawner, timeline)
    timeline.finish("failed", "no such image")
    live = spawner_facts(spawner, timeline)
    spawner.image = DEFAULT  # before the history's snapshot: it still takes the spawn's
    stored = snapshot(SpawnEnd(spawner, timeline, "failed"))
    assert stored["shown_facts"] == live
    assert stored["facts"]["images"] == [MISSING]
    assert shown_facts_of(stored) == live


def test_a_spawn_stored_before_the_shown_facts_is_told_from_its_facts() -> None:
    old_row = {
        "facts": {
            "namespace": "jhub", "pod": "jupyter-alice", "node": "node-7", "images": [MISSING],
            "requests": {"cpu": "0.5"}, "limits": {"cpu": "2"}, "profile_slug": "gpu",
            "profile_name": "GPU server",
        }
    }
    facts = dict(shown_facts_of(old_row))
    assert facts == {
        "Namespace": "jhub",
        "Pod": "jupyter-alice",
        "Node": "node-7",
        "Images": MISSING,
        "Profile": "gpu (GPU server)",
        "CPU": "request 0.5, limit 2",
    }  # and no "Versions": today's hub did not run it
    assert shown_facts_of({}) == []
