"""The paths of richprogress's endpoints under a hub's ``hub/`` URL, as the tests request them.

``timeline_path(user, server_name="", suffix="timeline")``: a server's timeline JSON
(``suffix="timeline.txt"``: its text), the user's and the server's names percent-encoded.
"""

from __future__ import annotations

from urllib.parse import quote


def timeline_path(user: str, server_name: str = "", suffix: str = "timeline") -> str:
    name = quote(user, safe="")
    if server_name:
        return f"richprogress/users/{name}/servers/{quote(server_name, safe='')}/{suffix}"
    return f"richprogress/users/{name}/{suffix}"
