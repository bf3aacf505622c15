"""Two ``wharf serve results`` processes on one PostgreSQL database, as N replicas run.

An ingest on one reaches the event streams of the other and is readable there; a replica killed
with SIGKILL in the middle of an ingest leaves nothing half-written for the other to see, and holds
no lock that would stop the next ingest of the same project.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp

from results.store import open_store
from results.store.schema import SCHEMA
from tests.addresses import free_port
from tests.results.people import EventReader
from tests.results.stores import kill_mid_ingest
from tests.results.support import RUN_TABLES, form, junit_xml

ROOT = Path(__file__).resolve().parents[2]
REPORT = junit_xml([("a", "pass"), ("b", "fail")])


@contextlib.asynccontextmanager
async def replica(url: str, data_dir: Path) -> AsyncIterator[str]:
    """``wharf serve results`` on ``url``; yields its base URL once it listens."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "wharf", "serve", "results", "--port", str(port),
         "--set", f"results.data-dir={data_dir}", "--set", f"results.db.url={url}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
        assert "listening on" in line, proc.stderr.read() if proc.stderr else line
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), 20)
        except TimeoutError:
            proc.kill()
            proc.wait()


async def test_an_ingest_on_one_replica_reaches_the_other(pg_url: str, tmp_path: Path) -> None:
    async with (
        replica(pg_url, tmp_path / "a") as a,
        replica(pg_url, tmp_path / "b") as b,
        aiohttp.ClientSession() as http,
    ):
        resp = await http.get(f"{b}/api/v1/events")
        stream = EventReader(resp)
        assert (await stream.next(timeout=10))["event"] == "connected"
        posted = await http.post(f"{a}/api/v1/ingest", data=form(project="shop", junit=[REPORT]))
        assert posted.status == 201, await posted.text()
        run = await posted.json()
        event = await stream.next(timeout=10)
        assert (event["event"], event["id"]) == ("run", str(run["runId"]))
        assert json.loads(event["data"])["project"] == "shop"
        resp.close()
        query = {"project": "shop", "branch": "main"}
        for _ in range(2):  # asked again: whatever B may keep must not outlive A's next upload
            gate = await http.get(f"{b}/api/v1/gate", params=query)
            assert gate.status == 200
            assert (await gate.json())["runId"] == run["runId"]
        failing = junit_xml([("a", "fail"), ("b", "fail")])
        posted = await http.post(f"{a}/api/v1/ingest", data=form(project="shop", junit=[failing]))
        assert posted.status == 201, await posted.text()
        newer = await posted.json()
        verdict = await (await http.get(f"{b}/api/v1/gate", params=query)).json()
        assert (verdict["runId"], verdict["status"]) == (newer["runId"], "FAILED")
        replay = await http.get(f"{b}/api/v1/events", headers={"Last-Event-ID": "0"})
        replayed = EventReader(replay)
        assert (await replayed.next(timeout=10))["event"] == "connected"
        assert (await replayed.next(timeout=10))["id"] == str(run["runId"])
        assert (await replayed.next(timeout=10))["id"] == str(newer["runId"])
        replay.close()


async def test_a_replica_killed_mid_ingest_leaves_nothing(pg_url: str, tmp_path: Path) -> None:
    """SIGKILL while the ingest transaction is open (and holds the project's ingest lock)."""
    async with open_store(pg_url):  # migrated before the killed writer starts
        pass
    await kill_mid_ingest(pg_url, "shop", 2000)
    async with replica(pg_url, tmp_path / "b") as b, aiohttp.ClientSession() as http:
        posted = await http.post(f"{b}/api/v1/ingest", data=form(project="shop", junit=[REPORT]))
        assert posted.status == 201, await posted.text()  # the dead writer's lock went with it
        gate = await http.get(f"{b}/api/v1/gate", params={"project": "shop", "branch": "main"})
        assert (await gate.json())["runId"] == (await posted.json())["runId"]
    async with open_store(pg_url) as store:
        counts = {t: (await store.db.fetchone(f"SELECT count(*) FROM {t}"))[0] for t in RUN_TABLES}  # type: ignore[index]  # noqa: S608
    assert counts["projects"] == 1
    assert counts["runs"] == 1


async def test_replicas_starting_together_migrate_once(pg_url: str) -> None:
    async def start_and_stop() -> None:
        async with open_store(pg_url):
            pass

    await asyncio.gather(start_and_stop(), start_and_stop(), start_and_stop())
    async with open_store(pg_url) as store:
        versions = [row[0] for row in await store.db.fetchall("SELECT version FROM results_schema")]
    assert versions == list(range(1, SCHEMA.version + 1))
