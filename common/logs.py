"""Logging of a served Wharf process: nothing formatted or written on the event loop, a cheap access
log, an optional JSON line format for log shippers, and one short line for a malformed request.

Every record waits in a deque: the event loop only merges a record's arguments (cheap, and the
arguments may change later), stamps the request id and appends; a writer thread formats the time,
the line and any traceback and writes what is pending every 50 ms (waking it per line would cost
the loop more than the formatting). The access log is one record per request with the fields as
attributes, so the JSON format needs no parsing. aiohttp logs a malformed request (a NUL byte in a
header, a bad request line) as an ERROR with a twelve-line traceback, which lets anyone flood the log:
here it is one WARNING line naming the client and the kind of error (never the bytes sent, which may
hold a credential), at most ``BAD_REQUEST_BURST`` per minute. This module knows no service.
"""

from __future__ import annotations

import atexit
import collections
import json
import logging
import sys
import threading
import time
from typing import Any, TextIO

from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_request import BaseRequest
from aiohttp.web_response import StreamResponse

from common.app import RequestIdFilter

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
ACCESS_LOGGER = "aiohttp.access"
#: Malformed-request lines logged per minute; past it they are counted and the count is logged.
BAD_REQUEST_BURST = 10
BAD_REQUEST_WINDOW_S = 60.0
#: Seconds between two writes of what was logged: a line appears at most this late.
WRITE_INTERVAL_S = 0.05


class _Deferred(logging.Handler):
    """Keeps records for the writer thread. A record costs the event loop an append: no lock
    hand-off and no thread wake-up per line (those cost more than formatting under load)."""

    def __init__(self, pending: collections.deque[logging.LogRecord]) -> None:
        super().__init__()
        self.pending = pending

    def handle(self, record: logging.LogRecord) -> bool:
        if not self.filter(record):
            return False
        if record.args:  # merged now: the arguments may change once the call returned
            record.msg = record.getMessage()
            record.args = None
        self.pending.append(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        self.handle(record)


class _Writer(threading.Thread):
    """Formats and writes what is pending every ``WRITE_INTERVAL_S``, and once more on stop."""

    def __init__(self, pending: collections.deque[logging.LogRecord], out: logging.Handler) -> None:
        super().__init__(name="wharf-log-writer", daemon=True)
        self.pending, self.out = pending, out
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(WRITE_INTERVAL_S):
            self.drain()
        self.drain()

    def drain(self) -> None:
        while self.pending:
            self.out.handle(self.pending.popleft())
        self.out.flush()

    def stop(self) -> None:
        self.stopping.set()
        self.join()


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ms), level, logger, requestId, message, and for access
    lines the request's fields under ``http``; a traceback as ``exception``."""

    def format(self, record: logging.LogRecord) -> str:
        seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        line: dict[str, Any] = {
            "time": f"{seconds}.{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "requestId": getattr(record, "request_id", "-"),
            "message": record.getMessage(),
        }
        http = getattr(record, "http", None)
        if http is not None:
            line["http"] = http
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


class AccessLogger(AbstractAccessLogger):
    """``remote "METHOD /path?query HTTP/1.1" status bytes seconds rid=<request id>``."""

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)

    def log(self, request: BaseRequest, response: StreamResponse, time: float) -> None:
        version = request.version
        rid = response.headers.get("X-Request-Id", "-")
        size = response.body_length
        self.logger.info(
            '%s "%s %s HTTP/%d.%d" %d %d %.6fs rid=%s',
            request.remote,
            request.method,
            request.path_qs,
            version.major,
            version.minor,
            response.status,
            size,
            time,
            rid,
            extra={
                "http": {
                    "remote": request.remote,
                    "method": request.method,
                    "path": request.path_qs,
                    "status": response.status,
                    "bytes": size,
                    "seconds": round(time, 6),
                    "requestId": rid,
                }
            },
        )


class BadRequestFilter(logging.Filter):
    """On ``aiohttp.server``: a malformed request's ERROR and traceback become one WARNING line."""

    def __init__(
        self, *, burst: int = BAD_REQUEST_BURST, window_s: float = BAD_REQUEST_WINDOW_S
    ) -> None:
        super().__init__()
        self.burst, self.window_s = burst, window_s
        self._window_started = float("-inf")
        self._seen = 0
        self._suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, HttpProcessingError):
            return True
        now = time.monotonic()
        if now - self._window_started >= self.window_s:
            self._window_started, self._seen = now, 0
        self._seen += 1
        if self._seen > self.burst:
            self._suppressed += 1
            return False
        remote = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
        kind = (
            exc.message.split(":", 1)[0].strip().splitlines()[0] if exc.message else "bad request"
        )
        record.msg = "bad request from %s: %s (%d %s)"
        record.args = (remote, kind[:80], exc.code, type(exc).__name__)
        if self._suppressed:
            record.msg += "; %d more not logged"
            record.args += (self._suppressed,)
            self._suppressed = 0
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text = None, None
        return True


def install_bad_request_filter() -> None:
    server = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, BadRequestFilter) for f in server.filters):
        server.addFilter(BadRequestFilter())


_writer: _Writer | None = None


def configure_logging(
    level: str = "INFO", *, json_lines: bool = False, stream: TextIO | None = None
) -> None:
    """Root logging of this process through the writer thread, in text or JSON lines, to
    ``stream`` (stderr); flushed at exit. Calling it again replaces the previous set-up."""
    global _writer
    if _writer is None:
        atexit.register(_stop)
    _stop()
    # No format here shows the caller, thread or process: do not look them up for every record
    # (the logging documentation's own advice for speed).
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    out = logging.StreamHandler(stream or sys.stderr)
    out.setFormatter(JsonFormatter() if json_lines else logging.Formatter(TEXT_FORMAT))
    pending: collections.deque[logging.LogRecord] = collections.deque()
    handler = _Deferred(pending)
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    _writer = _Writer(pending, out)
    _writer.start()
    install_bad_request_filter()


def _stop() -> None:
    """Write what is pending and stop the writer thread."""
    if _writer is not None and _writer.is_alive():
        _writer.stop()
