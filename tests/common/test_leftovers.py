"""What a process killed mid-write leaves behind is gone when the service starts again (issue 39
item 13): a real ``wharf serve`` killed with SIGKILL during an upload, then started again."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from common.leftovers import sweep
from tests.addresses import free_port

BOUNDARY = "b0undary"


async def serve(service: str, port: int, *sets: str) -> subprocess.Popen[str]:
    """``wharf serve <service>`` once it announces that it listens."""
    command = [sys.executable, "-m", "wharf", "serve", service, "--port", str(port)]
    for item in sets:
        command += ["--set", item]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
    assert "listening on" in line, line
    return proc


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


async def appears(look: Callable[[], list[Path]], *, seconds: float = 20) -> list[Path]:
    async with asyncio.timeout(seconds):
        while not (found := look()):
            await asyncio.sleep(0.05)
    return found


async def test_results_upload_spools_of_a_killed_process_are_swept_at_start(
    tmp_path: Path,
) -> None:
    spool = tmp_path / "spool"
    port = free_port()
    proc = await serve("results", port, f"results.data-dir={tmp_path}")
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        head = (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="junit"; '
            'filename="report.xml"\r\nContent-Type: application/xml\r\n\r\n<testsuite>'
        )
        writer.write(
            (
                "POST /api/v1/ingest?project=p HTTP/1.1\r\nHost: x\r\n"
                f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                "Content-Length: 10000000\r\n\r\n" + head + "x" * 200_000
            ).encode()
        )
        await writer.drain()
        left = await appears(lambda: [p for p in spool.glob("upload-*") if any(p.iterdir())])
        proc.send_signal(signal.SIGKILL)  # mid-upload: no finally runs
        proc.wait()
        writer.close()
        assert all(p.exists() for p in left)  # what the kill left behind
    finally:
        stop(proc)
    proc = await serve("results", port, f"results.data-dir={tmp_path}")
    try:
        assert list(spool.glob("upload-*")) == []
    finally:
        stop(proc)


async def test_chartsvc_staged_index_files_and_work_folders_are_swept_at_start(
    tmp_path: Path,
) -> None:
    cache, temp = tmp_path / "data" / "repository", tmp_path / "tmp"
    (cache / "r").mkdir(parents=True)
    (cache / "r" / "index.yaml").write_text("apiVersion: v1\nentries: {}\n")
    staged = cache / "r" / ".index.yaml.k3x9q.tmp"  # as files.stage names a file in flight
    staged.write_bytes(b"x" * 1000)
    work = temp / "chartsvc-show-a1b2"
    work.mkdir(parents=True)
    (work / "chart.tgz").write_bytes(b"x")
    sets = (f"chartsvc.data-dir={tmp_path / 'data'}", f"chartsvc.rest.temp-dir={temp}")
    proc = await serve("chartsvc", free_port(), *sets)
    try:
        assert not staged.exists()
        assert not work.exists()
        assert (cache / "r" / "index.yaml").exists()  # published files stay
    finally:
        stop(proc)


def test_sweep_takes_only_what_matches(tmp_path: Path) -> None:
    (tmp_path / "upload-1").mkdir()
    (tmp_path / "upload-1" / "part").write_text("x")
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / ".a.tmp").write_text("x")
    assert sweep(tmp_path, "upload-*") == 1
    assert sweep(tmp_path / "missing", "*") == 0
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".a.tmp", "keep"]
    assert sweep(tmp_path, ".*.tmp", recursive=True) == 1
