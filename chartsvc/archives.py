"""Limits on chart archives we did not build: size, decompressed size, entry count, entry paths.

A ``.tgz`` of a few kilobytes can expand to gigabytes or hold a million empty files; Helm's own loader
caps the decompressed size only after it has started unpacking in memory. The check here reads tar
headers from a stream and stops at the first breach, before any chart code sees the bytes. It does not
load or validate the chart itself: that is the engine's job.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import threading
import zlib
from collections import OrderedDict

import attrs

from common.errors import BadRequest, PayloadTooLarge

_FEXTRA = 0x04


def gunzip_capped(data: bytes, cap: int) -> bytes | None:
    """``data`` inflated from gzip, or None past ``cap`` bytes (it stops there, whatever the whole
    would be). Raises ``zlib.error`` for a corrupt stream."""
    inflated = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, cap + 1)
    return inflated if len(inflated) <= cap else None


def without_gzip_extra(data: bytes) -> bytes:
    """The same tar, re-gzipped without the FEXTRA header field Helm writes.

    Python 3.11's ``tarfile`` stream mode ("r|gz") mis-skips that field and reports a corrupt archive;
    code reading archives that way gets a plain gzip from here. Other archives pass through as is.
    """
    if len(data) < 4 or data[:2] != b"\x1f\x8b" or not data[3] & _FEXTRA:
        return data
    return gzip.compress(gzip.decompress(data), mtime=0)


@attrs.frozen
class ArchiveLimits:
    """Caps applied to every chart archive that enters the service (upload, pull, index URL)."""

    max_archive_bytes: int = 100 * 1024 * 1024
    max_decompressed_bytes: int = 100 * 1024 * 1024
    max_entries: int = 50_000


class ArchiveTooLarge(PayloadTooLarge, code="archive-too-large"): ...


class BadArchive(BadRequest, code="invalid-chart"): ...


def check(data: bytes, limits: ArchiveLimits) -> None:
    """Raise unless ``data`` is a gzip'd tar within ``limits`` whose paths stay inside the chart."""
    if len(data) > limits.max_archive_bytes:
        raise ArchiveTooLarge(f"chart archive is larger than {limits.max_archive_bytes} bytes")
    total = 0
    entries = 0
    try:
        # gzip.GzipFile, not tarfile's "r|gz": Helm writes a gzip FEXTRA header field, which
        # tarfile's own stream reader mis-skips on Python 3.11.
        unzipped = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
        with tarfile.open(fileobj=unzipped, mode="r|") as tar:
            for member in tar:
                entries += 1
                total += max(member.size, 0)
                _check_member(member, entries, total, limits)
    except (tarfile.TarError, gzip.BadGzipFile, zlib.error, EOFError, OSError) as exc:
        raise BadArchive(f"not a chart archive (.tgz): {str(exc)[:200]}") from exc
    if entries == 0:
        raise BadArchive("not a chart archive (.tgz): the archive is empty")


def _check_member(member: tarfile.TarInfo, entries: int, total: int, limits: ArchiveLimits) -> None:
    if entries > limits.max_entries:
        raise BadArchive(f"chart archive has more than {limits.max_entries} entries")
    if total > limits.max_decompressed_bytes:
        raise ArchiveTooLarge(
            f"chart archive expands to more than {limits.max_decompressed_bytes} bytes"
        )
    name = member.name
    if name.startswith("/") or ".." in name.split("/"):
        raise BadArchive(f"chart archive entry {name[:200]!r} leaves the chart directory")


@attrs.define
class ArchiveChecker:
    """:func:`check` with a memory of archives that already passed (by sha256), safe across threads.

    The same chart is uploaded or pulled again and again; its headers need reading once.
    """

    limits: ArchiveLimits
    remembered: int = 1024
    _passed: OrderedDict[str, None] = attrs.field(factory=OrderedDict)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def check(self, data: bytes) -> None:
        if len(data) > self.limits.max_archive_bytes:
            check(data, self.limits)  # raises the size error without hashing a huge body
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            if digest in self._passed:
                self._passed.move_to_end(digest)
                return
        check(data, self.limits)
        with self._lock:
            self._passed[digest] = None
            while len(self._passed) > self.remembered:
                self._passed.popitem(last=False)
