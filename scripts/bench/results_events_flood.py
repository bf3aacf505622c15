"""Benchmark: anonymous SSE clients that open ``GET /api/v1/events`` and drop it, by the thousand,
then a normal client connecting at once; and the memory an idle subscriber holds.

The service runs as ``wharf serve results`` in a child process with its own data directory. The
flood comes from 127.0.0.1 and the normal client from 127.0.0.2 (another address on loopback), as
a flood and a normal user would on a network. Three phases, after a first connect of the normal
client (the baseline):

1. ``--idle`` (2,000) streams from 127.0.0.3 that stay open (authenticated by a token, so the
   per-address cap for anonymous streams does not apply), on the fresh server: its RSS growth per
   stream. Then they close.
2. ``--drops`` (10,500) anonymous streams, ``--concurrency`` (16) at a time, each reading its
   ``connected`` event and then closing the connection. Printed: how many were accepted and how
   many refused (503 at ``max-subscribers``, 429 at the per-address cap), the server's RSS.
3. Right after the flood, a normal client subscribes: printed is how long until its ``connected``
   event arrived, and how many attempts that took (a refused one is retried at once, up to 10 s).
   Before departures were noticed at once, dropped streams held their slots until the next 15 s
   keepalive, and a normal client was refused for seconds.

Targets: the normal client connects within 1 s of the flood, on its first attempt; RSS after the
flood within 40 MB of before, and 5 s later within 20 MB of the server's RSS at its start
(the server runs with ``PYTHONMALLOC=malloc``, as ``scripts/run``, the systemd units and the image
run it; ``--allocator pymalloc`` shows CPython's own allocator, which keeps about 30 MB of arenas a
few survivors pin, see ``common.memory``); under 30 KiB of RSS per idle subscriber (about 33 KiB
before the streams shared one keepalive task and a smaller mailbox). The baseline of the first
target is the same client's connect time before the flood, measured in the same run. Exits 1
when missed. Usage: ``.venv/bin/python scripts/bench/results_events_flood.py [--drops 10500]``.
Pass ``--max-subscribers 50`` to show the small-limit case of the same lockout.
This script must not be imported by the service.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import aiohttp
from harness import rss_kib, running_results
from report import Report, options

ROOT = Path(__file__).resolve().parents[2]

CONNECT_TARGET_S = 1.0
RSS_FLOOD_TARGET_MB = 40.0
IDLE_TARGET_KIB = 30.0
#: After the idle streams and the flood have gone, the server holds at most this much more than at
#: its start, once ``SETTLE_S`` has passed.
RSS_SETTLED_TARGET_MB = 20.0
SETTLE_S = 5.0


def make_token(data_dir: Path) -> str:
    """A user and a token, made with the admin commands on the server's own database."""
    sets = ["--set", f"results.data-dir={data_dir}"]
    wharf = [sys.executable, "-m", "wharf", "results"]
    subprocess.run([*wharf, "user", "add", "bench", "--password-stdin", *sets], input=b"pw-bench-1\n",
                   cwd=ROOT, check=True, capture_output=True)  # fmt: skip
    made = subprocess.run([*wharf, "token", "create", "--user", "bench", "--name", "b", *sets],
                          cwd=ROOT, check=True, capture_output=True, text=True)  # fmt: skip
    return made.stdout.strip()


async def connected(resp: aiohttp.ClientResponse) -> None:
    async for line in resp.content:
        if line.startswith(b"event: connected"):
            return
    raise RuntimeError("the stream ended before its connected event")


async def open_and_drop(session: aiohttp.ClientSession, url: str) -> int:
    async with session.get(url) as resp:
        if resp.status == 200:
            await connected(resp)
        return resp.status  # leaving the block closes the connection: the client is gone


async def flood(url: str, drops: int, concurrency: int) -> Counter[int]:
    statuses: Counter[int] = Counter()
    gate = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=0, local_addr=("127.0.0.1", 0))
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one() -> None:
            async with gate:
                statuses[await open_and_drop(session, url)] += 1

        await asyncio.gather(*(one() for _ in range(drops)))
    return statuses


async def normal_client(url: str) -> tuple[float, int]:
    """Seconds until a stream from 127.0.0.2 has its connected event, and the attempts made."""
    started, attempts = time.perf_counter(), 0
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        while time.perf_counter() - started < 10:
            attempts += 1
            async with session.get(url) as resp:
                if resp.status == 200:
                    await connected(resp)
                    return time.perf_counter() - started, attempts
    return float("inf"), attempts


async def idle_streams(url: str, count: int, token: str, pid: int) -> float:
    """RSS growth in KiB per stream of ``count`` authenticated streams held open."""
    connector = aiohttp.TCPConnector(limit=0, local_addr=("127.0.0.3", 0))
    headers = {"Authorization": f"Bearer {token}"}
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(connector=connector, headers=headers, timeout=timeout) as s:
        before = rss_kib(pid)["VmRSS"]
        ready: list[asyncio.Event] = []
        hold = asyncio.Event()

        async def keep() -> None:
            event = asyncio.Event()
            ready.append(event)
            async with s.get(url) as resp:
                resp.raise_for_status()
                await connected(resp)
                event.set()
                await hold.wait()

        tasks = [asyncio.create_task(keep()) for _ in range(count)]
        await asyncio.sleep(0)
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ready)), 120)
        await asyncio.sleep(0.5)
        grown = rss_kib(pid)["VmRSS"] - before
        hold.set()
        await asyncio.gather(*tasks)
    return grown / count


async def bench(args: argparse.Namespace, data_dir: Path, out: Report) -> None:
    token = make_token(data_dir)
    sets = (
        [f"results.events.max-subscribers={args.max_subscribers}"] if args.max_subscribers else []
    )
    # The idle streams share one address, as no real fleet does: let them all in.
    sets.append(f"results.server.max-connections-per-address={args.idle + 100}")
    print("for this run: " + ", ".join(sets))
    async with running_results(data_dir, sets=sets) as server:
        url = f"{server.base}/api/v1/events"
        calm, _ = await normal_client(url)
        rss_start = rss_kib(server.pid)["VmRSS"] / 1024
        idle = min(args.idle, args.max_subscribers // 2) if args.max_subscribers else args.idle
        per_idle = await idle_streams(url, idle, token, server.pid)
        rss_before = rss_kib(server.pid)["VmRSS"] / 1024
        started = time.perf_counter()
        statuses = await flood(url, args.drops, args.concurrency)
        took = time.perf_counter() - started
        after_s, attempts = await normal_client(url)
        rss_after = rss_kib(server.pid)["VmRSS"] / 1024
        await asyncio.sleep(args.settle)  # the flood is over: what the server keeps from it
        rss_settled = rss_kib(server.pid)["VmRSS"] / 1024
    said = ", ".join(f"{n} x {status}" for status, n in sorted(statuses.items()))
    print(f"flood: {args.drops} anonymous open-and-drops, {args.concurrency} at a time, "
          f"in {took:.1f} s: {said}")  # fmt: skip
    print(f"  server RSS {rss_before:.0f} MB before, {rss_after:.0f} MB after "
          f"({rss_after - rss_before:+.0f} MB; target < {RSS_FLOOD_TARGET_MB:.0f} MB)")  # fmt: skip
    print(f"  server RSS {rss_start:.0f} MB at the start, {rss_settled:.0f} MB {args.settle:g} s after "
          f"the flood ({rss_settled - rss_start:+.0f} MB; target < {RSS_SETTLED_TARGET_MB:.0f} MB)")  # fmt: skip
    print(f"normal client: connected {after_s * 1000:.0f} ms after the flood, attempt {attempts} "
          f"(baseline before the flood: {calm * 1000:.0f} ms; target < {CONNECT_TARGET_S:.0f} s, "
          "first attempt)")  # fmt: skip
    print(f"idle subscribers: {per_idle:.1f} KiB of RSS each over {idle} "
          f"(target < {IDLE_TARGET_KIB:.0f} KiB)")  # fmt: skip
    out.figure("connect after the flood", after_s * 1000, "ms", at_most=CONNECT_TARGET_S * 1000)
    out.figure("connect attempts after the flood", attempts, "attempts", at_most=1)
    out.figure(
        "RSS growth over the flood", rss_after - rss_before, "MB", at_most=RSS_FLOOD_TARGET_MB
    )
    out.figure(
        f"RSS {args.settle:g} s after the flood over the start",
        rss_settled - rss_start,
        "MB",
        at_most=RSS_SETTLED_TARGET_MB,
    )
    out.figure("RSS per idle subscriber", per_idle, "KiB", at_most=IDLE_TARGET_KIB)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drops", type=int, default=10_500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--idle", type=int, default=2000)
    parser.add_argument("--max-subscribers", type=int, default=0, help="0: the default")
    parser.add_argument(
        "--settle", type=float, default=SETTLE_S, help="seconds after the flood before the last RSS"
    )
    parser.add_argument(
        "--allocator",
        choices=("pymalloc", "malloc"),
        default="malloc",
        help="the server's PYTHONMALLOC (malloc, as deployed): CPython's own small-object "
        "allocator keeps arenas a few survivors pin; with malloc, glibc's trim gives nearly all "
        "of it back",
    )
    args = options(
        parser,
        quick={"drops": 2000, "idle": 500},
        # Smoke: no wait for the memory to settle (its figure is not judged in a smoke run).
        smoke={"drops": 40, "idle": 20, "concurrency": 4, "settle": 0},
    )
    out = Report.of("results_events_flood", args)
    os.environ["PYTHONMALLOC"] = args.allocator  # the server inherits this process's environment
    print(f"server allocator: PYTHONMALLOC={args.allocator}")
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(bench(args, Path(tmp, "data"), out))
    return out.emit()


if __name__ == "__main__":
    sys.exit(main())
