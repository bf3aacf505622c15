"""The on-disk index cache of one service: Helm's files plus our prepared form, and its memory bound.

Per repository ``<cache>/<name>-index.yaml`` (the raw index, exactly what ``helm`` reads) and
``<name>-charts.txt`` are Helm's; ``<name>-index.prepared.json`` is ours. The prepared file is written
first and records the raw file's size, so a crash between the renames is noticed at the next read and
repaired from the raw file instead of being served stale. Methods here block: callers run them in a
thread. Nothing here downloads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from chartsvc.repos import index
from chartsvc.repos.files import remove_quietly, write_atomic


@attrs.frozen
class IndexFiles:
    cache_dir: Path

    def raw(self, name: str) -> Path:
        return self.cache_dir / f"{name}-index.yaml"

    def names(self, name: str) -> Path:
        return self.cache_dir / f"{name}-charts.txt"

    def prepared(self, name: str) -> Path:
        return self.cache_dir / f"{name}-index.prepared.json"

    def save(self, name: str, raw: bytes, prepared: index.PreparedIndex) -> int:
        """Write all three files atomically; returns the prepared file's size (its memory weight)."""
        encoded = prepared.to_json()
        write_atomic(self.prepared(name), encoded)
        write_atomic(self.raw(name), raw)
        write_atomic(self.names(name), index.chart_names(prepared))
        return len(encoded)

    def load(self, name: str) -> tuple[index.PreparedIndex, int] | None:
        """The prepared index and its weight; re-prepared from the raw file when stale or missing."""
        raw_path = self.raw(name)
        if not raw_path.exists():
            return None
        try:
            encoded = self.prepared(name).read_bytes()
        except FileNotFoundError:
            encoded = b""
        prepared = index.PreparedIndex.from_json(encoded) if encoded else None
        if prepared is not None and prepared.source.get("size") == raw_path.stat().st_size:
            return prepared, len(encoded)
        return self._reprepare(name, raw_path, prepared.source if prepared else {})

    def _reprepare(
        self, name: str, raw_path: Path, source: dict[str, Any]
    ) -> tuple[index.PreparedIndex, int]:
        raw = raw_path.read_bytes()
        # Without a matching prepared file the validators are unknown: drop them, fetch in full.
        fresh = index.parse(raw, source={"url": source.get("url", "")})
        return fresh, self.save(name, raw, fresh)

    def remove(self, name: str) -> None:
        remove_quietly(self.prepared(name), self.raw(name), self.names(name))
