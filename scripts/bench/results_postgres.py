"""Benchmark: the results service on PostgreSQL against SQLite, and two replicas against one.

Starts a PostgreSQL server for the run (the test suite's launcher, a temporary directory, a free
loopback port) and ``wharf serve results`` child processes, then prints:

- ``ingest``: ``POST /api/v1/ingest`` of a 20,000-testcase JUnit report + a ~5 MB JaCoCo report
  over real HTTP, on a server with SQLite and on one with PostgreSQL, samples alternating, best
  of N. Target: PostgreSQL within 1.5x of SQLite (the baseline, same run, same files).
- ``throughput``: 8 concurrent uploaders (one project each, a 2,000-case report per upload)
  against one replica, then against two replicas on the same database (uploaders split between
  them). Target: two replicas ingest at least 1.6x as many reports per second as one. The machine
  must have the cores for it: with two, a replica and PostgreSQL already share them.

Exits 1 when a target is missed. Usage:
``.venv/bin/python scripts/bench/results_postgres.py [--repeats 3 --uploads 6]``.
This script must not be imported by the service.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from harness import free_port, wait_ready  # noqa: E402 - a sibling, as below
from harness import start_results as start_server  # noqa: E402
from results_ingest import ingest  # noqa: E402
from results_parse import TESTCASES, write_jacoco, write_junit  # noqa: E402

from tests import pgserver  # noqa: E402 - the suite's PostgreSQL launcher

INGEST_TARGET, THROUGHPUT_TARGET = 1.5, 1.6
UPLOADERS, SMALL_CASES = 8, 2000


@contextlib.asynccontextmanager
async def replica(
    session: aiohttp.ClientSession, data_dir: Path, db_url: str | None
) -> AsyncIterator[str]:
    port = free_port()
    server: subprocess.Popen[bytes] = start_server(data_dir, port, db_url=db_url)
    base = f"http://127.0.0.1:{port}"
    try:
        await wait_ready(session, base)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def small_report(n: int) -> bytes:
    cases = "".join(
        f'<testcase classname="c.C{i % 50}" name="t{i}" time="0.01"/>' for i in range(SMALL_CASES)
    )
    return f'<testsuite name="s{n}" tests="{SMALL_CASES}">{cases}</testsuite>'.encode()


async def upload(session: aiohttp.ClientSession, base: str, project: str, n: int) -> None:
    form = aiohttp.FormData()
    for name, value in (("project", project), ("branch", "main"), ("commit", f"{n:040x}")):
        form.add_field(name, value)
    form.add_field("junit", small_report(n), filename="junit.xml", content_type="text/xml")
    async with session.post(f"{base}/api/v1/ingest", data=form) as resp:
        if resp.status != 201:
            raise RuntimeError(f"ingest answered {resp.status}: {await resp.text()}")


async def throughput(session: aiohttp.ClientSession, bases: list[str], uploads: int) -> float:
    """Reports ingested per second by ``UPLOADERS`` concurrent uploaders spread over ``bases``."""

    async def uploader(k: int) -> None:
        base = bases[k % len(bases)]
        for n in range(uploads):
            await upload(session, base, f"load-{len(bases)}-{k}", n)

    started = time.perf_counter()
    await asyncio.gather(*(uploader(k) for k in range(UPLOADERS)))
    return UPLOADERS * uploads / (time.perf_counter() - started)


async def run(tmp: Path, server: pgserver.PgServer, repeats: int, uploads: int) -> dict[str, float]:
    junit, jacoco = tmp / "junit.xml", tmp / "jacoco.xml"
    write_junit(junit)
    write_jacoco(jacoco)
    files = {
        "junit": ("junit.xml", junit.read_bytes()),
        "jacoco": ("jacoco.xml", jacoco.read_bytes()),
    }
    timeout = aiohttp.ClientTimeout(total=600)
    pg_url = server.new_database()
    figures: dict[str, list[float]] = {"sqlite": [], "postgresql": []}
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with (
            replica(session, tmp / "lite", None) as lite,
            replica(session, tmp / "pg", pg_url) as pg,
        ):
            for n in range(1, repeats + 1):
                for name, base in (("sqlite", lite), ("postgresql", pg)):
                    elapsed, body = await ingest(session, base, files, n)
                    assert body["tests"] == TESTCASES, body
                    figures[name].append(elapsed)
        load_url = server.new_database()
        async with replica(session, tmp / "one", load_url) as one:
            await upload(session, one, "warm", 0)
            single = await throughput(session, [one], uploads)
        async with (
            replica(session, tmp / "a", load_url) as a,
            replica(session, tmp / "b", load_url) as b,
        ):
            await upload(session, b, "warm", 1)
            double = await throughput(session, [a, b], uploads)
    return {
        "sqlite": min(figures["sqlite"]),
        "postgresql": min(figures["postgresql"]),
        "single": single,
        "double": double,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--uploads", type=int, default=6, help="uploads per uploader")
    args = parser.parse_args()
    server = pgserver.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            f = asyncio.run(run(Path(tmp), server, args.repeats, args.uploads))
    finally:
        server.stop()
    ingest_ratio, scale = f["postgresql"] / f["sqlite"], f["double"] / f["single"]
    print(f"ingest of {TESTCASES} cases + ~5 MB JaCoCo, best of {args.repeats}, alternating:")
    print(f"  SQLite (baseline)  {f['sqlite']:6.3f} s")
    print(f"  PostgreSQL         {f['postgresql']:6.3f} s")
    print(f"ratio PostgreSQL / SQLite: {ingest_ratio:.2f}x (target <= {INGEST_TARGET}x)")
    print(f"{UPLOADERS} uploaders x {args.uploads} uploads of {SMALL_CASES} cases, PostgreSQL:")
    print(f"  one replica (baseline)  {f['single']:6.2f} uploads/s")
    print(f"  two replicas            {f['double']:6.2f} uploads/s")
    print(f"ratio two / one: {scale:.2f}x (target >= {THROUGHPUT_TARGET}x; {os.cpu_count()} CPUs)")
    met = ingest_ratio <= INGEST_TARGET and scale >= THROUGHPUT_TARGET
    print("targets met" if met else "TARGET MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
