"""``richprogress.setup(c)`` wires templates, handlers and the template variable, once.

Checked on the config JupyterHub itself loads (``JupyterHub(config=c)``), so what is
asserted is what the hub will use.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from jupyterhub.app import JupyterHub
from traitlets.config import Config

import richprogress
from richprogress import hub_setup
from richprogress import web as handlers
from richprogress.web.template_vars import TemplateHelpers


def hub_from(c: Config) -> JupyterHub:
    app = JupyterHub(config=c)
    app.log.setLevel(logging.ERROR)  # the extra_handlers deprecation line is expected
    return app


def empty() -> Config:
    return Config()


def preset() -> Config:
    c = Config()
    c.JupyterHub.template_paths = ["/srv/my-templates"]
    c.JupyterHub.extra_handlers = [(r"/mine", object)]
    c.JupyterHub.template_vars = {"org": "Example University"}
    return c


def ours_last() -> Config:
    # an admin who listed our folder by hand, after their own
    c = Config()
    c.JupyterHub.template_paths = ["/srv/my-templates", hub_setup.template_path()]
    return c


CONFIGS = [
    pytest.param(empty, [], [], {}, id="empty-config"),
    pytest.param(preset, ["/srv/my-templates"], [r"/mine"], {"org": "Example University"}, id="admin-settings-kept"),
    pytest.param(ours_last, ["/srv/my-templates"], [], {}, id="our-folder-moved-first"),
]


@pytest.mark.parametrize("calls", [1, 2, 3], ids=["once", "twice", "three-times"])
@pytest.mark.parametrize(("make", "their_paths", "their_routes", "their_vars"), CONFIGS)
def test_setup_wires_everything_once(calls, make, their_paths, their_routes, their_vars) -> None:
    c = make()
    for _ in range(calls):
        richprogress.setup(c)
    app = hub_from(c)

    # (JupyterHub adds its own folder last if it is missing; an unset option starts with it)
    stock = app._template_paths_default()[0]
    # our home.html and spawn.html (the spawn history's notice) go last: a hub's own win
    assert [p for p in app.template_paths if p != stock] == [
        hub_setup.template_path(),
        *their_paths,
        hub_setup.notice_template_path(),
    ]
    routes = [h[0] for h in app.extra_handlers]
    assert routes == their_routes + [h[0] for h in handlers.default_handlers]
    assert set(app.template_vars) == {"richprogress", *their_vars}
    for key, value in their_vars.items():
        assert app.template_vars[key] == value
    # JupyterHub calls callables in template_vars with the current user
    assert isinstance(app.template_vars["richprogress"](None), TemplateHelpers)


def test_setup_is_exported_at_top_level() -> None:
    assert richprogress.setup is hub_setup.setup


def test_template_path_holds_our_overrides() -> None:
    folder = Path(hub_setup.template_path())
    assert (folder / "spawn_pending.html").is_file()
    assert (folder / "not_running.html").is_file()
    notices = Path(hub_setup.notice_template_path())
    assert (notices / "home.html").is_file()
    assert (notices / "spawn.html").is_file()


def test_handlers_are_exported_for_hand_wiring() -> None:
    routes = [h[0] for h in handlers.default_handlers]
    assert all(r.startswith(("/api/richprogress/", "/richprogress/")) for r in routes)
    # routes are relative to the hub prefix: JupyterHub prepends {base_url}hub/
    assert not any(r.startswith("/hub/") for r in routes)


def test_docstring_is_honest_about_the_deprecation_warning() -> None:
    assert "deprecated" in (hub_setup.__doc__ or "")
    assert "extra_handlers" in (hub_setup.__doc__ or "")
