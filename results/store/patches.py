"""A run's diff and its patch coverage in the database, written inside the ingest transaction.

The diff's added lines are kept per file (``patch_files.changed``), so a shard arriving later
recomputes patch coverage against the run's merged line data: shards add up. A later upload
with a diff replaces the run's diff (one run is one commit, so it is the same change). Only the
coverage rows of the matched paths are read. ``runs.patch_lines_valid`` is NULL while a run has
no diff, which is how a read tells "no diff" from "a diff without coverable lines".
This module must not parse diffs or reports, and must not decide what matches (``results.patch``).
"""

from __future__ import annotations

import asyncio

from common.db import Connection, Database
from results.parsers.diff import Diff, FileChange
from results.patch import PatchCoverage, PatchFile, match_paths, patch_coverage
from results.store.linecodec import decode_lines, encode_lines, file_from_row

PATCH_COLUMNS = ("run_id", "path", "coverage_path", "changed", "covered", "missed")
#: Paths one statement reads at most: within the 999 parameters of older SQLite builds.
PATHS_PER_SELECT = 500


async def store_diff(conn: Connection, run_id: int, diff: Diff, base_commit: str | None) -> None:
    await conn.execute("DELETE FROM patch_files WHERE run_id = ?", (run_id,))
    rows = [(run_id, f.path, None, encode_lines(f.added), "", "") for f in diff.files]
    await conn.copy_rows("patch_files", PATCH_COLUMNS, rows)
    sql = "UPDATE runs SET base_commit = ?, patch_lines_valid = 0, patch_lines_covered = 0 WHERE id = ?"
    await conn.execute(sql, (base_commit, run_id))


async def has_diff(conn: Connection, run_id: int) -> bool:
    sql = "SELECT patch_lines_valid FROM runs WHERE id = ?"
    row = (await conn.execute(sql, (run_id,))).first()
    return row is not None and row[0] is not None


async def update_patch(conn: Connection, run_id: int) -> None:
    """Recompute the run's patch coverage from its stored diff and merged coverage."""
    found = await conn.execute("SELECT path, changed FROM patch_files WHERE run_id = ?", (run_id,))
    changes = [FileChange(row[0], decode_lines(row[1])) for row in found.rows]
    known = await conn.execute("SELECT path FROM coverage_files WHERE run_id = ?", (run_id,))
    matched = match_paths((c.path for c in changes), (row[0] for row in known.rows))
    wanted = sorted(set(matched.values()))
    stored = []
    for start in range(0, len(wanted), PATHS_PER_SELECT):
        chunk = wanted[start : start + PATHS_PER_SELECT]
        marks = ", ".join("?" * len(chunk))
        sql = (
            "SELECT path, covered, uncovered, branches FROM coverage_files "  # noqa: S608
            f"WHERE run_id = ? AND path IN ({marks})"
        )
        stored += [tuple(row) for row in (await conn.execute(sql, (run_id, *chunk))).rows]
    coverage = {row[0]: file_from_row(*row) for row in stored}
    patch = await asyncio.to_thread(patch_coverage, changes, coverage)
    await conn.execute("DELETE FROM patch_files WHERE run_id = ?", (run_id,))
    await conn.copy_rows("patch_files", PATCH_COLUMNS, [_row(run_id, f) for f in patch.files])
    totals = patch.totals
    sql = "UPDATE runs SET patch_lines_covered = ?, patch_lines_valid = ? WHERE id = ?"
    await conn.execute(sql, (totals.covered, totals.valid, run_id))


def _row(run_id: int, file: PatchFile) -> tuple[object, ...]:
    return (run_id, file.path, file.coverage_path, encode_lines(file.changed),
            encode_lines(file.covered), encode_lines(file.missed))  # fmt: skip


async def read_patch(db: Database, run_id: int) -> PatchCoverage | None:
    """The run's patch coverage per file; None when it was uploaded without a diff."""
    sql = "SELECT patch_lines_valid FROM runs WHERE id = ?"
    row = await db.fetchone(sql, (run_id,))
    if row is None or row[0] is None:
        return None
    sql = """SELECT path, coverage_path, changed, covered, missed FROM patch_files
             WHERE run_id = ? ORDER BY path"""
    rows = await db.fetchall(sql, (run_id,))
    return PatchCoverage(tuple(
        PatchFile(r[0], r[1], decode_lines(r[2]), decode_lines(r[3]), decode_lines(r[4]))
        for r in rows
    ))  # fmt: skip
