"""The simulated Kubernetes REST and watch API (aiohttp), as KubeSpawner 7.1 uses it.

Speaks core/v1 for pods, events, persistentvolumeclaims, services, secrets and namespaces:
list (namespaced and cluster-wide), watch (``watch=True``, JSON lines over a chunked
response, replay of history newer than ``resourceVersion``, closed after
``timeoutSeconds``), create (409 on duplicates), get, delete (404 when missing), with
label and field selectors. Errors are single-line ``Status`` objects, as the real server
sends them. Pod lifecycles are not handled here: pod creation and deletion are handed to
the ``PodLifecycle`` the server is built with (the simulated kubelet).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections import deque
from collections.abc import Mapping
from typing import Any, Protocol

from aiohttp import web

from .custom import CUSTOM_RESOURCES, api_version_of
from .selectors import SelectorError, parse_field_selector, parse_label_selector
from .store import RESOURCES, Conflict, NotFound, Obj, ObjectStore, TooOld, Watcher

log = logging.getLogger(__name__)

# A watch without timeoutSeconds stays open at most this long (real servers pick 30-60 min).
DEFAULT_WATCH_SECONDS = 300.0
# How often a waiting watch checks whether its client went away (aiohttp does not cancel
# handlers on disconnect).
_CLOSE_CHECK_SECONDS = 0.5
_TRUE = {"1", "t", "T", "true", "True", "TRUE"}  # Go's strconv.ParseBool


class PodLifecycle(Protocol):
    """What the API hands over to the simulated kubelet."""

    def pod_created(self, pod: Obj) -> None: ...

    def delete_pod(self, namespace: str, name: str, grace_seconds: float | None) -> Obj: ...


def status_response(code: int, reason: str, message: str, **details: Any) -> web.Response:
    """A Kubernetes ``Status`` error, serialized on a single line."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return web.Response(status=code, text=json.dumps(body), content_type="application/json")


def _json(obj: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, text=json.dumps(obj), content_type="application/json")


def _list_kind(resource: str) -> str:
    return RESOURCES[resource][0] + "List"


class KubeAPI:
    """Request handlers over an ``ObjectStore``; ``app`` is the aiohttp application."""

    def __init__(self, store: ObjectStore, pods: PodLifecycle) -> None:
        self.store = store
        self.pods = pods
        # (method, path with query, status) of recent requests: for tests and debugging.
        self.request_log: deque[tuple[str, str, int]] = deque(maxlen=2000)
        self._watch_tasks: set[asyncio.Task[Any]] = set()
        self.app = web.Application(middlewares=[self._log_middleware])
        r = self.app.router
        r.add_get("/version", self.version)
        r.add_get("/api/v1/{resource}", self.collection)
        r.add_post("/api/v1/{resource}", self.create_cluster_scoped)
        r.add_get("/api/v1/namespaces/{name}", self.get_namespace)
        r.add_delete("/api/v1/namespaces/{name}", self.delete_namespace)
        r.add_get("/api/v1/namespaces/{namespace}/{resource}", self.collection)
        r.add_post("/api/v1/namespaces/{namespace}/{resource}", self.create)
        r.add_get("/api/v1/namespaces/{namespace}/{resource}/{name}", self.get_one)
        r.add_delete("/api/v1/namespaces/{namespace}/{resource}/{name}", self.delete)
        # custom resources (custom.py): same handlers; _resource checks group and version
        r.add_get("/apis/{group}/{version}/{resource}", self.collection)
        r.add_get("/apis/{group}/{version}/namespaces/{namespace}/{resource}", self.collection)
        r.add_post("/apis/{group}/{version}/namespaces/{namespace}/{resource}", self.create)
        r.add_get("/apis/{group}/{version}/namespaces/{namespace}/{resource}/{name}", self.get_one)
        r.add_delete("/apis/{group}/{version}/namespaces/{namespace}/{resource}/{name}", self.delete)
        self.app.router.add_route("*", "/{tail:.*}", self.unknown)
        self.closing = False

    @web.middleware
    async def _log_middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        response: web.StreamResponse = await handler(request)
        self.request_log.append((request.method, request.path_qs, response.status))
        return response

    # -- helpers ---------------------------------------------------------------------
    def _resource(self, request: web.Request) -> str | None:
        resource = request.match_info["resource"]
        if resource not in RESOURCES:
            return None
        group = request.match_info.get("group")
        if group is None:  # /api/v1/: core resources only
            return None if resource in CUSTOM_RESOURCES else resource
        wanted = CUSTOM_RESOURCES.get(resource)
        return resource if wanted == (group, request.match_info.get("version")) else None

    def ensure_namespace(self, namespace: str) -> None:
        """Namespaces spring into existence on first use (a permissive simulated cluster)."""
        if namespace and self.store.find("namespaces", "", namespace) is None:
            self.store.create(
                "namespaces",
                {"metadata": {"name": namespace}, "status": {"phase": "Active"}},
            )

    async def unknown(self, request: web.Request) -> web.Response:
        if request.method not in ("GET", "POST", "DELETE"):
            return status_response(
                405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
            )
        return status_response(404, "NotFound", "the server could not find the requested resource")

    async def version(self, request: web.Request) -> web.Response:
        return _json({"major": "1", "minor": "31", "gitVersion": "v1.31.0-richprogress-sim"})

    # -- list and watch --------------------------------------------------------------
    async def collection(self, request: web.Request) -> web.StreamResponse:
        resource = self._resource(request)
        namespace = request.match_info.get("namespace")
        if resource is None or (namespace is not None and not RESOURCES[resource][1]):
            return await self.unknown(request)
        query = request.query
        try:
            label_match = parse_label_selector(query.get("labelSelector"))
            field_match = parse_field_selector(query.get("fieldSelector"))
        except SelectorError as e:
            return status_response(400, "BadRequest", str(e))

        def matches(obj: Mapping[str, Any]) -> bool:
            return label_match(obj) and field_match(obj)

        if query.get("watch", "") in _TRUE:
            return await self._watch(request, resource, namespace, matches)
        items = self.store.list(resource, namespace, matches)
        head = json.dumps(
            {
                "kind": _list_kind(resource),
                "apiVersion": api_version_of(resource),
                "metadata": {"resourceVersion": self.store.resource_version},
            }
        )
        # Splice pre-serialized items in: same bytes as json.dumps of the whole list.
        body = head[:-1] + ', "items": [' + ", ".join(self.store.to_json(resource, o) for o in items) + "]}"
        return web.Response(text=body, content_type="application/json")

    async def _watch(
        self, request: web.Request, resource: str, namespace: str | None, matches: Any
    ) -> web.StreamResponse:
        try:
            timeout = float(request.query.get("timeoutSeconds") or DEFAULT_WATCH_SECONDS)
        except ValueError:
            return status_response(400, "BadRequest", "invalid timeoutSeconds")
        rv_text = request.query.get("resourceVersion", "")
        try:
            since = int(rv_text) if rv_text not in ("", "0") else None
        except ValueError:
            return status_response(400, "BadRequest", f"invalid resource version: {rv_text}")

        watcher = Watcher(resource, namespace, matches)
        # Subscribe before reading history so nothing falls between replay and live events.
        self.store.subscribe(watcher)
        response = web.StreamResponse(status=200)
        response.content_type = "application/json"
        response.enable_chunked_encoding()
        task = asyncio.current_task()
        if task is not None:
            self._watch_tasks.add(task)
        try:
            await response.prepare(request)
            sent = 0
            if since is None:
                # rv "" or "0": start with the current state as synthetic ADDED events.
                for obj in self.store.list(resource, namespace, matches):
                    await response.write(_line("ADDED", self.store.to_json(resource, obj)))
                sent = int(self.store.resource_version)
            else:
                try:
                    backlog = [c for c in self.store.replay(resource, since) if watcher.wants(c)]
                except TooOld:
                    await response.write(_gone_line(since))
                    backlog = []
                    timeout = 0
                for change in backlog:
                    await response.write(_line(change.type, self.store.to_json(resource, change.obj)))
                    sent = max(sent, change.rv)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while not self.closing:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                transport = request.transport
                if transport is None or transport.is_closing():
                    break
                try:
                    change = await asyncio.wait_for(
                        watcher.queue.get(), min(remaining, _CLOSE_CHECK_SECONDS)
                    )
                except asyncio.TimeoutError:
                    continue
                if change.rv <= sent:
                    continue  # already replayed
                sent = change.rv
                await response.write(_line(change.type, self.store.to_json(resource, change.obj)))
            await response.write_eof()
        except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
            # The client went away (or the server is stopping): nothing left to tell it.
            pass
        finally:
            self.store.unsubscribe(watcher)
            if task is not None:
                self._watch_tasks.discard(task)
        return response

    # -- create ----------------------------------------------------------------------
    async def _body(self, request: web.Request) -> Obj | web.Response:
        try:
            body = await request.json()
        except ValueError:
            return status_response(400, "BadRequest", "the request body is not valid JSON")
        if not isinstance(body, dict):
            return status_response(400, "BadRequest", "the request body must be an object")
        return body

    async def create_cluster_scoped(self, request: web.Request) -> web.Response:
        if request.match_info["resource"] != "namespaces":
            return await self.unknown(request)
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        body.setdefault("status", {"phase": "Active"})
        return self._create("namespaces", "", body)

    async def create(self, request: web.Request) -> web.Response:
        resource = self._resource(request)
        if resource is None or not RESOURCES[resource][1]:
            return await self.unknown(request)
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        namespace = request.match_info["namespace"]
        meta = body.setdefault("metadata", {})
        if meta.get("namespace", namespace) != namespace:
            return status_response(
                400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"
            )
        meta["namespace"] = namespace
        if resource == "pods":
            containers = (body.get("spec") or {}).get("containers")
            if not containers:
                return status_response(
                    422, "Invalid", f'Pod "{meta.get("name")}" is invalid: spec.containers: Required value'
                )
            # The server owns status; a new pod waits for the scheduler.
            body["status"] = {"phase": "Pending", "qosClass": _qos_class(containers)}
        if resource == "persistentvolumeclaims":
            body.setdefault("status", {"phase": "Pending"})
        self.ensure_namespace(namespace)
        return self._create(resource, namespace, body)

    def _create(self, resource: str, namespace: str, body: Obj) -> web.Response:
        meta = body.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        if not meta.get("name"):
            return status_response(422, "Invalid", "metadata.name: Required value: name or generateName is required")
        try:
            obj = self.store.create(resource, body)
        except Conflict:
            return status_response(
                409,
                "AlreadyExists",
                f'{resource} "{meta["name"]}" already exists',
                name=meta["name"],
                kind=resource,
            )
        if resource == "pods":
            self.pods.pod_created(obj)
        log.debug("created %s %s/%s", resource, namespace, meta["name"])
        return _json(obj, status=201)

    # -- get and delete --------------------------------------------------------------
    def _not_found(self, resource: str, name: str) -> web.Response:
        return status_response(404, "NotFound", f'{resource} "{name}" not found', name=name, kind=resource)

    async def get_one(self, request: web.Request) -> web.Response:
        resource = self._resource(request)
        if resource is None or not RESOURCES[resource][1]:
            return await self.unknown(request)
        name = request.match_info["name"]
        try:
            return _json(self.store.get(resource, request.match_info["namespace"], name))
        except NotFound:
            return self._not_found(resource, name)

    async def get_namespace(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        try:
            return _json(self.store.get("namespaces", "", name))
        except NotFound:
            return self._not_found("namespaces", name)

    async def delete_namespace(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        try:
            return _json(self.store.delete("namespaces", "", name))
        except NotFound:
            return self._not_found("namespaces", name)

    async def delete(self, request: web.Request) -> web.Response:
        resource = self._resource(request)
        if resource is None or not RESOURCES[resource][1]:
            return await self.unknown(request)
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        grace = _grace_seconds(request.query.get("gracePeriodSeconds"))
        if grace is None and request.can_read_body:
            try:
                body = await request.json()
            except ValueError:
                body = None
            if isinstance(body, dict):
                grace = _grace_seconds(body.get("gracePeriodSeconds"))
        try:
            if resource == "pods":
                return _json(self.pods.delete_pod(namespace, name, grace))
            return _json(self.store.delete(resource, namespace, name))
        except NotFound:
            return self._not_found(resource, name)

    async def close_watches(self) -> None:
        """End every open watch stream (used when the server stops)."""
        self.closing = True
        tasks = list(self._watch_tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _qos_class(containers: list[Any]) -> str:
    resources = [c.get("resources") or {} for c in containers if isinstance(c, dict)]
    if any(r.get("requests") or r.get("limits") for r in resources):
        return "Burstable"
    return "BestEffort"


def _grace_seconds(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return None


def _line(event_type: str, obj_json: str) -> bytes:
    # One JSON object per line: the client reads watch streams with readline().
    return f'{{"type": "{event_type}", "object": {obj_json}}}\n'.encode()


def _gone_line(since: int) -> bytes:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"too old resource version: {since}",
        "reason": "Expired",
        "code": 410,
    }
    return (json.dumps({"type": "ERROR", "object": status}) + "\n").encode()
