"""Files only the service's own user may read: databases that hold password hashes or kubeconfigs,
and the short-lived copies of cluster credentials (certificates, a kubeconfig handed to Helm) that
live in a service's private folder and are swept at start-up when a killed run left them.

``private_file`` makes the parent folder (mode 0700 when it creates it) and the file (mode 0600)
before SQLite opens it; SQLite gives its ``-wal`` and ``-shm`` files the database file's mode, so
they are private too. A file left readable by an earlier version is tightened, with its WAL and
shared-memory files, rather than trusted as it is.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
#: SQLite's companion files of a database in WAL mode.
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def private_file(path: Path) -> None:
    """Create ``path`` (and missing parents) readable by this user only; tighten it if it exists."""
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    os.close(fd)
    for candidate in (path, *(path.with_name(path.name + s) for s in SQLITE_COMPANIONS)):
        try:
            mode = stat.S_IMODE(candidate.stat().st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077:
            candidate.chmod(mode & 0o700)


def private_dir(path: Path) -> Path:
    """``path`` (and missing parents) as a folder only this user may enter; tightened if it exists."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        path.chmod(mode & 0o700)
    return path


def private_temp_dir(parent: Path, prefix: str) -> Path:
    """A new folder (0700) under the private folder ``parent``, for files removed after use."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=private_dir(parent)))
