"""``wharf serve`` as a process: it announces its URL, serves, and stops cleanly on SIGTERM,
closing open event streams instead of waiting on them."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_sigterm_closes_streams_and_exits_cleanly(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wharf",
            "serve",
            "results",
            "--port",
            str(port),
            "--set",
            f"results.data-dir={tmp_path}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
        assert line.strip() == f"results listening on http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as session:
            health = await session.get(f"http://127.0.0.1:{port}/actuator/health/liveness")
            assert (await health.json()) == {"status": "UP"}
            stream = await session.get(f"http://127.0.0.1:{port}/api/v1/events")
            assert stream.status == 200
            first = await asyncio.wait_for(stream.content.readline(), 10)
            assert first  # the stream is open and has sent its first line
            proc.send_signal(signal.SIGTERM)
            rest = await asyncio.wait_for(stream.content.read(), 20)  # ends, not hangs
            assert isinstance(rest, bytes)
        code = await asyncio.wait_for(asyncio.to_thread(proc.wait), 30)
        assert code == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
