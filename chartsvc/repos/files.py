"""Atomic file replacement: write a temp file in the target's directory, fsync, rename over.

Readers (this service after a restart, or the ``helm`` CLI sharing the directory) see the old file or
the new one, never half of either. Staging is split from the rename so a large file can be written
while other work (parsing it) runs, then published or dropped. This module must not decide what is
written.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from pathlib import Path

from common.errors import WharfError

logger = logging.getLogger(__name__)
STAGED_SUFFIX = ".tmp"
#: A staged file (``.<name>.<random>.tmp``) that a killed process never published.
STAGED_PATTERN = f".*{STAGED_SUFFIX}"


class StorageFailed(WharfError, code="storage-failed"):
    """The service's own files could not be written (disk full, permissions, read-only mount)."""

    def __init__(self, path: Path, exc: OSError) -> None:
        # The file name only: server paths are nobody else's business; the log has the path.
        super().__init__(f"could not write {path.name}: {exc.strerror or type(exc).__name__}")


def _failed(path: Path, exc: OSError) -> StorageFailed:
    logger.error("writing %s failed: %s", path, exc)
    return StorageFailed(path, exc)


def stage(path: Path, data: bytes, *, durable: bool = True) -> Path:
    """``data`` in a temp file next to ``path`` (fsync'd when ``durable``); publish with
    :func:`publish`. Files that can be rebuilt from others need not pay for the fsync."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=STAGED_SUFFIX)
    except OSError as exc:
        raise _failed(path, exc) from exc
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            if durable:
                os.fsync(out.fileno())
    except BaseException as exc:
        remove_quietly(Path(temp))
        if isinstance(exc, OSError):
            raise _failed(path, exc) from exc
        raise
    return Path(temp)


def publish(staged: Path, path: Path) -> None:
    try:
        os.replace(staged, path)
    except OSError as exc:
        remove_quietly(staged)
        raise _failed(path, exc) from exc


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    publish(stage(path, data, durable=durable), path)


def remove_quietly(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
