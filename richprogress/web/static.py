"""Our static files (the pages' ES modules and stylesheet, from ``static/``) and their route.

Link to them with ``urls.static_url``: the URL carries ``?v=<content hash>``, and tornado's
StaticFileHandler then lets browsers cache the file until it changes.
"""

from __future__ import annotations

from typing import Any

from tornado import web

from richprogress.web import paths
from richprogress.web.urls import STATIC_PREFIX


class RichProgressStaticHandler(web.StaticFileHandler):
    """Serve ``static/``: the pages' JS and CSS."""

    def validate_absolute_path(self, root: str, absolute_path: str) -> str | None:
        # A NUL byte (``%00`` in the URL) makes os.path.realpath raise inside tornado: a 500
        # and a traceback in the hub log for every probe. No file of ours has one: 404.
        if "\0" in absolute_path:
            raise web.HTTPError(404)
        return super().validate_absolute_path(root, absolute_path)

    def set_extra_headers(self, path: str) -> None:
        # The module is loaded with type="module"; nosniff keeps browsers strict about it.
        self.set_header("X-Content-Type-Options", "nosniff")


#: the static files' route, relative to the hub prefix
default_handlers: list[tuple[Any, ...]] = [
    (r"/" + STATIC_PREFIX + r"(.*)", RichProgressStaticHandler, {"path": paths.static_dir()}),
]
