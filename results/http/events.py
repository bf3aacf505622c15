"""``GET /events``: the live run stream (SSE) — ``connected`` first, then missed runs, then live ones.

The subscription is taken before the stream opens and before the replay is read, so a run committed
in between is queued rather than lost; a run both replayed and queued is sent once. The hub drops a
subscriber that falls ``queue-size`` events behind by closing its stream; the client reconnects with
``Last-Event-ID`` and the replay fills the gap. This module must not decide visibility
(``results.events`` does) or touch the store directly.
"""

from __future__ import annotations

import json

from aiohttp import web

from common import sse
from results import auth, keys
from results.encoders import encode_run_event
from results.events import EventHub, Subscription
from results.runs import RunSummary

routes = web.RouteTableDef()


@routes.get("/events", name="streamEvents")
async def stream_events(request: web.Request) -> web.StreamResponse:
    hub = request.app[keys.EVENTS]
    who = auth.principal(request)
    sub = hub.subscribe(who, address=request.remote)
    try:
        async with sse.event_stream(request) as stream:
            sub.on_drop = stream.close
            missed = await _missed(hub, sub, stream.last_event_number)
            hello = {"user": who.username if who else None, "replayed": len(missed)}
            await stream.send(json.dumps(hello), event="connected")
            await _pump(stream, sub, missed)
    finally:
        hub.unsubscribe(sub)
    return stream.response


async def _missed(hub: EventHub, sub: Subscription, last_event_id: int | None) -> list[RunSummary]:
    if last_event_id is None:
        return []
    return await hub.missed(sub.principal, last_event_id)


async def _pump(stream: sse.EventStream, sub: Subscription, missed: list[RunSummary]) -> None:
    replayed = {run.run_id for run in missed}
    for run in missed:
        await _send_run(stream, run)
    while (live := await sub.next()) is not None:
        if live.run_id not in replayed:
            await _send_run(stream, live)
        replayed.discard(live.run_id)


async def _send_run(stream: sse.EventStream, run: RunSummary) -> None:
    await stream.send(json.dumps(encode_run_event(run)), event="run", event_id=str(run.run_id))
