"""Watch streams: ``?watch=true`` answered with chunked JSON events, one object per line.

Start points follow kube-apiserver: no resourceVersion (or ``0``) sends synthetic ADDED events for
the current state; ``resourceVersion=N`` replays the event history after N, or an in-band 410 Expired
ERROR when the history no longer reaches back that far; ``sendInitialEvents=true`` (WatchList) sends
the state then a BOOKMARK annotated ``k8s.io/initial-events-end``. Selectors are applied to old and
new states, so objects leaving a selection are seen as DELETED (with the last state that matched),
like the real watch cache. Bookmarks come every ``bookmark_interval`` and 2 s before the timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Mapping

import attrs
from aiohttp import web

from kubesim.api import options
from kubesim.api.objects import Objects
from kubesim.api.params import Target, flag, integer
from kubesim.machinery.selectors import label_matcher
from kubesim.machinery.status import KubeError
from kubesim.store import Event, Obj, Subscription

# kube-apiserver's --min-request-timeout default: watches without timeoutSeconds end after it.
DEFAULT_TIMEOUT = 1800.0
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
# Seconds before a watch's timeout at which it gets a last BOOKMARK (kube-apiserver's 2 s).
PRE_TIMEOUT_BOOKMARK = 2.0
# How often an idle watch checks whether its client has gone, so it stops holding a subscription.
IDLE_CHECK = 5.0


@attrs.frozen
class WatchRequest:
    resource_version: str
    send_initial: bool
    bookmarks: bool
    timeout: float
    label_selector: str
    field_selector: str

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> WatchRequest:
        send_initial = "sendInitialEvents" in query and flag(query, "sendInitialEvents")
        bookmarks = flag(query, "allowWatchBookmarks")
        options.check_watch(query, send_initial=send_initial, bookmarks=bookmarks)
        rv = options.resource_version(query)
        timeout = integer(query, "timeoutSeconds")
        return cls(
            rv,
            send_initial,
            bookmarks,
            float(timeout) if timeout and timeout > 0 else DEFAULT_TIMEOUT,
            query.get("labelSelector", ""),
            query.get("fieldSelector", ""),
        )


class _Filter:
    def __init__(self, objs: Objects, target: Target, req: WatchRequest) -> None:
        rt = target.rt
        labels = label_matcher(req.label_selector)
        fields = objs.field_matcher(rt, req.field_selector)
        ns = target.namespace

        def visible(obj: Obj | None) -> bool:
            if obj is None:
                return False
            if ns and obj["metadata"].get("namespace") != ns:
                return False
            served = objs.present(rt, obj)
            return labels(served) and fields(served)

        self.visible = visible

    def translate(self, event: Event) -> tuple[str, Obj] | None:
        now, before = self.visible(event.obj), self.visible(event.old)
        if event.type == "ADDED":
            return ("ADDED", event.obj) if now else None
        if event.type == "DELETED":
            return ("DELETED", event.obj) if before else None
        if now and before:
            return ("MODIFIED", event.obj)
        if now:
            return ("ADDED", event.obj)
        if (
            before and event.old is not None
        ):  # the last state that matched, at the event's resourceVersion (the cacher's)
            meta = {
                **event.old["metadata"],
                "resourceVersion": event.obj["metadata"]["resourceVersion"],
            }
            return ("DELETED", {**event.old, "metadata": meta})
        return None


async def serve(
    request: web.Request,
    objs: Objects,
    target: Target,
    encode: Callable[[Obj], Obj],
    *,
    bookmark_interval: float,
    max_seconds: float | None = None,
) -> web.StreamResponse:
    """Answer a watch request; ``encode`` turns a stored object into what the client asked for.
    ``max_seconds`` ends every watch by then, whatever ``timeoutSeconds`` asked."""
    req = WatchRequest.parse(request.query)
    if max_seconds is not None and req.timeout > max_seconds:
        req = attrs.evolve(req, timeout=max_seconds)
    rt = target.rt
    filt = _Filter(objs, target, req)
    initial: list[tuple[str, Obj]] = []
    error: KubeError | None = None
    sub = objs.store.subscribe(rt.group_resource)
    try:
        if req.send_initial or req.resource_version in ("", "0"):
            initial = [("ADDED", o) for o in objs.store.list(rt.group_resource) if filt.visible(o)]
        else:
            try:
                for event in objs.store.events_since(rt.group_resource, int(req.resource_version)):
                    translated = filt.translate(event)
                    if translated is not None:
                        initial.append(translated)
            except KubeError as exc:
                error = exc
        response = web.StreamResponse(
            headers={"Content-Type": "application/json", "Cache-Control": "no-cache, private"}
        )
        response.enable_chunked_encoding()
        await response.prepare(request)
        stream = _Stream(request, response, objs, target, encode)
        with contextlib.suppress(ConnectionResetError):  # the client went away: nothing to tell
            await _stream(stream, sub, filt, req, initial, error, bookmark_interval)
        return response
    finally:
        sub.close()


async def _stream(
    stream: _Stream,
    sub: Subscription,
    filt: _Filter,
    req: WatchRequest,
    initial: list[tuple[str, Obj]],
    error: KubeError | None,
    bookmark_interval: float,
) -> None:
    if error is not None:
        await stream.send("ERROR", error.status(), raw=True)
        return
    for kind, obj in initial:
        await stream.send(kind, obj)
    if req.send_initial:
        await stream.bookmark(initial_end=True)
    await _follow(stream, sub, filt, req, bookmark_interval)


async def _follow(
    stream: _Stream, sub: Subscription, filt: _Filter, req: WatchRequest, bookmark_interval: float
) -> None:
    deadline = time.monotonic() + req.timeout
    next_bookmark = _next_bookmark(time.monotonic(), deadline, bookmark_interval)
    while True:
        now = time.monotonic()
        if now >= deadline or stream.client_gone():
            return
        wait = min(deadline - now, IDLE_CHECK)
        if req.bookmarks:
            wait = min(wait, max(0.0, next_bookmark - now))
        try:
            event = await asyncio.wait_for(sub.next(), timeout=wait)
        except TimeoutError:
            if req.bookmarks and time.monotonic() >= next_bookmark:
                await stream.bookmark()
                next_bookmark = _next_bookmark(time.monotonic(), deadline, bookmark_interval)
            continue
        if event is None:
            return
        translated = filt.translate(event)
        if translated is not None:
            await stream.send(*translated)


def _next_bookmark(now: float, deadline: float, interval: float) -> float:
    """When the next BOOKMARK is due: every ``interval``, and once just before the watch times
    out (the cacher's ``nextBookmarkTime``), so a client resumes from a fresh resourceVersion."""
    pre_timeout = deadline - PRE_TIMEOUT_BOOKMARK
    return min(now + interval, pre_timeout) if pre_timeout > now else now + interval


class _Stream:
    def __init__(
        self,
        request: web.Request,
        response: web.StreamResponse,
        objs: Objects,
        target: Target,
        encode: Callable[[Obj], Obj],
    ) -> None:
        self.request = request
        self.response = response
        self.objs = objs
        self.rt = target.rt
        self.encode = encode

    def client_gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()

    async def send(self, kind: str, obj: Obj, *, raw: bool = False) -> None:
        body = obj if raw else self.encode(self.objs.present(self.rt, obj))
        line = json.dumps({"type": kind, "object": body}, separators=(",", ":")) + "\n"
        await self.response.write(line.encode())

    async def bookmark(self, *, initial_end: bool = False) -> None:
        meta: Obj = {"resourceVersion": str(self.objs.store.rv)}
        if initial_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        obj = {"kind": self.rt.kind, "apiVersion": self.rt.api_version, "metadata": meta}
        await self.send("BOOKMARK", obj, raw=True)
