"""Opens an uploaded report for streaming: a path or a binary file, plain or gzip-compressed.

Every parser reads its input through ``open_report``, so every format gets the same guards: gzip
is recognised by its magic bytes (not by a file name or a content type), the bytes read after
decompression are capped (the gzip-bomb guard), and a corrupt gzip stream is a 400, not a crash.
This module must not interpret the content and must not read a report into memory whole.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import zlib
from collections.abc import Iterator
from typing import IO

from results.parsers.errors import InvalidReport, ReportTooLarge
from results.parsers.model import ParseLimits

#: What the parsers accept: a path, or a binary file object positioned at the report's start.
ReportSource = IO[bytes] | str | os.PathLike[str]

_GZIP_MAGIC = b"\x1f\x8b"


@contextlib.contextmanager
def open_report(source: ReportSource, limits: ParseLimits) -> Iterator[io.BufferedReader]:
    """Yield a buffered reader of the decompressed report; files we opened are closed on exit.

    A caller's file object is left open: its owner closes it.
    """
    with contextlib.ExitStack() as stack:
        if isinstance(source, str | os.PathLike):
            raw: IO[bytes] = stack.enter_context(open(source, "rb"))
        else:
            raw = source
        head = _read_exactly(raw, len(_GZIP_MAGIC))
        stream: io.BufferedIOBase = io.BufferedReader(_Prefixed(head, raw), limits.chunk_bytes)
        compressed = head == _GZIP_MAGIC
        if compressed:
            stream = gzip.GzipFile(fileobj=stream, mode="rb")
        capped = _Capped(stream, limits.max_bytes, compressed=compressed)
        yield io.BufferedReader(capped, buffer_size=limits.chunk_bytes)


def _read_exactly(raw: IO[bytes], size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = raw.read(size - len(data))
        if not more:
            break
        data += more
    return data


class _Prefixed(io.RawIOBase):
    """The bytes already read for sniffing, followed by the rest of the underlying stream."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            size = min(len(buffer), len(self._head))
            buffer[:size] = self._head[:size]
            self._head = self._head[size:]
            return size
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _Capped(io.RawIOBase):
    """Counts the (decompressed) bytes delivered and refuses to go past ``limit``."""

    def __init__(self, inner: io.BufferedIOBase, limit: int, *, compressed: bool) -> None:
        self._inner = inner
        self._left = limit
        self._limit = limit
        self._compressed = compressed

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._read(min(len(buffer), self._left + 1))
        if len(data) > self._left:
            after = " after decompression" if self._compressed else ""
            raise ReportTooLarge(
                f"report is larger than {self._limit} bytes{after}", limit=self._limit
            )
        self._left -= len(data)
        buffer[: len(data)] = data
        return len(data)

    def _read(self, size: int) -> bytes:
        if not self._compressed:
            return self._inner.read(size)
        try:
            return self._inner.read(size)
        except (OSError, EOFError, zlib.error) as exc:
            raise InvalidReport(f"corrupt gzip stream: {exc}", reason="bad-gzip") from exc
