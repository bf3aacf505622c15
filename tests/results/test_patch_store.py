"""Patch coverage in the store, on each engine (SQLite and PostgreSQL): migration 6, the diff
kept per file, shards adding up, and a run without a diff telling itself apart."""

from __future__ import annotations

import io

from results.batch import IngestBatch, ParsedReport, ReportKind, RunTarget
from results.parsers.coverage import parse_coverage
from results.parsers.diff import parse_diff
from results.runs import Visibility
from results.store import SqlStore
from results.store.patches import read_patch
from tests.results.stores import store
from tests.results.support import lcov

__all__ = ["store"]

DIFF = b"--- a/src/m.py\n+++ b/src/m.py\n@@ -0,0 +1,4 @@\n+a\n+b\n+c\n+\n"


def target(run_key: str | None = "k", base: str | None = "abc1234") -> RunTarget:
    return RunTarget("p", "main", "fff1234", "default", run_key, None, Visibility.PUBLIC, base)


def coverage(lines: dict[int, int], sha: str) -> ParsedReport:
    name, content = lcov({"/ci/build/src/m.py": lines})
    parsed = parse_coverage(io.BytesIO(content))
    return ParsedReport(ReportKind.COVERAGE, "jacoco", name, sha, len(content), coverage=parsed)


async def test_patch_coverage_is_kept_and_shards_add_up(store: SqlStore) -> None:
    diff = parse_diff(io.BytesIO(DIFF))
    first = coverage({1: 1, 2: 0, 3: 0}, "1" * 64)
    outcome = await store.ingest(IngestBatch(target(), (first,), diff))
    run = outcome.run
    assert (run.patch_lines_covered, run.patch_lines_valid, run.base_commit) == (1, 3, "abc1234")
    second = coverage({2: 1, 3: 0}, "2" * 64)
    run = (await store.ingest(IngestBatch(target(), (second,)))).run
    assert (run.patch_lines_covered, run.patch_lines_valid) == (2, 3)
    patch = await read_patch(store.db, run.run_id)
    assert patch is not None
    (file,) = patch.files
    assert file.coverage_path == "/ci/build/src/m.py"
    assert sorted(file.changed) == [1, 2, 3, 4]
    assert sorted(file.missed) == [3]


async def test_a_run_without_a_diff_has_no_patch(store: SqlStore) -> None:
    run = (await store.ingest(IngestBatch(target(None), (coverage({1: 1}, "3" * 64),)))).run
    assert run.patch_lines_valid is None
    assert run.patch_coverage_pct is None
    assert await read_patch(store.db, run.run_id) is None
