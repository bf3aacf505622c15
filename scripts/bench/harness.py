"""What several benchmarks share: a free loopback port, a service's CPU from ``/proc``, the
results service started as a child process and waited for, timed GETs and percentiles. Imported by the sibling scripts (run
as scripts, their own folder is on ``sys.path``); the services never import it."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[2]


def percentile(values: list[float], fraction: float) -> float:
    """The value below which ``fraction`` of ``values`` lie (0.95: the 95th percentile)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


async def timed_get(
    session: aiohttp.ClientSession, url: str, params: dict[str, str] | None = None
) -> float:
    """Milliseconds from sending a GET to its whole body read; raises unless it answered 200."""
    started = time.perf_counter()
    async with session.get(url, params=params) as resp:
        await resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{url} {params or ''} answered {resp.status}")
    return (time.perf_counter() - started) * 1000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far (``/proc/<pid>/stat`` fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_results(
    data_dir: Path, port: int, *, db_url: str | None = None
) -> subprocess.Popen[bytes]:
    """``wharf serve results`` on loopback with its own data directory (and ``db_url``'s database
    when given); wait with :func:`wait_ready`."""
    command = [sys.executable, "-m", "wharf", "serve", "results", "--port", str(port)]
    command += ["--host", "127.0.0.1", "--set", f"results.data-dir={data_dir}"]
    if db_url is not None:
        command += ["--set", f"results.db.url={db_url}"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def wait_ready(session: aiohttp.ClientSession, base: str) -> None:
    for _ in range(200):
        try:
            async with session.get(f"{base}/actuator/health/readiness") as resp:
                if resp.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.05)
    raise RuntimeError(f"the service at {base} did not become ready")
