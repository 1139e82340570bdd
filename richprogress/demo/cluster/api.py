"""The simulated Kubernetes REST and watch API (aiohttp), as KubeSpawner 7.1 and kubectl use it.

Speaks core/v1 for pods (and ``pods/log``), events, persistentvolumeclaims, services, secrets,
configmaps and namespaces, ``events.k8s.io/v1`` for the same events, and the custom resource
(custom.py); discovery (``/api``, ``/apis``, ``/version``; no OpenAPI: 404, which kubectl
accepts). Verbs: list (namespaced and cluster-wide, in key order, ``limit``/``continue``),
watch (``watch=True``, JSON lines over a chunked response, replay of history newer than
``resourceVersion`` within the store's window, else ``ERROR 410``; BOOKMARKs when asked;
ADDED/DELETED as objects enter or leave a selector), create (409 on duplicates), get,
replace (PUT, 409 on a stale resourceVersion), patch (merge, strategic, JSON patch), delete.
Field selectors name only the fields the real server indexes (else 400). Namespaces are
never made on the fly: creating in a missing one is 404, in one being deleted 403, as the
NamespaceLifecycle admission plugin answers (k8s.io/apiserver v0.31,
``staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go``).
Errors are single-line ``Status`` objects, as the real server sends them. Pod lifecycles are
not handled here: pod creation, deletion and output are handed to the ``PodLifecycle`` the
server is built with (the simulated kubelet).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import copy
import json
import logging
import secrets
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from aiohttp import web

from . import discovery, eventsv1, podexec, podlogs
from .custom import CUSTOM_RESOURCES, api_version_of
from .patch import CONTENT_TYPES, PatchError, apply_patch
from .selectors import SelectorError, parse_field_selector, parse_label_selector
from .store import (
    RESOURCES,
    Change,
    Conflict,
    NotFound,
    Obj,
    ObjectStore,
    Stale,
    TooOld,
    Watcher,
    utc_now_seconds,
)

log = logging.getLogger(__name__)

# A watch without timeoutSeconds stays open at most this long (real servers pick 30-60 min).
DEFAULT_WATCH_SECONDS = 300.0
# How often a waiting watch checks whether its client went away (aiohttp does not cancel
# handlers on disconnect).
_CLOSE_CHECK_SECONDS = 0.5
_TRUE = {"1", "t", "T", "true", "True", "TRUE"}  # Go's strconv.ParseBool
# A watch that asked for bookmarks gets one about every simulated minute (k8s.io/apiserver
# v0.31, ``staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go``, bookmarkFrequency).
BOOKMARK_SECONDS = 60.0
# Lists split by ``limit`` keep their first page's snapshot for the continue tokens.
_MAX_SNAPSHOTS = 64
# Resources whose DELETE answers a Status rather than the deleted object.
_DELETE_ANSWERS_STATUS = {"configmaps", "secrets", "events"}


class PodLifecycle(Protocol):
    """What the API hands over to the simulated kubelet."""

    def pod_created(self, pod: Obj) -> None: ...

    def delete_pod(self, namespace: str, name: str, grace_seconds: float | None) -> Obj: ...

    def pod_log(self, namespace: str, name: str) -> podlogs.PodLog | None: ...


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


def _forbidden_terminating(resource: str, name: str, namespace: str) -> web.Response:
    message = f"unable to create new content in namespace {namespace} because it is being terminated"
    return status_response(
        403,
        "Forbidden",
        f'{resource} "{name}" is forbidden: {message}',
        name=name,
        kind=resource,
        causes=[{"reason": "NamespaceTerminating", "message": message, "field": "metadata.namespace"}],
    )


def _json(obj: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, text=json.dumps(obj), content_type="application/json")


def _list_kind(resource: str) -> str:
    return RESOURCES[resource][0] + "List"


class KubeAPI:
    """Request handlers over an ``ObjectStore``; ``app`` is the aiohttp application."""

    def __init__(
        self,
        store: ObjectStore,
        pods: PodLifecycle,
        speed: Callable[[], float] = lambda: 1.0,
        exec_commands: bool = False,
    ) -> None:
        self.store = store
        self.pods = pods
        self._speed = speed
        # pods/exec runs the command on this machine (podexec.py): only when asked for
        self.exec_commands = exec_commands
        # (method, path with query, status) of recent requests: for tests and debugging.
        self.request_log: deque[tuple[str, str, int]] = deque(maxlen=2000)
        self._watch_tasks: set[asyncio.Task[Any]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        # continue-token id -> (monotonic time, list rv, the full filtered list)
        self._snapshots: OrderedDict[str, tuple[float, str, list[Obj]]] = OrderedDict()
        self.app = web.Application(middlewares=[self._log_middleware])
        r = self.app.router
        r.add_get("/version", self.version)
        r.add_get("/api", self.api_versions)
        r.add_get("/api/v1", self.core_resources)
        r.add_get("/apis", self.api_groups)
        r.add_get("/apis/{group}", self.api_group)
        r.add_get("/apis/{group}/{version}", self.group_resources)
        r.add_get("/api/v1/{resource}", self.collection)
        r.add_post("/api/v1/{resource}", self.create_cluster_scoped)
        r.add_get("/api/v1/namespaces/{name}", self.get_namespace)
        r.add_delete("/api/v1/namespaces/{name}", self.delete_namespace)
        r.add_put("/api/v1/namespaces/{name}", self.replace_namespace)
        r.add_patch("/api/v1/namespaces/{name}", self.patch_namespace)
        r.add_get("/api/v1/namespaces/{namespace}/pods/{name}/log", self.pod_log)
        r.add_get("/api/v1/namespaces/{namespace}/pods/{name}/exec", self.pod_exec)
        r.add_post("/api/v1/namespaces/{namespace}/pods/{name}/exec", self.pod_exec)
        r.add_get("/api/v1/namespaces/{namespace}/{resource}", self.collection)
        r.add_post("/api/v1/namespaces/{namespace}/{resource}", self.create)
        r.add_get("/api/v1/namespaces/{namespace}/{resource}/{name}", self.get_one)
        r.add_delete("/api/v1/namespaces/{namespace}/{resource}/{name}", self.delete)
        r.add_put("/api/v1/namespaces/{namespace}/{resource}/{name}", self.replace)
        r.add_patch("/api/v1/namespaces/{namespace}/{resource}/{name}", self.patch)
        # events.k8s.io and custom resources: same handlers; _resource checks group and version
        r.add_get("/apis/{group}/{version}/{resource}", self.collection)
        r.add_get("/apis/{group}/{version}/namespaces/{namespace}/{resource}", self.collection)
        r.add_post("/apis/{group}/{version}/namespaces/{namespace}/{resource}", self.create)
        r.add_get("/apis/{group}/{version}/namespaces/{namespace}/{resource}/{name}", self.get_one)
        r.add_delete("/apis/{group}/{version}/namespaces/{namespace}/{resource}/{name}", self.delete)
        r.add_put("/apis/{group}/{version}/namespaces/{namespace}/{resource}/{name}", self.replace)
        r.add_patch("/apis/{group}/{version}/namespaces/{namespace}/{resource}/{name}", self.patch)
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
        version = request.match_info.get("version")
        if resource == "events":
            return resource if (group, version) == (eventsv1.GROUP, eventsv1.VERSION) else None
        wanted = CUSTOM_RESOURCES.get(resource)
        return resource if wanted == (group, version) else None

    @staticmethod
    def _events_v1(request: web.Request) -> bool:
        return request.match_info.get("group") == eventsv1.GROUP

    def _out(self, request: web.Request, obj: Obj) -> Obj:
        """The stored object as the request's group version shows it."""
        return eventsv1.to_events_v1(obj) if self._events_v1(request) else obj

    def _item_json(self, resource: str, obj: Obj, events_v1: bool) -> str:
        if events_v1:
            return json.dumps(eventsv1.to_events_v1(obj))
        return self.store.to_json(resource, obj)

    def ensure_namespace(self, namespace: str) -> None:
        """Create the namespace if it is missing (the cluster's own set-up and test helpers;
        the API itself never makes one on the fly)."""
        if namespace and self.store.find("namespaces", "", namespace) is None:
            self.store.create(
                "namespaces",
                {"metadata": {"name": namespace}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
            )

    def _admit(self, resource: str, namespace: str, name: str) -> web.Response | None:
        """NamespaceLifecycle: no new objects in a missing or terminating namespace."""
        found = self.store.find("namespaces", "", namespace)
        if found is None:
            return self._not_found("namespaces", namespace)
        if (found.get("status") or {}).get("phase") == "Terminating":
            return _forbidden_terminating(resource, name, namespace)
        return None

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def unknown(self, request: web.Request) -> web.Response:
        if request.method not in ("GET", "POST", "DELETE", "PUT", "PATCH"):
            return status_response(
                405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
            )
        return status_response(404, "NotFound", "the server could not find the requested resource")

    # -- discovery -------------------------------------------------------------------
    async def version(self, request: web.Request) -> web.Response:
        return _json(discovery.VERSION_INFO)

    async def api_versions(self, request: web.Request) -> web.Response:
        return _json(discovery.core_versions(request.host))

    async def core_resources(self, request: web.Request) -> web.Response:
        return _json(discovery.core_resources())

    async def api_groups(self, request: web.Request) -> web.Response:
        return _json(discovery.groups())

    async def api_group(self, request: web.Request) -> web.Response:
        found = discovery.group_info(request.match_info["group"])
        return _json(found) if found is not None else await self.unknown(request)

    async def group_resources(self, request: web.Request) -> web.Response:
        found = discovery.group_resources(request.match_info["group"], request.match_info["version"])
        return _json(found) if found is not None else await self.unknown(request)

    # -- list and watch --------------------------------------------------------------
    async def collection(self, request: web.Request) -> web.StreamResponse:
        resource = self._resource(request)
        namespace = request.match_info.get("namespace")
        if resource is None or (namespace is not None and not RESOURCES[resource][1]):
            return await self.unknown(request)
        query = request.query
        events_v1 = self._events_v1(request)
        try:
            label_match = parse_label_selector(query.get("labelSelector"))
            field_match = parse_field_selector(query.get("fieldSelector"), resource, events_v1=events_v1)
        except SelectorError as e:
            return status_response(400, "BadRequest", str(e))

        def matches(obj: Mapping[str, Any]) -> bool:
            return label_match(obj) and field_match(obj)

        if query.get("watch", "") in _TRUE:
            return await self._watch(request, resource, namespace, matches, events_v1)
        selected = bool(query.get("labelSelector") or query.get("fieldSelector"))
        return self._list(request, resource, namespace, matches, events_v1, selected)

    def _list(
        self, request: web.Request, resource: str, namespace: str | None, matches: Any,
        events_v1: bool, selected: bool,
    ) -> web.Response:
        """A list in key order; ``limit`` pages it and ``continue`` reads the next page of the
        first page's snapshot (an opaque token, 410 once its snapshot is older than the
        watch window, as a real server's continue expires with etcd's compaction)."""
        query = request.query
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            return status_response(400, "BadRequest", f"invalid limit: {query.get('limit')}")
        token = query.get("continue")
        if token:
            try:
                state = json.loads(base64.urlsafe_b64decode(token.encode()))
                snapshot_id, offset = str(state["id"]), int(state["start"])
            except (ValueError, KeyError, TypeError, binascii.Error):
                return status_response(400, "BadRequest", "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
            snapshot = self._snapshots.get(snapshot_id)
            if snapshot is None or time.monotonic() - snapshot[0] > self.store.window_seconds():
                return status_response(
                    410,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter.",
                )
            _, rv, items = snapshot
        else:
            snapshot_id, offset = "", 0
            rv = self.store.resource_version
            items = self.store.list(resource, namespace, matches, key_order=True)
        page = items[offset : offset + limit] if limit > 0 else items[offset:]
        meta: dict[str, Any] = {"resourceVersion": rv}
        if limit > 0 and offset + limit < len(items):
            if not snapshot_id:
                snapshot_id = secrets.token_hex(8)
                self._snapshots[snapshot_id] = (time.monotonic(), rv, items)
                while len(self._snapshots) > _MAX_SNAPSHOTS:
                    self._snapshots.popitem(last=False)
            state = {"v": "meta.k8s.io/v1", "rv": int(rv), "id": snapshot_id, "start": offset + limit}
            meta["continue"] = base64.urlsafe_b64encode(json.dumps(state).encode()).decode()
            if not selected:  # real servers count the rest only for unfiltered lists
                meta["remainingItemCount"] = len(items) - offset - limit
        head = json.dumps(
            {
                "kind": _list_kind(resource),
                "apiVersion": eventsv1.API_VERSION if events_v1 else api_version_of(resource),
                "metadata": meta,
            }
        )
        # Splice pre-serialized items in: same bytes as json.dumps of the whole list.
        body = head[:-1] + ', "items": [' + ", ".join(self._item_json(resource, o, events_v1) for o in page) + "]}"
        return web.Response(text=body, content_type="application/json")

    async def _watch(
        self, request: web.Request, resource: str, namespace: str | None, matches: Any, events_v1: bool
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
        bookmarks = request.query.get("allowWatchBookmarks", "") in _TRUE

        watcher = Watcher(resource, namespace, matches)
        # Subscribe before reading history so nothing falls between replay and live events.
        self.store.subscribe(watcher)
        response = web.StreamResponse(status=200)
        response.content_type = "application/json"
        response.enable_chunked_encoding()

        async def send(event_type: str, obj: Obj) -> None:
            await response.write(_line(event_type, self._item_json(resource, obj, events_v1)))

        async def send_change(change: Change) -> None:
            converted = watcher.convert(change)
            if converted is not None:
                await send(*converted)

        with self._running_long():
            try:
                await response.prepare(request)
                sent = 0
                if since is None:
                    # rv "" or "0": start with the current state as synthetic ADDED events.
                    for obj in self.store.list(resource, namespace, matches, key_order=True):
                        await send("ADDED", obj)
                    sent = int(self.store.resource_version)
                else:
                    try:
                        backlog = [c for c in self.store.replay(resource, since) if watcher.wants(c)]
                    except TooOld:
                        await response.write(_gone_line(since))
                        backlog = []
                        timeout = 0
                    for change in backlog:
                        await send_change(change)
                        sent = max(sent, change.rv)
                loop = asyncio.get_running_loop()
                deadline = loop.time() + timeout
                next_bookmark = loop.time() + BOOKMARK_SECONDS / (self._speed() or 1.0)
                while not self.closing:
                    remaining = deadline - loop.time()
                    if remaining <= 0:
                        break
                    transport = request.transport
                    if transport is None or transport.is_closing():
                        break
                    if bookmarks and loop.time() >= next_bookmark and watcher.queue.empty():
                        await response.write(_bookmark_line(resource, events_v1, self.store.resource_version))
                        next_bookmark = loop.time() + BOOKMARK_SECONDS / (self._speed() or 1.0)
                    wait = min(remaining, _CLOSE_CHECK_SECONDS)
                    if bookmarks:
                        wait = max(0.0, min(wait, next_bookmark - loop.time()))
                    try:
                        change = await asyncio.wait_for(watcher.queue.get(), wait)
                    except asyncio.TimeoutError:
                        continue
                    if change.rv <= sent:
                        continue  # already replayed
                    sent = change.rv
                    await send_change(change)
                await response.write_eof()
            except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
                # The client went away (or the server is stopping): nothing left to tell it.
                pass
            finally:
                self.store.unsubscribe(watcher)
        return response

    # -- create ----------------------------------------------------------------------
    async def _body(self, request: web.Request) -> Any:
        try:
            body = await request.json()
        except ValueError:
            return status_response(400, "BadRequest", "the request body is not valid JSON")
        return body

    async def _object_body(self, request: web.Request) -> Obj | web.Response:
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        if not isinstance(body, dict):
            return status_response(400, "BadRequest", "the request body must be an object")
        return body

    async def create_cluster_scoped(self, request: web.Request) -> web.Response:
        if request.match_info["resource"] != "namespaces":
            return await self.unknown(request)
        body = await self._object_body(request)
        if isinstance(body, web.Response):
            return body
        body["status"] = {"phase": "Active"}
        body.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        return self._create("namespaces", "", body)

    async def create(self, request: web.Request) -> web.Response:
        resource = self._resource(request)
        if resource is None or not RESOURCES[resource][1]:
            return await self.unknown(request)
        body = await self._object_body(request)
        if isinstance(body, web.Response):
            return body
        if self._events_v1(request):
            body = eventsv1.to_core(body)
        namespace = request.match_info["namespace"]
        meta = body.setdefault("metadata", {})
        if meta.get("namespace", namespace) != namespace:
            return status_response(
                400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"
            )
        meta["namespace"] = namespace
        refused = self._admit(resource, namespace, str(meta.get("name") or meta.get("generateName") or ""))
        if refused is not None:
            return refused
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
        if resource == "secrets":
            _fold_string_data(body)
        if resource == "services":
            _default_service(body)
        response = self._create(resource, namespace, body)
        if self._events_v1(request) and response.status == 201:
            created = self.store.find(resource, namespace, meta["name"])
            if created is not None:
                return _json(eventsv1.to_events_v1(created), status=201)
        return response

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

    # -- get, replace, patch ---------------------------------------------------------
    def _not_found(self, resource: str, name: str) -> web.Response:
        return status_response(404, "NotFound", f'{resource} "{name}" not found', name=name, kind=resource)

    def _target(self, request: web.Request) -> tuple[str, str, str] | None:
        resource = self._resource(request)
        if resource is None or not RESOURCES[resource][1]:
            return None
        return resource, request.match_info["namespace"], request.match_info["name"]

    async def get_one(self, request: web.Request) -> web.Response:
        target = self._target(request)
        if target is None:
            return await self.unknown(request)
        resource, namespace, name = target
        try:
            return _json(self._out(request, self.store.get(resource, namespace, name)))
        except NotFound:
            return self._not_found(resource, name)

    def _stale(self, resource: str, name: str) -> web.Response:
        return status_response(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {resource} "{name}": the object has been modified; '
            "please apply your changes to the latest version and try again",
            name=name,
            kind=resource,
        )

    def _store_new_version(self, request: web.Request, resource: str, namespace: str, name: str, new: Obj) -> web.Response:
        """Replace the stored object by ``new`` (in the request's group version's form)."""
        if self._events_v1(request):
            new = eventsv1.to_core(new)
        try:
            current = self.store.get(resource, namespace, name)
        except NotFound:
            return self._not_found(resource, name)
        meta = new.get("metadata") or {}
        if meta.get("name", name) != name:
            return status_response(400, "BadRequest", "the name of the object does not match the name on the URL")
        if resource == "pods" and "status" in current:
            new["status"] = current["status"]  # status changes go through pods/status
        try:
            stored = self.store.replace(resource, namespace, name, new)
        except Stale:
            return self._stale(resource, name)
        return _json(self._out(request, stored))

    async def replace(self, request: web.Request) -> web.Response:
        target = self._target(request)
        if target is None:
            return await self.unknown(request)
        body = await self._object_body(request)
        if isinstance(body, web.Response):
            return body
        return self._store_new_version(request, *target, body)

    async def patch(self, request: web.Request) -> web.Response:
        target = self._target(request)
        if target is None:
            return await self.unknown(request)
        return await self._patch(request, *target)

    async def _patch(self, request: web.Request, resource: str, namespace: str, name: str) -> web.Response:
        content_type = request.content_type
        if content_type not in CONTENT_TYPES:
            return status_response(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                + ", ".join(CONTENT_TYPES),
            )
        body = await self._body(request)
        if isinstance(body, web.Response):
            return body
        try:
            current = self._out(request, self.store.get(resource, namespace, name))
        except NotFound:
            return self._not_found(resource, name)
        try:
            patched = apply_patch(content_type, copy.deepcopy(current), body)
        except PatchError as e:
            return status_response(422, "Invalid", str(e))
        # a resourceVersion in the patch is a precondition; without one the patch applies
        wanted = ((body if isinstance(body, dict) else {}).get("metadata") or {}).get("resourceVersion")
        patched.setdefault("metadata", {})["resourceVersion"] = wanted or current["metadata"]["resourceVersion"]
        return self._store_new_version(request, resource, namespace, name, patched)

    # -- namespaces ------------------------------------------------------------------
    async def get_namespace(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        try:
            return _json(self.store.get("namespaces", "", name))
        except NotFound:
            return self._not_found("namespaces", name)

    async def replace_namespace(self, request: web.Request) -> web.Response:
        body = await self._object_body(request)
        if isinstance(body, web.Response):
            return body
        return self._store_new_version(request, "namespaces", "", request.match_info["name"], body)

    async def patch_namespace(self, request: web.Request) -> web.Response:
        return await self._patch(request, "namespaces", "", request.match_info["name"])

    async def delete_namespace(self, request: web.Request) -> web.Response:
        """Mark the namespace Terminating; its contents go, then it does (namespace controller)."""
        name = request.match_info["name"]
        found = self.store.find("namespaces", "", name)
        if found is None:
            return self._not_found("namespaces", name)
        if (found.get("status") or {}).get("phase") == "Terminating":
            return _json(found)

        def terminate(obj: Obj) -> None:
            obj["metadata"]["deletionTimestamp"] = utc_now_seconds()
            obj.setdefault("status", {})["phase"] = "Terminating"

        marked = self.store.update("namespaces", "", name, terminate)
        self._spawn(self._finalize_namespace(name, marked["metadata"]["uid"]))
        return _json(marked)

    async def _finalize_namespace(self, namespace: str, uid: str) -> None:
        for pod in self.store.list("pods", namespace):
            try:
                self.pods.delete_pod(namespace, pod["metadata"]["name"], 0)
            except NotFound:
                pass
        while self.store.list("pods", namespace):
            await asyncio.sleep(0.05)
        for resource, (_, namespaced) in RESOURCES.items():
            if namespaced and resource != "pods":
                for obj in self.store.list(resource, namespace):
                    try:
                        self.store.delete(resource, namespace, obj["metadata"]["name"])
                    except NotFound:
                        pass
        found = self.store.find("namespaces", "", namespace)
        if found is not None and found["metadata"]["uid"] == uid:
            self.store.delete("namespaces", "", namespace)

    # -- delete ----------------------------------------------------------------------
    async def delete(self, request: web.Request) -> web.Response:
        target = self._target(request)
        if target is None:
            return await self.unknown(request)
        resource, namespace, name = target
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
            deleted = self.store.delete(resource, namespace, name)
        except NotFound:
            return self._not_found(resource, name)
        if resource in _DELETE_ANSWERS_STATUS:
            return _json(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": {"name": name, "kind": resource, "uid": deleted["metadata"].get("uid")},
                }
            )
        return _json(self._out(request, deleted))

    # -- pods/log --------------------------------------------------------------------
    async def pod_log(self, request: web.Request) -> web.StreamResponse:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        pod = self.store.find("pods", namespace, name)
        if pod is None:
            return self._not_found("pods", name)
        query = request.query
        try:
            tail = int(query["tailLines"]) if query.get("tailLines") else None
            limit_bytes = int(query["limitBytes"]) if query.get("limitBytes") else None
        except ValueError:
            return status_response(400, "BadRequest", "tailLines and limitBytes must be integers")
        if limit_bytes is not None and limit_bytes < 1:
            return status_response(422, "Invalid", "limitBytes: Invalid value: must be greater than 0")
        previous = query.get("previous", "") in _TRUE
        timestamps = query.get("timestamps", "") in _TRUE
        follow = query.get("follow", "") in _TRUE
        pod_log = self.pods.pod_log(namespace, name)
        refused = podlogs.refusal(pod, query.get("container"), previous, pod_log)
        if refused is not None:
            return status_response(400, "BadRequest", refused)
        lines = ((pod_log.previous if previous else pod_log.lines) or []) if pod_log is not None else []
        text = podlogs.render(lines, tail, limit_bytes, timestamps)
        if not follow or previous or pod_log is None:
            return web.Response(body=text, content_type="text/plain")
        # follow: what is there, then each new line until the pod goes or the client leaves
        response = web.StreamResponse(status=200)
        response.content_type = "text/plain"
        response.enable_chunked_encoding()
        with self._running_long():
            try:
                await response.prepare(request)
                await response.write(text)
                written = len(pod_log.lines)
                budget = None if limit_bytes is None else limit_bytes - len(text)
                while not self.closing and not pod_log.closed and (budget is None or budget > 0):
                    transport = request.transport
                    if transport is None or transport.is_closing():
                        break
                    await pod_log.wait(_CLOSE_CHECK_SECONDS)
                    if len(pod_log.lines) < written:  # the container restarted
                        written = 0
                    more = podlogs.render(pod_log.lines[written:], None, budget, timestamps)
                    written = len(pod_log.lines)
                    if more:
                        await response.write(more)
                        if budget is not None:
                            budget -= len(more)
                await response.write_eof()
            except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
                pass
        return response

    # -- pods/exec -------------------------------------------------------------------
    async def pod_exec(self, request: web.Request) -> web.StreamResponse:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        pod = self.store.find("pods", namespace, name)
        if pod is None:
            return self._not_found("pods", name)
        if not self.exec_commands:
            return status_response(
                403,
                "Forbidden",
                f'pods "{name}" is forbidden: this simulated cluster runs no commands in its pods',
                name=name,
                kind="pods",
            )
        command = request.query.getall("command", [])
        if not command:
            return status_response(400, "BadRequest", "you must specify at least 1 command")
        refused = podexec.refusal(pod, request.query.get("container"))
        if refused is not None:
            return status_response(400, "BadRequest", refused)
        with self._running_long():
            return await podexec.run_exec(request, pod, command)

    @contextmanager
    def _running_long(self) -> Iterator[None]:
        """While a long request (a watch, a followed log, an exec) runs, its task is kept,
        so that ``close_watches`` can end it when the server stops."""
        task = asyncio.current_task()
        if task is not None:
            self._watch_tasks.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._watch_tasks.discard(task)

    async def close_watches(self) -> None:
        """End every open watch stream and namespace finalizer (used when the server stops)."""
        self.closing = True
        tasks = list(self._watch_tasks) + list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _fold_string_data(secret: Obj) -> None:
    """``stringData`` is written into ``data`` base64-encoded, as the real server does."""
    string_data = secret.pop("stringData", None)
    if isinstance(string_data, dict):
        data = secret.setdefault("data", {})
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
    secret.setdefault("type", "Opaque")


def _default_service(service: Obj) -> None:
    """The defaults a real server fills in: a cluster IP, TCP ports, targetPort = port."""
    spec = service.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    if spec["type"] != "ExternalName" and not spec.get("clusterIP"):
        spec["clusterIP"] = f"10.96.{secrets.randbelow(254) + 1}.{secrets.randbelow(254) + 1}"
        spec["clusterIPs"] = [spec["clusterIP"]]
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
    service.setdefault("status", {"loadBalancer": {}})


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


def _bookmark_line(resource: str, events_v1: bool, rv: str) -> bytes:
    """A BOOKMARK: an object of the watched kind carrying only the resourceVersion."""
    bookmark = {
        "kind": RESOURCES[resource][0],
        "apiVersion": eventsv1.API_VERSION if events_v1 else api_version_of(resource),
        "metadata": {"resourceVersion": rv, "creationTimestamp": None},
    }
    return (json.dumps({"type": "BOOKMARK", "object": bookmark}) + "\n").encode()
