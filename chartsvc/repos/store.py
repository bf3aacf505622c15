"""The on-disk index cache of one service: Helm's files plus our prepared form.

Per repository ``<cache>/<name>-index.yaml`` (the raw index, exactly what ``helm`` reads) and
``<name>-charts.txt`` are Helm's; ``<name>-index.prepared`` is ours. The raw file is staged while the
index is parsed and published only once parsing succeeded. The prepared file is published first and
records the raw file's size, so a crash between the renames is noticed at the next read and repaired
from the raw file instead of being served stale. Methods here block: callers run them in a thread.
Nothing here downloads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from chartsvc.repos import index
from chartsvc.repos.files import publish, remove_quietly, stage, write_atomic


@attrs.frozen
class IndexFiles:
    cache_dir: Path

    def raw(self, name: str) -> Path:
        return self.cache_dir / f"{name}-index.yaml"

    def names(self, name: str) -> Path:
        return self.cache_dir / f"{name}-charts.txt"

    def prepared(self, name: str) -> Path:
        return self.cache_dir / f"{name}-index.prepared"

    def stage_raw(self, name: str, raw: bytes) -> Path:
        return stage(self.raw(name), raw)

    def commit(self, name: str, staged_raw: Path, prepared: index.PreparedIndex) -> None:
        """Publish the prepared file, then the staged raw index, then the chart names.

        Only the raw index is fsync'd (while it was staged): a prepared file a crash left stale or
        cut short is rebuilt from it (the prepared file records the raw file's size and its chart
        count), and the chart names are rewritten by every update.
        """
        try:
            write_atomic(self.prepared(name), prepared.to_lines(), durable=False)
        except BaseException:
            remove_quietly(staged_raw)
            raise
        publish(staged_raw, self.raw(name))
        write_atomic(self.names(name), index.chart_names(prepared), durable=False)

    def load(self, name: str, *, repair: bool = True) -> index.PreparedIndex | None:
        """The prepared index; re-prepared from the raw file when stale or missing (unless
        ``repair`` is false: an update about to download anyway need not parse the old file)."""
        raw_path = self.raw(name)
        if not raw_path.exists():
            return None
        try:
            encoded = self.prepared(name).read_bytes()
        except FileNotFoundError:
            encoded = b""
        prepared = index.PreparedIndex.from_lines(encoded) if encoded else None
        if prepared is not None and prepared.source.get("size") == raw_path.stat().st_size:
            return prepared
        if not repair:
            return None
        return self._reprepare(name, raw_path, prepared.source if prepared else {})

    def _reprepare(self, name: str, raw_path: Path, source: dict[str, Any]) -> index.PreparedIndex:
        raw = raw_path.read_bytes()
        # Without a matching prepared file the validators are unknown: drop them, fetch in full.
        fresh = index.parse(raw, source={"url": source.get("url", "")})
        self.commit(name, self.stage_raw(name, raw), fresh)
        return fresh

    def remove(self, name: str) -> None:
        remove_quietly(self.prepared(name), self.raw(name), self.names(name))
