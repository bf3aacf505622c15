"""Logging of a served process: the access line and its JSON form, malformed requests as one
rate-limited line that never repeats the bytes sent, ``--version`` and a port already taken."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from common import logs
from common.logs import AccessLogger, BadRequestFilter, JsonFormatter
from tests.addresses import free_port

WHARF = [sys.executable, "-m", "wharf"]
#: A header with a NUL byte in its value: aiohttp refuses it with 400.
NUL_REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer hunter2\x00\r\n\r\n"


async def hello(request: web.Request) -> web.Response:
    return web.Response(text="hi", headers={"X-Request-Id": "rid-1"})


@pytest.fixture
def bad_request_filter() -> Iterator[BadRequestFilter]:
    server = logging.getLogger("aiohttp.server")
    found = BadRequestFilter(burst=2)
    server.addFilter(found)
    yield found
    server.removeFilter(found)


async def send_raw(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    answer = await reader.read()
    writer.close()
    await writer.wait_closed()
    return answer


async def test_access_line_and_its_json_form(
    aiohttp_server: AiohttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    app = web.Application()
    app.router.add_get("/hello", hello)
    server = await aiohttp_server(app, access_log_class=AccessLogger)
    with caplog.at_level(logging.INFO, logger="aiohttp.access"):
        async with aiohttp.ClientSession() as session:
            await (await session.get(server.make_url("/hello?a=1"))).read()
        await asyncio.sleep(0)  # the line is written once the handler returned
    [record] = [r for r in caplog.records if r.name == "aiohttp.access"]
    line = record.getMessage()
    assert re.fullmatch(
        r'127\.0\.0\.1 "GET /hello\?a=1 HTTP/1\.1" 200 \d+ [0-9.]+s rid=rid-1', line
    )
    record.request_id = "rid-1"
    shaped = json.loads(JsonFormatter().format(record))
    assert shaped["http"] == {
        "remote": "127.0.0.1",
        "method": "GET",
        "path": "/hello?a=1",
        "status": 200,
        "bytes": shaped["http"]["bytes"],  # as sent, headers included
        "seconds": shaped["http"]["seconds"],
        "requestId": "rid-1",
    }
    assert shaped["level"] == "INFO"
    assert shaped["time"].endswith("Z")


async def test_the_access_line_shows_the_request_target_as_sent(
    aiohttp_server: AiohttpServer, caplog: pytest.LogCaptureFixture
) -> None:
    """As nginx's ``$request``: a client using the server as a proxy (an absolute-form target)
    shows in the line as such."""
    app = web.Application()
    app.router.add_get("/hello", hello)
    server = await aiohttp_server(app, access_log_class=AccessLogger)
    assert server.port is not None
    with caplog.at_level(logging.INFO, logger="aiohttp.access"):
        answer = await send_raw(
            server.port,
            b"GET http://elsewhere.test/hello?r=a%2Fb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        await asyncio.sleep(0)
    assert answer.startswith(b"HTTP/1.1 200")
    [record] = [r for r in caplog.records if r.name == "aiohttp.access"]
    assert '"GET http://elsewhere.test/hello?r=a%2Fb HTTP/1.1" 200' in record.getMessage()


async def test_malformed_requests_are_one_line_each_and_rate_limited(
    aiohttp_server: AiohttpServer,
    caplog: pytest.LogCaptureFixture,
    bad_request_filter: BadRequestFilter,
) -> None:
    server = await aiohttp_server(web.Application())
    port = server.port
    assert port is not None
    with caplog.at_level(logging.DEBUG, logger="aiohttp.server"):
        for _ in range(4):
            assert (
                (await send_raw(port, NUL_REQUEST)).split(b"\r\n")[0].endswith(b" 400 Bad Request")
            )
        bad_request_filter.window_s = 0  # the next one opens a new window
        await send_raw(port, NUL_REQUEST)
    records = [r for r in caplog.records if r.name == "aiohttp.server"]
    assert len(records) == 3
    for record in records:
        assert record.levelno == logging.WARNING
        assert record.exc_info is None
        message = record.getMessage()
        assert "\n" not in message
        assert message.startswith("bad request from 127.0.0.1: ")
        assert "hunter2" not in message
    assert records[-1].getMessage().endswith("; 2 more not logged")


def test_probe_fails_when_nothing_answers() -> None:
    probe = [*WHARF, "probe", "--port", str(free_port())]
    result = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr == "wharf: no service answered its liveness check\n"


def test_version_option() -> None:
    result = subprocess.run([*WHARF, "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout.startswith("wharf ")


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        data = f"results.data-dir={tmp_path}"
        result = subprocess.run(
            [*WHARF, "serve", "results", "--port", str(port), "--set", data],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert result.stderr == (
        f"wharf: 127.0.0.1:{port} is already in use by another program; "
        "stop it or choose another port with --port\n"
    )
    assert not (tmp_path / "results.db").exists()  # refused before any state opened


async def test_a_served_process_logs_json_lines_and_tells_systemd(tmp_path: Path) -> None:
    port = free_port()
    command = [*WHARF, "serve", "results", "--port", str(port), "--log-format", "json"]
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(30)
    proc = subprocess.Popen(
        [*command, "--set", f"results.data-dir={tmp_path}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify")},
    )
    try:
        assert proc.stdout is not None
        await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
        assert await asyncio.to_thread(notify.recv, 100) == b"READY=1"  # Type=notify units
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{port}/actuator/health/liveness"
            await (await session.get(url, headers={"X-Request-Id": "probe-7"})).read()
        await send_raw(port, NUL_REQUEST)
        probe = [*WHARF, "probe", "--port", str(port)]  # the container image's health check
        probed = await asyncio.to_thread(subprocess.run, probe, capture_output=True, timeout=60)
        assert probed.returncode == 0, probed.stderr
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(asyncio.to_thread(proc.communicate), 30)
        assert await asyncio.to_thread(notify.recv, 100) == b"STOPPING=1"
    finally:
        notify.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [json.loads(line) for line in err.splitlines()]  # every line is one JSON object
    accessed = [line["http"] for line in lines if line["logger"] == "aiohttp.access"]
    [access] = [http for http in accessed if http["requestId"] == "probe-7"]
    assert access["path"] == "/actuator/health/liveness"
    [bad] = [line for line in lines if line["logger"] == "aiohttp.server"]
    assert bad["level"] == "WARNING"
    assert "exception" not in bad
    assert "hunter2" not in err


def _record_at(
    created: float, fields: tuple[object, ...], monkeypatch: pytest.MonkeyPatch
) -> logging.LogRecord:
    """The access record the logging module makes for ``fields`` at ``created``."""
    with monkeypatch.context() as patched:
        patched.setattr(time, "time", lambda: created)
        patched.setattr(time, "time_ns", lambda: round(created * 1e9))
        return logging.getLogger(logs.ACCESS_LOGGER).makeRecord(
            logs.ACCESS_LOGGER,
            logging.INFO,
            "",
            0,
            logs.ACCESS_FORMAT,
            fields,
            None,
            extra={"http": logs._http_fields(fields), "request_id": fields[-1]},
        )


@pytest.mark.parametrize(
    "created", [1764150000.0, 1764150000.0004, 1764150000.9999, 1764150061.5, 1764160000.123456]
)
def test_the_fast_access_line_is_the_formatters_line(
    created: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Access lines are made where they are logged, for speed: the text and the JSON must be
    exactly what the logging formatters make of the same line's record (time, milliseconds,
    level, logger, id, fields)."""
    fields = ("127.0.0.1", "GET", "/api/v1/repos?x=%25", 1, 1, 200, 17, 0.000123, "rid-42")
    record = _record_at(created, fields, monkeypatch)
    for _ in range(2):  # the second time from the kept second
        assert logs.access_text(created, fields) == logging.Formatter(logs.TEXT_FORMAT).format(
            record
        )
    assert logs.access_json(created, fields) == JsonFormatter().format(record)


@pytest.mark.parametrize("json_lines", [False, True])
def test_logged_values_cannot_forge_a_line(json_lines: bool) -> None:
    """A value with a line break (an audit target, a name from a request) stays on its line,
    escaped; the message's own text, numbers and tracebacks are as they were."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    out = io.StringIO()
    try:
        logs.configure_logging("INFO", json_lines=json_lines, stream=out)
        forged = "pods/x\r\n2026-11-29 00:00:00,000 INFO console.audit user=admin\x1b[2J"
        logging.getLogger("console.audit").info("target=%s n=%d", forged, 7)
        logging.getLogger("x").warning("failed: %s", ValueError("bad\nvalue"))
        logs._stop()
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines
    shown = [json.loads(line)["message"] for line in lines] if json_lines else lines
    assert shown[0].endswith(
        "target=pods/x\\r\\n2026-11-29 00:00:00,000 INFO console.audit user=admin\\x1b[2J n=7"
    )
    assert shown[1].endswith("failed: bad\\nvalue")
