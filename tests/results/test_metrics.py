"""The results service's Prometheus series: ingest bytes, cases and time, gate verdicts, streams."""

from __future__ import annotations

import asyncio
from pathlib import Path

from results.app import create_app
from tests.conftest import ApiClient
from tests.results.support import ingest_ok, junit_xml, settings_for
from tests.scrape import scrape, value


async def test_ingest_and_gate_are_counted(api_client: ApiClient, tmp_path: Path) -> None:
    client = await api_client(create_app(settings_for(tmp_path)))
    report = junit_xml([("a", "pass"), ("b", "pass"), ("c", "fail")])
    await ingest_ok(client, junit=[report])
    assert (
        await client.get("/api/v1/gate", params={"project": "demo", "branch": "main"})
    ).status == 200
    samples = await scrape(client)
    assert value(samples, "results_ingest_bytes_total") == len(report[1])
    assert value(samples, "results_ingest_cases_total") == 3
    assert value(samples, "results_ingest_seconds_count") == 1
    assert value(samples, "results_gate_verdicts_total", status="FAILED") == 1
    assert value(samples, "results_gate_verdicts_total", status="PASSED") == 0
    ingest = {"method": "POST", "route": "/api/v1/ingest", "status": "201"}
    assert value(samples, "http_server_requests_total", **ingest) == 1
    assert value(samples, "http_server_requests_seconds_count", **ingest) == 1


async def test_open_event_streams_are_a_gauge(api_client: ApiClient, tmp_path: Path) -> None:
    client = await api_client(create_app(settings_for(tmp_path)))
    samples = await scrape(client)
    assert value(samples, "results_events_subscribers") == 0
    idle_tasks = value(samples, "wharf_asyncio_tasks")
    assert idle_tasks >= 1  # at least the scrape's own
    stream = await client.get("/api/v1/events")
    await asyncio.wait_for(stream.content.readline(), 5)
    samples = await scrape(client)
    assert value(samples, "results_events_subscribers") == 1
    assert value(samples, "wharf_sse_streams") == 1
    assert value(samples, "wharf_asyncio_tasks") > idle_tasks  # the stream's handler, at least
    stream.close()
    for _ in range(100):  # the server notices the client left on its next write or read
        samples = await scrape(client)
        if value(samples, "wharf_sse_streams") == 0:
            break
        await asyncio.sleep(0.05)
    assert value(samples, "wharf_asyncio_tasks") == idle_tasks  # nothing of the stream is left
