"""Our two templates rendered as JupyterHub renders them, parsed into a tiny DOM.

The environment is JupyterHub 6's own recipe (``app.init_tornado_settings``): a
``PrefixLoader`` for ``templates/...`` (the stock templates we extend), our folder before the
stock one, autoescape on. The namespace holds what JupyterHub's handlers pass.

- ``parse(html)`` -> ``Node`` (``by_id``, ``find_all``, ``words``): the standard library's
  HTML parser, into a tree a test can read;
- ``render(template, viewer=..., **namespace)``, ``environment()``, ``make_user``;
- ``record(...)``, ``image_not_found()``, ``timeline(records)``: records and a finished
  ``SpawnTimeline`` to render;
- ``failure_page(user, timeline)``, ``pending_page(user, server, timeline)``: the two pages
  as ``viewer`` (by default the owner, ``OWNER``) sees them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader
from jupyterhub.app import DATA_FILES_PATH

from richprogress.hub_setup import template_path
from richprogress.model.timeline import SpawnTimeline
from richprogress.web import template_helpers

STOCK = os.path.join(DATA_FILES_PATH, "templates")



T0 = datetime(2026, 11, 29, 21, 33, 20, tzinfo=timezone.utc)



HUB = "/prefix/hub/"



# -- a tiny DOM ---------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}



@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def words(self) -> str:
        return " ".join(self.text().split())

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag)
            and all(
                (v in (n.attrs.get(k.rstrip("_")) or "").split())
                if k == "class_"
                else n.attrs.get(k) == v
                for k, v in attrs.items()
            )
        ]

    def by_id(self, ident: str) -> Node:
        found = self.find_all(id=ident)
        assert len(found) == 1, f"{len(found)} elements with id {ident}"
        return found[0]

    def has_id(self, ident: str) -> bool:
        return bool(self.find_all(id=ident))



class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)



def parse(html: str) -> Node:
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return parser.root



# -- rendering like JupyterHub ------------------------------------------------------------


def environment() -> Environment:
    loader = ChoiceLoader(
        [
            PrefixLoader({"templates": FileSystemLoader([STOCK])}, "/"),
            FileSystemLoader([template_path(), STOCK]),
        ]
    )
    # as JupyterHub renders pages: async, so the spawn-history helpers are awaited
    return Environment(loader=loader, autoescape=True, enable_async=True)



def make_user(name: str, spawners: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(
        name=name,
        escaped_name=quote(name, safe="@~"),
        json_escaped_name=json.dumps(name)[1:-1],
        spawners=spawners,
        spawner=SimpleNamespace(options_form=None),
    )



def render(name: str, *, with_helpers: bool = True, viewer: str | None = None, **ns: Any) -> Node:
    """Render a page as JupyterHub does; ``viewer`` is the logged-in user's name."""
    namespace: dict[str, Any] = {
        "base_url": HUB,
        "prefix": "/prefix/",
        "login_url": HUB + "login",
        "logout_url": HUB + "logout",
        "static_url": lambda path, include_version=True: HUB + "static/" + path,
        "version_hash": "",
        "services": [],
        "parsed_scopes": set(),
        "expanded_scopes": set(),
        "xsrf": "xsrf-token",
        "xsrf_token": "xsrf-token",
    }
    if with_helpers:
        namespace["richprogress"] = template_helpers(SimpleNamespace(name=viewer) if viewer else None)
    namespace.update(ns)
    html = environment().get_template(name).render(**namespace)
    return parse(html)



# -- records and timelines ----------------------------------------------------------------


def record(
    n: int,
    since: float,
    severity: str,
    reason: str,
    message: str,
    *,
    count: int = 1,
    phase: str | None = None,
    container: str | None = "notebook",
    pod: str = "jupyter-alice",
) -> dict[str, Any]:
    stamp = (T0 + timedelta(seconds=since)).isoformat().replace("+00:00", "Z")
    return {
        "id": f"uid-{n}",
        "timestamp": stamp,
        "first_timestamp": stamp,
        "type": "Normal" if severity == "info" else "Warning",
        "severity": severity,
        "reason": reason,
        "object": {"kind": "Pod", "name": pod, "container": container, "field_path": None},
        "component": "kubelet",
        "count": count,
        "message": message,
        "raw_message": message,
        "rule": None,
        "phase": phase,
        "since_spawn": since,
    }



def image_not_found(image: str = "quay.io/jupyter/scipy-notebok:2024-01-15", pod: str = "jupyter-alice") -> list[dict[str, Any]]:
    return [
        record(1, 8, "info", "Scheduled", "Found a machine for your server: node-1.", phase="scheduled", container=None, pod=pod),
        record(2, 9, "info", "Pulling", f"Downloading image {image}.", phase="image", pod=pod),
        record(3, 10, "error", "Failed", f"The image {image} does not exist.", phase="image", count=4, pod=pod),
        record(4, 11, "warning", "BackOff", f"Waiting to retry downloading {image}.", phase="image", count=7, pod=pod),
    ]



def timeline(records: list[dict[str, Any]], *, outcome: str = "failed", ran: float = 75, server_name: str = "") -> SpawnTimeline:
    clock = [T0 + timedelta(seconds=ran)]
    tl = SpawnTimeline(server_name=server_name, started_at=T0, clock=lambda: clock[0])
    for r in records:
        tl.add(r)  # type: ignore[arg-type]
    if outcome != "pending":
        tl.finish(outcome, "")  # type: ignore[arg-type]
    return tl



# -- the two pages ------------------------------------------------------------------------

OWNER = "(the owner)"



def failure_page(
    user_name: str, tl: SpawnTimeline | None, server_name: str = "", *, viewer: str | None = OWNER, **ns: Any
) -> Node:
    """The failure page of ``user_name``'s server as ``viewer`` sees it (by default its owner)."""
    spawner = SimpleNamespace(name=server_name, spawn_timeline=tl)
    user = make_user(user_name, {server_name: spawner})
    namespace = {
        "user": user,
        "server_name": server_name,
        "spawn_url": HUB + "spawn/" + user.escaped_name + ("/" + quote(server_name) if server_name else ""),
        "failed": True,
        "failed_message": "Spawn failed: ",
        "failed_html_message": "",
    }
    namespace.update(ns)
    return render("not_running.html", viewer=user_name if viewer == OWNER else viewer, **namespace)



def pending_page(
    user_name: str, server_name: str, tl: SpawnTimeline | None, *, viewer: str | None = OWNER
) -> tuple[Node, dict[str, Any]]:
    """The pending page of ``user_name``'s server as ``viewer`` sees it (by default its owner)."""
    spawner = SimpleNamespace(name=server_name, spawn_timeline=tl)
    user = make_user(user_name, {server_name: spawner})
    progress_url = f"{HUB}api/users/{user.escaped_name}/servers/{quote(server_name)}/progress?_xsrf=x"
    doc = render(
        "spawn_pending.html",
        viewer=user_name if viewer == OWNER else viewer,
        user=user,
        spawner=spawner,
        progress_url=progress_url,
    )
    data = json.loads(doc.by_id("richprogress-data").text())
    return doc, data
