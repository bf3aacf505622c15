"""What the ingest, gate, store and app tests share: settings, uploads, report builders, row counts.

Plain functions, not fixtures, so each test module states its own fixtures in a few lines.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from aiohttp import ClientResponse, FormData

from common.config import load_settings
from results.settings import Settings
from tests.guards import assert_json
from tests.typing_support import Client

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "results"

#: Tables an ingest writes; all must be empty after a refused one.
RUN_TABLES = ("projects", "runs", "uploads", "suites", "tests", "test_cases", "coverage_files")

Report = tuple[str, bytes]  # (filename, content)


def settings_for(tmp_path: Path, *sets: str) -> Settings:
    data = tmp_path / "results-data"
    return load_settings(Settings, overrides=[f"results.data-dir={data}", *sets])


def db_path(settings: Settings) -> Path:
    return settings.results.db_path


def row_counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in RUN_TABLES}  # noqa: S608
    finally:
        conn.close()


def reference(name: str) -> Report:
    return name, (REFERENCE / name).read_bytes()


def form(
    *,
    project: str = "demo",
    branch: str | None = "main",
    commit: str | None = "a1b2c3d4e5f6",
    junit: Iterable[Report] = (),
    jacoco: Iterable[Report] = (),
    diff: Report | None = None,
    **extra: str,
) -> FormData:
    data = FormData(default_to_multipart=True)
    fields = {"project": project, "branch": branch, "commit": commit, **extra}
    for name, value in fields.items():
        if value is not None:
            data.add_field(name, value)
    for part, reports in (("junit", junit), ("jacoco", jacoco)):
        for filename, content in reports:
            data.add_field(part, content, filename=filename, content_type="text/xml")
    if diff is not None:
        data.add_field("diff", diff[1], filename=diff[0], content_type="text/x-diff")
    return data


async def upload(client: Client, **kwargs: Any) -> ClientResponse:
    return await client.post("/api/v1/ingest", data=form(**kwargs))


async def ingest_ok(client: Client, **kwargs: Any) -> dict[str, Any]:
    body: dict[str, Any] = await assert_json(await upload(client, **kwargs), 201)
    return body


def junit_xml(cases: Sequence[tuple[str, str]], *, suite: str = "suite") -> Report:
    """A JUnit report from (name, outcome) pairs; outcome is pass, fail, error, skip or flaky
    (Surefire's failed-then-passed-on-a-rerun)."""
    body = {
        "pass": "",
        "fail": '<failure message="boom">trace</failure>',
        "error": '<error message="crash">trace</error>',
        "skip": "<skipped/>",
        "flaky": '<flakyFailure message="first try" type="E"><stackTrace>t</stackTrace>'
        "</flakyFailure>",
    }
    rows = "".join(
        f'<testcase classname="pkg.Tests" name="{name}" time="0.5">{body[outcome]}</testcase>'
        for name, outcome in cases
    )
    xml = f'<testsuite name="{suite}" tests="{len(cases)}">{rows}</testsuite>'
    return f"{suite}.xml", xml.encode()


def lcov(files: dict[str, dict[int, int]], *, name: str = "lcov.info") -> Report:
    """An LCOV tracefile: {path: {line: hits}}."""
    out = []
    for path, lines in files.items():
        out.append(f"SF:{path}")
        out.extend(f"DA:{line},{hits}" for line, hits in sorted(lines.items()))
        out.append("end_of_record")
    return name, ("\n".join(out) + "\n").encode()


def coverage_for(pct_covered: int, *, name: str = "lcov.info") -> Report:
    """Coverage of exactly ``pct_covered`` percent: 100 lines of one file."""
    return lcov({"src/app.py": {n: int(n <= pct_covered) for n in range(1, 101)}}, name=name)
