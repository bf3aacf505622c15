"""GET /api/v1/events over real HTTP: connected first, run events, replay, visibility, departures."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession

from common.openapi import SPEC
from results import keys
from results.accounts import Role
from results.app import create_app
from results.events import EventHub
from results.runs import RunStatus, RunSummary, Visibility
from results.store import open_store
from results.store.events import SqlEventStore
from tests.common.serving import served
from tests.conftest import ApiClient
from tests.guards import assert_json, assert_problem
from tests.results.people import (
    EventReader,
    bearer,
    make_token,
    make_user,
    start,
)
from tests.results.support import coverage_for, form, junit_xml, settings_for
from tests.typing_support import Client

REPORT = junit_xml([("a", "pass"), ("b", "pass"), ("c", "fail"), ("d", "skip")])


async def subscribe(client: Client, **headers: str) -> EventReader:
    resp = await client.get("/api/v1/events", headers=headers)
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"].startswith("text/event-stream")
    return EventReader(resp)


async def ingest(client: Client, project: str = "shop", **headers: str) -> dict[str, Any]:
    data = form(project=project, junit=[REPORT], jacoco=[coverage_for(75)])
    resp = await client.post("/api/v1/ingest", data=data, headers=headers)
    body: dict[str, Any] = await assert_json(resp, 201)
    return body


async def test_connected_first_then_a_run_event_per_ingest(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path)
    stream = await subscribe(client)
    hello = await stream.next()
    assert hello["event"] == "connected"
    assert json.loads(hello["data"]) == {"user": None, "replayed": 0}
    run = await ingest(client)
    event = await stream.next()
    assert event["event"] == "run"
    assert event["id"] == str(run["runId"])
    assert json.loads(event["data"]) == {
        "projectId": run["projectId"],
        "runId": run["runId"],
        "branch": "main",
        "status": "FAILED",
        "passRatePct": 66.67,
        "lineCoveragePct": 75.0,
        "tests": 4,
        "failures": 1,
        "errors": 0,
        "skipped": 1,
        "flag": "default",
        "commit": "a1b2c3d4e5f6",
        "project": "shop",
    }
    stream.resp.close()


async def test_last_event_id_replays_missed_runs(api_client: ApiClient, tmp_path: Path) -> None:
    client = await start(api_client, tmp_path)
    first, second, third = [await ingest(client) for _ in range(3)]
    stream = await subscribe(client, **{"Last-Event-ID": str(first["runId"])})
    hello = await stream.next()
    assert hello["event"] == "connected"
    assert json.loads(hello["data"])["replayed"] == 2
    assert [(await stream.next())["id"] for _ in range(2)] == [
        str(second["runId"]),
        str(third["runId"]),
    ]
    fourth = await ingest(client)
    assert (await stream.next())["id"] == str(fourth["runId"])  # then live, without repeats
    stream.resp.close()


@pytest.mark.parametrize(
    "last", ["9223372036854775808", "99999999999999999999999", "-1", "\u0661", "x", " "]
)
async def test_a_last_event_id_no_event_could_have_is_treated_as_absent(
    api_client: ApiClient, tmp_path: Path, last: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = await start(api_client, tmp_path)
    await ingest(client)
    stream = await subscribe(client, **{"Last-Event-ID": last.encode().decode("latin-1")})
    hello = await stream.next()
    assert (hello["event"], json.loads(hello["data"])["replayed"]) == ("connected", 0)
    stream.resp.close()
    assert not [r for r in caplog.records if r.exc_info]


async def test_the_largest_event_id_is_taken(api_client: ApiClient, tmp_path: Path) -> None:
    client = await start(api_client, tmp_path)
    await ingest(client)
    stream = await subscribe(client, **{"Last-Event-ID": str(2**63 - 1)})
    assert json.loads((await stream.next())["data"])["replayed"] == 0
    stream.resp.close()


async def test_replay_is_bounded_to_the_newest_runs(api_client: ApiClient, tmp_path: Path) -> None:
    client = await start(api_client, tmp_path, "results.events.replay-limit=2")
    runs = [await ingest(client) for _ in range(4)]
    stream = await subscribe(client, **{"Last-Event-ID": "0"})
    await stream.next()
    assert [(await stream.next())["id"] for _ in range(2)] == [str(r["runId"]) for r in runs[2:]]
    stream.resp.close()


async def test_private_runs_reach_only_members_and_admins(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path)
    await make_user(client, "admin", role=Role.ADMIN)
    await make_user(client, "member")
    await make_user(client, "outsider")
    tokens = {n: await make_token(client, n) for n in ("admin", "member", "outsider")}
    await ingest(client, "secret")
    accounts = client.app[keys.ACCOUNTS]
    await accounts.set_visibility("secret", Visibility.PRIVATE)
    await accounts.grant("member", "secret")
    streams = {"anonymous": await subscribe(client)}
    for name, token in tokens.items():
        streams[name] = await subscribe(client, **bearer(token))
    for stream in streams.values():
        assert (await stream.next())["event"] == "connected"
    private = await ingest(client, "secret", **bearer(tokens["admin"]))
    public = await ingest(client, "shop")
    for name in ("admin", "member"):
        assert (await streams[name].next())["id"] == str(private["runId"]), name
    for stream in streams.values():
        assert (await stream.next())["id"] == str(public["runId"])  # the private one was skipped
    # Replay obeys the same rule.
    replay = await subscribe(client, **{"Last-Event-ID": "0"})
    assert json.loads((await replay.next())["data"])["replayed"] == 1
    assert (await replay.next())["id"] == str(public["runId"])
    for stream in [*streams.values(), replay]:
        stream.resp.close()


async def test_anonymous_streams_only_in_open_mode(api_client: ApiClient, tmp_path: Path) -> None:
    client = await start(api_client, tmp_path, "results.security.open-mode=false")
    await assert_problem(await client.get("/api/v1/events"), 401)
    await make_user(client, "alice")
    token = await make_token(client, "alice")
    stream = await subscribe(client, **bearer(token))
    hello = await stream.next()
    assert json.loads(hello["data"])["user"] == "alice"
    stream.resp.close()


async def test_departed_subscriber_is_cleaned_up(api_client: ApiClient, tmp_path: Path) -> None:
    client = await start(api_client, tmp_path)
    hub = client.app[keys.EVENTS]
    stream = await subscribe(client)
    await stream.next()
    assert len(hub.subscriptions) == 1
    stream.resp.close()
    async with asyncio.timeout(3):
        while hub.subscriptions:
            await asyncio.sleep(0.02)


async def test_a_dropped_laggard_is_closed_and_others_go_on(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path, "results.events.queue-size=2")
    hub = client.app[keys.EVENTS]
    first = await ingest(client)
    fast = await subscribe(client)
    await fast.next()
    before = set(hub.subscriptions)
    slow = await subscribe(client)
    await slow.next()
    [slow_sub] = hub.subscriptions - before
    # What publish() does for a stream whose queue is full: three events before it takes one.
    [run] = await hub.store.recent_runs_after(first["runId"] - 1, limit=1)
    for _ in range(3):
        slow_sub.offer(run)
    assert slow_sub.dropped
    async with asyncio.timeout(3):
        await slow.resp.content.read()  # the server ended the laggard's stream
    async with asyncio.timeout(3):
        while slow_sub in hub.subscriptions:
            await asyncio.sleep(0.02)
    second = await ingest(client)
    assert (await fast.next())["id"] == str(second["runId"])  # the others are unaffected
    fast.resp.close()


async def test_publish_never_waits_for_a_full_queue(tmp_path: Path) -> None:
    async with open_store(tmp_path / "results.db") as store:
        hub = EventHub(SqlEventStore(store.db), queue_size=2)
        summary = sample_summary()
        lagging, keeping_up = hub.subscribe(None), hub.subscribe(None)
        dropped: list[bool] = []
        lagging.on_drop = lambda: dropped.append(True)
        for _ in range(3):
            await hub.publish(summary)
            keeping_up.pending.pop(0)
        assert dropped == [True]
        assert hub.dropped_total == 1
        assert await lagging.next() is None
        assert not keeping_up.pending
        assert not keeping_up.dropped


def sample_summary() -> RunSummary:
    return RunSummary(
        run_id=1,
        project_id=1,
        project="shop",
        visibility=Visibility.PUBLIC,
        branch="main",
        commit="abc",
        flag="default",
        run_key=None,
        build_url=None,
        status=RunStatus.PASSED,
        tests=1,
        passed=1,
        failures=0,
        errors=0,
        skipped=0,
        flaky=0,
        duration_ms=1,
        line_coverage_pct=None,
        branch_coverage_pct=None,
        uploads=1,
        created_at="",
    )


async def test_subscriber_limit(api_client: ApiClient, tmp_path: Path) -> None:
    client = await start(api_client, tmp_path, "results.events.max-subscribers=1")
    first = await subscribe(client)
    await first.next()
    resp = await client.get("/api/v1/events")
    await assert_problem(resp, 503, code="too-many-subscribers")
    first.resp.close()


async def test_anonymous_streams_are_capped_per_address(tmp_path: Path) -> None:
    app = create_app(settings_for(tmp_path, "results.events.max-anonymous-per-address=2"))
    async with served(app) as base, ClientSession() as session:
        first, second = [EventReader(await session.get(f"{base}/api/v1/events")) for _ in "ab"]
        for stream in (first, second):
            assert (await stream.next())["event"] == "connected"
        resp = await session.get(f"{base}/api/v1/events")
        body = await assert_problem(resp, 429, code="too-many-streams")
        assert "2 anonymous event streams" in body["detail"]
        assert resp.headers["Retry-After"] == "10"
        accounts = app[keys.ACCOUNTS]
        await accounts.add_user("reader", password_hash=await accounts.hash("pw-reader-secret"))
        token = (
            await app[keys.ACCOUNTS].create_token(await app[keys.ACCOUNTS].user("reader"), "t")
        ).value
        logged_in = EventReader(await session.get(f"{base}/api/v1/events", headers=bearer(token)))
        assert (await logged_in.next())["event"] == "connected"  # their streams do not count
        first.resp.close()
        async with asyncio.timeout(2):  # its slot is free the moment its client is gone
            while sum(app[keys.EVENTS].anonymous.values()) > 1:
                await asyncio.sleep(0.01)
        third = EventReader(await session.get(f"{base}/api/v1/events"))
        assert (await third.next())["event"] == "connected"
        for stream in (second, third, logged_in):
            stream.resp.close()


async def test_dropped_streams_free_their_slots_at_once(tmp_path: Path) -> None:
    """A small version of scripts/bench/results_events_flood.py: 200 open-and-drops through 10
    slots, then a normal client gets in on its first try. Served as ``wharf serve`` serves it:
    aiohttp's test server would cancel a departed client's handler by itself."""
    app = create_app(
        settings_for(
            tmp_path,
            "results.events.max-subscribers=10",
            "results.events.max-anonymous-per-address=1000",
        )
    )
    gate = asyncio.Semaphore(5)
    async with served(app) as base, ClientSession() as session:

        async def open_and_drop() -> int:
            async with gate, session.get(f"{base}/api/v1/events") as resp:
                if resp.status == 200:
                    await EventReader(resp).next()
                return resp.status  # leaving closes the connection: the client is gone

        statuses = await asyncio.gather(*(open_and_drop() for _ in range(200)))
        assert set(statuses) == {200}  # never more than 5 open at once: every one got in
        normal = EventReader(await session.get(f"{base}/api/v1/events"))
        assert (await normal.next())["event"] == "connected"
        normal.resp.close()


async def test_an_over_long_last_event_id_is_a_400_the_spec_lists(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path)
    resp = await client.get("/api/v1/events", headers={"Last-Event-ID": "9" * 65})
    body = await assert_problem(resp, 400)
    assert body["errors"][0]["field"] == "Last-Event-ID"
    operation = client.app[SPEC].operations["streamEvents"]
    assert {"400", "429", "503"} <= set(operation.statuses)
