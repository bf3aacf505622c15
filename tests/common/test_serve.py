"""``wharf serve`` as a process: it announces its URL, serves, and stops cleanly on SIGTERM,
closing open event streams instead of waiting on them."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp

from tests.addresses import free_port


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
        assert line.strip() == f"results listening on http://127.0.0.1:{port} (uvloop event loop)"
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
        assert proc.stderr is not None
        access = (
            r"^.* INFO aiohttp\.access \[(\w+)\] 127\.0\.0\.1 "
            r'"GET /actuator/health/liveness HTTP/1\.1" 200 \d+ [0-9.]+s rid=\1$'
        )
        assert re.search(access, proc.stderr.read(), re.MULTILINE)  # written before the exit
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_debug_logs_carry_no_password_session_csrf_or_token(tmp_path: Path) -> None:
    """At DEBUG, a login and a token creation leave none of their secrets in the log."""
    password = "correct-horse-battery-9"
    wharf = [sys.executable, "-m", "wharf"]
    where = ["--set", f"results.data-dir={tmp_path}"]
    made = subprocess.run(
        [*wharf, "results", "user", "add", "alice", "--password-stdin", *where],
        input=password + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    port = free_port()
    proc = subprocess.Popen(
        [*wharf, "serve", "results", "--port", str(port), "--log-level", "DEBUG", *where],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    secrets: list[str] = [password]
    try:
        assert proc.stdout is not None
        await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
        base = f"http://127.0.0.1:{port}"
        # unsafe=True: the jar keeps cookies of an IP address host (loopback here)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            login_page = await (await session.get(f"{base}/login")).text()
            login_csrf = login_page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
            form = {"username": "alice", "password": password, "csrf": login_csrf}
            signed_in = await session.post(f"{base}/login", data=form, allow_redirects=False)
            assert signed_in.status == 303
            cookie = signed_in.cookies["results_session"].value
            profile = await (await session.get(f"{base}/profile")).text()
            csrf = profile.split('name="csrf" value="', 1)[1].split('"', 1)[0]
            made_token = await session.post(
                f"{base}/profile/tokens", data={"csrf": csrf, "name": "ci", "expires_days": "30"}
            )
            assert made_token.status == 200
            shown = await made_token.text()
            token = shown.split('id="new-token">', 1)[1].split("<", 1)[0].strip()
            secrets += [login_csrf, cookie, csrf, token]
            me = await session.get(
                f"{base}/api/v1/me", headers={"Authorization": f"Bearer {token}"}
            )
            assert me.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _, log = await asyncio.wait_for(asyncio.to_thread(proc.communicate), 30)
    assert " DEBUG " in log  # the level really was DEBUG
    leaked = [i for i, secret in enumerate(secrets) if secret and secret in log]
    assert not leaked, f"secrets #{leaked} of password, login CSRF, cookie, CSRF, token are logged"
