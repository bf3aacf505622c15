"""Logging of a served Wharf process: nothing written on the event loop, a cheap access log, an
optional JSON line format for log shippers, and one short line for a malformed request.

Everything written waits in a deque for a writer thread, which writes what is pending every 50 ms in
one system call (waking it per line would cost the loop more than the line). An access line is made
where it is logged, on the event loop, in one string formatting (~2 µs with its time; a JSON line
~9 µs), and the writer only joins and writes it (~0.5 µs): the GIL is one, so a line the thread
formats holds the event loop up as much as one the loop formats, and formatting it there cost more
(the loop's append of the fields and the writer's unpacking and formatting: 3.6 µs a line in all,
against 2.4 µs now; least of 25 rounds of 20,000 lines). Other records are rare: the loop only
merges their arguments (the arguments may change later) and stamps the request id; the writer
formats them, tracebacks included. The JSON access line carries the request's fields under ``http``,
so a log shipper needs no parsing. aiohttp logs a malformed request (a NUL byte in a header, a bad
request line) as an ERROR with a twelve-line traceback, which lets anyone flood the log: here it is
one WARNING line naming the client and the kind of error (never the bytes sent, which may hold a
credential), at most ``BAD_REQUEST_BURST`` per minute. This module knows no service.
"""

from __future__ import annotations

import atexit
import collections
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_request import BaseRequest
from aiohttp.web_response import StreamResponse

from common.app import RequestIdFilter
from common.redact import redacted_target

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
ACCESS_LOGGER = "aiohttp.access"
#: Malformed-request lines logged per minute; past it they are counted and the count is logged.
BAD_REQUEST_BURST = 10
BAD_REQUEST_WINDOW_S = 60.0
#: Libraries whose DEBUG lines are data, not events: aiosqlite logs two lines per statement, which
#: would drown a service's own DEBUG lines, so it stays at INFO whatever the level asked. (Their
#: parameters are dropped anyway, by ``common.db.sqlite.StatementsOnly``.)
QUIET_LOGGERS = ("aiosqlite",)
#: Seconds between two writes of what was logged: a line appears at most this late.
WRITE_INTERVAL_S = 0.05


#: What waits for the writer: a line made already (an access line) or a record to format.
Pending = collections.deque[str | logging.LogRecord]
ACCESS_FORMAT = '%s "%s %s HTTP/%d.%d" %d %d %.6fs rid=%s'
#: ``TEXT_FORMAT`` of an access line in one formatting: the second's time, the milliseconds, the
#: request id, then the fields of ``ACCESS_FORMAT``.
_ACCESS_TEXT = f"%s,%03d INFO {ACCESS_LOGGER} [%s] {ACCESS_FORMAT}"


#: Line breaks and other controls a logged value may not carry into the log as they are: a value
#: with a CR or LF would forge a line of its own. Each becomes its Python escape (``\\r``, ``\\x1b``).
_CONTROLS = {c: repr(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029)}


def escaped(value: Any) -> Any:
    """A logged value as it may appear in a line: text (an exception's too) with its control
    characters escaped; anything else as it is (``%d`` and ``%r`` keep working)."""
    if isinstance(value, BaseException):
        value = str(value)
    if isinstance(value, str) and not value.isprintable():
        return value.translate(_CONTROLS)
    return value


class _Deferred(logging.Handler):
    """Keeps records for the writer thread. A record costs the event loop an append: no lock
    hand-off and no thread wake-up per line (those cost more than formatting under load)."""

    def __init__(self, pending: Pending) -> None:
        super().__init__()
        self.pending = pending

    def handle(self, record: logging.LogRecord) -> bool:
        if not self.filter(record):
            return False
        if record.args:  # merged now: the arguments may change once the call returned
            if isinstance(record.args, tuple):
                record.args = tuple(map(escaped, record.args))
            record.msg = record.getMessage()
            record.args = None
        self.pending.append(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        self.handle(record)


class _Writer(threading.Thread):
    """Writes what is pending every ``WRITE_INTERVAL_S``, and once more on stop, in one system
    call (the GIL is free while it writes). Lines come made; records it formats, giving the GIL
    back every ``CHUNK`` records (a traceback takes milliseconds to format: a writer holding the
    GIL that long would hold the event loop up)."""

    CHUNK = 64

    def __init__(self, pending: Pending, out: logging.StreamHandler[TextIO]) -> None:
        super().__init__(name="wharf-log-writer", daemon=True)
        self.pending, self.out = pending, out
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(WRITE_INTERVAL_S):
            self.drain()
        self.drain()

    def drain(self) -> None:
        lines: list[str] = []
        record: logging.LogRecord | None = None
        formatted = 0
        while self.pending:
            item = self.pending.popleft()
            if isinstance(item, str):
                lines.append(item)
                continue
            record = item
            try:
                if self.out.filter(record):
                    lines.append(self.out.format(record))
            except Exception:  # a record that cannot be formatted, as logging reports it
                self.out.handleError(record)
            formatted += 1
            if formatted % self.CHUNK == 0:
                time.sleep(0)  # let the event loop have the GIL
        if lines:
            self.out.acquire()
            try:
                self.out.stream.write("\n".join(lines) + "\n")
                self.out.flush()
            except Exception:  # the stream is gone (a closed pipe): as logging reports it
                self.out.handleError(record or logging.makeLogRecord({"msg": "access lines"}))
            finally:
                self.out.release()

    def stop(self) -> None:
        self.stopping.set()
        self.join()


class _SecondText:
    """A second's time in ``fmt`` (``convert`` is ``time.localtime`` or ``time.gmtime``), kept until
    the second changes: ``strftime`` costs more than the rest of an access line."""

    def __init__(self, fmt: str, convert: Callable[[float], time.struct_time]) -> None:
        self.fmt, self.convert = fmt, convert
        self.kept: tuple[int, str] = (-1, "")  # one tuple: loops in other threads may share it

    def __call__(self, second: int) -> str:
        kept, text = self.kept
        return text if second == kept else self.made(second)

    def made(self, second: int) -> str:
        text = time.strftime(self.fmt, self.convert(second))
        self.kept = (second, text)
        return text


_LOCAL_SECOND = _SecondText("%Y-%m-%d %H:%M:%S", time.localtime)  # as logging.Formatter
_UTC_SECOND = _SecondText("%Y-%m-%dT%H:%M:%S", time.gmtime)


def access_text(created: float, fields: tuple[Any, ...]) -> str:
    """``TEXT_FORMAT`` of an access line, exactly what ``logging.Formatter`` makes of its record,
    in one formatting and without making the record."""
    second = int(created)
    kept, text = _LOCAL_SECOND.kept  # read here: a call per line costs more than the rest
    if second != kept:
        text = _LOCAL_SECOND.made(second)
    return _ACCESS_TEXT % (text, (created - second) * 1000, fields[-1], *fields)


def access_json(created: float, fields: tuple[Any, ...]) -> str:
    """The JSON line of an access line: what :class:`JsonFormatter` makes of its record."""
    return _json_line(
        created, "INFO", ACCESS_LOGGER, fields[-1], ACCESS_FORMAT % fields, _http_fields(fields)
    )


#: One encoder for every JSON line: ``json.dumps`` with any option makes a new one per call.
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _json_line(
    created: float,
    level: str,
    logger_name: str,
    request_id: str,
    message: str,
    http: dict[str, Any] | None = None,
    exception: str | None = None,
) -> str:
    second = int(created)
    line: dict[str, Any] = {
        "time": f"{_UTC_SECOND(second)}.{int((created - second) * 1000):03d}Z",
        "level": level,
        "logger": logger_name,
        "requestId": request_id,
        "message": message,
    }
    if http is not None:
        line["http"] = http
    if exception is not None:
        line["exception"] = exception
    return _JSON.encode(line)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ms), level, logger, requestId, message, and for access
    lines the request's fields under ``http``; a traceback as ``exception``."""

    def format(self, record: logging.LogRecord) -> str:
        return _json_line(
            record.created,
            record.levelname,
            record.name,
            getattr(record, "request_id", "-"),
            record.getMessage(),
            getattr(record, "http", None),
            self.formatException(record.exc_info) if record.exc_info else None,
        )


class AccessLogger(AbstractAccessLogger):
    """``remote "METHOD /path?query HTTP/1.1" status bytes seconds rid=<request id>``.

    Under :func:`configure_logging` the line is made here, in the format configured, and handed to
    the writer: no log record (most of a record's cost is making it). Otherwise (a test, an
    embedding host) it goes through the ``aiohttp.access`` logger like any record."""

    @property
    def enabled(self) -> bool:
        return self.logger.isEnabledFor(logging.INFO)

    def log(self, request: BaseRequest, response: StreamResponse, elapsed: float) -> None:
        target = request.raw_path  # as sent, as nginx logs it (``path_qs`` rebuilds it)
        # Credentials in it masked, controls escaped: only a target with an ``@`` or a ``%`` (an
        # encoded one) can hold credentials (``redacted_target``), and most have neither.
        if "@" in target or "%" in target or not target.isprintable():
            target = escaped(redacted_target(target))
        version = request.version
        fields = (
            request.remote,
            request.method,
            target,
            version.major,
            version.minor,
            response.status,
            response.body_length,
            elapsed,
            response.headers.get("X-Request-Id", "-"),
        )
        if _direct is not None:
            _direct.append(_access_line(time.time(), fields))
        else:
            self.logger.info(ACCESS_FORMAT, *fields, extra={"http": _http_fields(fields)})


def _http_fields(fields: tuple[Any, ...]) -> dict[str, Any]:
    remote, method, path, _, _, status, size, seconds, rid = fields
    return {
        "remote": remote,
        "method": method,
        "path": path,
        "status": status,
        "bytes": size,
        "seconds": round(seconds, 6),
        "requestId": rid,
    }


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
#: Where access lines go straight to the writer, while :func:`configure_logging` is in force,
#: and what makes them (``access_text`` or ``access_json``).
_direct: Pending | None = None
_access_line: Callable[[float, tuple[Any, ...]], str] = access_text


def configure_logging(
    level: str = "INFO", *, json_lines: bool = False, stream: TextIO | None = None
) -> None:
    """Root logging of this process through the writer thread, in text or JSON lines, to
    ``stream`` (stderr); flushed at exit. Calling it again replaces the previous set-up."""
    global _writer, _direct, _access_line
    if _writer is None:
        atexit.register(_stop)
    _stop()
    # No format here shows the caller, thread or process: do not look them up for every record
    # (the logging documentation's own advice for speed).
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    out = logging.StreamHandler(stream or sys.stderr)
    out.setFormatter(JsonFormatter() if json_lines else logging.Formatter(TEXT_FORMAT))
    pending: Pending = collections.deque()
    handler = _Deferred(pending)
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.INFO, root.level))
    _writer = _Writer(pending, out)
    _writer.start()
    access = logging.getLogger(ACCESS_LOGGER)
    plain = not access.handlers and not access.filters and access.propagate
    _access_line = access_json if json_lines else access_text
    _direct = pending if plain else None
    install_bad_request_filter()


def _stop() -> None:
    """Write what is pending and stop the writer thread."""
    global _direct
    _direct = None
    if _writer is not None and _writer.is_alive():
        _writer.stop()
