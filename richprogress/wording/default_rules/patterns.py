"""Pattern pieces the rules of several sources share: the container of a fieldPath, a
quoted image name, and a message's detail."""

from __future__ import annotations

# The container an event is about, from involvedObject.fieldPath.
CONTAINER = r"spec\.(?:initContainers|containers|ephemeralContainers)\{(?P<container>[^}]+)\}"
# Kubelet quotes image names with Go's %q: a quote inside the name is escaped, so a hostile
# name ("<iframe srcdoc=\"...\">") is read whole, never cut at its first quote.
# A quote left unescaped inside the name (a hand-written or old event) is kept in it unless it
# ends the quoted name (a colon, a space or the end follows), so a stray quote cannot cut the
# name short and hide the rules that know it.
IMAGE = r'"(?P<image>(?=[^"])[^"\\]*(?:(?:\\.|"(?![:\s]|\Z))[^"\\]*)*)"'  # unrolled: linear, fast on a 100 kB name

# Everything after the first line of a message is detail: (?s) lets ".*" take newlines.
DETAIL = r"(?s)(?P<detail>.*)"
