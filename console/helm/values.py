"""The values library: named, reusable Helm values files kept on disk.

Each file is ``<dir>/<name>.yaml``, written whole to a temporary file and renamed over the old one,
so a reader never sees half a file and a crash leaves the previous version. A file must be a YAML
mapping (or empty) no larger than ``max_bytes``; at most ``max_files`` are kept. Names are safe file
names (letters, digits, ``.``, ``_`` and ``-``, not starting with a dot), so no name reaches outside
the directory. Disk work runs in worker threads. Values files often hold secrets: nothing here logs
their content.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from common import yamlio
from common.errors import BadRequest, Conflict, NotFound, PayloadTooLarge

#: A values file's name (its file is ``<name>.yaml``); the spec's ``ValuesFileName`` states it.
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$(?!\n)"
NAME = re.compile(NAME_PATTERN)
SUFFIX = ".yaml"


class ValuesNotFound(NotFound, code="values-not-found"):
    def __init__(self, name: str) -> None:
        super().__init__(f"no values file named {name!r} in the library")


@attrs.frozen
class ValuesFile:
    name: str
    size: int
    modified: str


def check_name(name: str) -> None:
    if not NAME.fullmatch(name):
        raise BadRequest(
            f"invalid values file name {name[:100]!r}: letters, digits, '.', '_' and '-', "
            "at most 100, not starting with '.', '_' or '-'"
        )


def parse(text: str, *, source: str) -> dict[str, Any]:
    """``text`` as a values mapping; a YAML error or a non-mapping is a 400 naming ``source``."""
    try:
        loaded = yamlio.load(text)
    except yamlio.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise BadRequest(f"{source} is not valid YAML{where}") from None
    if loaded is None and not text.strip():
        return {}
    if not isinstance(loaded, dict):
        raise BadRequest(f"{source} must be a YAML mapping, not {type(loaded).__name__}")
    return loaded


@attrs.define
class ValuesLibrary:
    directory: Path
    max_bytes: int
    max_files: int
    _lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)

    async def entries(self) -> list[ValuesFile]:
        return await asyncio.to_thread(self._list)

    async def read(self, name: str) -> str:
        check_name(name)
        try:
            return await asyncio.to_thread(self._path(name).read_text, "utf-8")
        except FileNotFoundError:
            raise ValuesNotFound(name) from None

    async def load(self, name: str) -> dict[str, Any]:
        return parse(await self.read(name), source=f"values file {name!r}")

    async def save(self, name: str, text: str) -> tuple[ValuesFile, bool]:
        """Write ``name``; returns the file and whether it is new. Checked before anything moves."""
        check_name(name)
        size = len(text.encode("utf-8"))
        if size > self.max_bytes:
            raise PayloadTooLarge(
                f"values file is {size} bytes; the library takes at most {self.max_bytes}"
            )
        if not parse(text, source="the body"):
            text = "{}\n"  # an empty file is an empty mapping, and reads back as one
        async with self._lock:  # the count check and the write are one step
            return await asyncio.to_thread(self._save, name, text)

    async def delete(self, name: str) -> None:
        check_name(name)
        async with self._lock:
            try:
                await asyncio.to_thread(self._path(name).unlink)
            except FileNotFoundError:
                raise ValuesNotFound(name) from None

    # -- in worker threads -----------------------------------------------------------------
    def _path(self, name: str) -> Path:
        return self.directory / f"{name}{SUFFIX}"

    def _list(self) -> list[ValuesFile]:
        if not self.directory.is_dir():
            return []
        found = [p for p in self.directory.iterdir() if p.name.endswith(SUFFIX)]
        return sorted((_describe(p) for p in found if NAME.fullmatch(p.stem)), key=lambda f: f.name)

    def _save(self, name: str, text: str) -> tuple[ValuesFile, bool]:
        path = self._path(name)
        created = not path.exists()
        if created and len(self._list()) >= self.max_files:
            raise Conflict(
                f"the values library holds its maximum of {self.max_files} files; delete one first",
                code="values-library-full",
            )
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=SUFFIX)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return _describe(path), created


def _describe(path: Path) -> ValuesFile:
    stat = path.stat()
    stamp = datetime.fromtimestamp(stat.st_mtime, UTC).isoformat(timespec="seconds")
    return ValuesFile(path.stem, stat.st_size, stamp.replace("+00:00", "Z"))
