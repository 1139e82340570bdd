"""The URLs the pages link to: our static files (cache-busted by content), JupyterHub's
server API, our timeline endpoint and the stored failure page, all below the hub prefix;
and the hub's own URL as the person asking reaches it (the report's "Hub:" line).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from jupyterhub.utils import get_browser_protocol, url_escape_path, url_path_join

from richprogress.web import paths

#: the route prefix of our static files, below the hub prefix
STATIC_PREFIX = "richprogress/static/"

_hash_cache: dict[tuple[str, float], str] = {}


def static_file_hash(name: str) -> str:
    """A short digest of a static file's content, for cache-busting URLs."""
    full = os.path.join(paths.static_dir(), name)
    key = (full, os.path.getmtime(full))
    digest = _hash_cache.get(key)
    if digest is None:
        with open(full, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:12]
        _hash_cache[key] = digest
    return digest


def static_url(hub_base_url: str, name: str) -> str:
    """URL of one of our static files, e.g. ``/prefix/hub/richprogress/static/x.js?v=ab12``.

    ``hub_base_url`` is the hub's own prefix (the ``base_url`` templates receive), so the URL
    is right under any ``c.JupyterHub.base_url``.
    """
    return url_path_join(hub_base_url, STATIC_PREFIX, name) + "?v=" + static_file_hash(name)


def server_api_path(hub_base_url: str, user_name: str, server_name: str, *rest: str) -> str:
    """``{hub}api/users/{user}/server[s/{name}]/...``, escaped, for the default or a named server."""
    user_part = url_path_join(hub_base_url, "api/users", url_escape_path(user_name))
    if server_name:
        base = url_path_join(user_part, "servers", url_escape_path(server_name))
    else:
        base = url_path_join(user_part, "server")
    return url_path_join(base, *rest) if rest else base


def timeline_api_path(hub_base_url: str, user_name: str, server_name: str) -> str:
    """Our JSON timeline endpoint for a server (see ``richprogress.web.api``)."""
    user_part = url_path_join(hub_base_url, "api/richprogress/users", url_escape_path(user_name))
    if server_name:
        user_part = url_path_join(user_part, "servers", url_escape_path(server_name))
    return url_path_join(user_part, "timeline")


def failure_page_url(hub_base_url: str, user_name: str, server_name: str) -> str:
    """The page that shows a server's stored failure (``pages.FailurePageHandler``).

    Not JupyterHub's ``spawn-pending`` URL: that one is 404 for a named server once the
    spawn form replaced its failed spawner."""
    parts = [url_escape_path(user_name)] + ([url_escape_path(server_name)] if server_name else [])
    return url_path_join(hub_base_url, "richprogress/failed", *parts)


def failures_page_url(hub_base_url: str) -> str:
    """The admin's page of recent failed spawns (``pages.FailuresHandler``)."""
    return url_path_join(hub_base_url, "richprogress/failures")


def hub_url(handler: Any) -> str | None:
    """The hub's URL as the person asking reaches it, e.g. ``https://hub.example.org/hub/``:
    the scheme and host of ``c.JupyterHub.public_url`` when it is set, else those the
    browser used (behind a proxy, as its forwarded headers say). None without a request.

    The one source of the report's "Hub:" line, for the endpoint and the page alike, so
    "Copy details" and ``timeline.txt`` are the same text.
    """
    request = getattr(handler, "request", None)
    base = getattr(getattr(handler, "hub", None), "base_url", None)
    if request is None or not isinstance(base, str):
        return None
    settings = getattr(handler, "settings", None)
    public = settings.get("public_url") if isinstance(settings, dict) else None
    if public and getattr(public, "netloc", None):
        return f"{public.scheme}://{public.netloc}{base}"
    return f"{get_browser_protocol(request)}://{request.host}{base}"


def page_hub_url(static_url: Any) -> str | None:
    """``hub_url`` for a template: JupyterHub gives templates no request, but the
    ``static_url`` it passes every page is its handler's own bound method, so the page's
    handler (and its request) is that method's ``__self__``. None for anything else."""
    return hub_url(getattr(static_url, "__self__", None))
