"""What a process killed mid-write leaves behind, removed when the service starts again.

A service stopped by SIGKILL (an OOM kill, a node lost) runs no ``finally``: its staged files and
upload spools stay on disk, holding uploaded reports or repository indexes for ever. Each service
names the directories it alone writes and the names its temporaries take there, and sweeps them
once at start-up, before it writes anything itself. This module must not guess: it removes only
entries matching the given pattern in the given directory.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

logger = logging.getLogger(__name__)


def sweep(directory: Path, pattern: str, *, recursive: bool = False) -> int:
    """Remove the files and folders matching ``pattern`` (a glob) in ``directory`` (and its
    subfolders when ``recursive``); returns how many went. A missing directory has none."""
    if not directory.is_dir():
        return 0
    found = list(directory.rglob(pattern) if recursive else directory.glob(pattern))
    for path in found:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    if found:
        logger.warning(
            "removed %d leftover temporaries (%s) in %s of a process that was stopped mid-write",
            len(found),
            pattern,
            directory,
        )
    return len(found)
