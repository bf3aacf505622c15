"""Ingest: check the form, parse every report off the event loop, write one run, tell listeners.

The order is what makes an ingest all-or-nothing: every uploaded file is hashed and parsed (in a
worker thread) before the store is touched, so a malformed, hostile or oversized second file
refuses the whole request with nothing written; the store then writes the batch in one
transaction. Listeners (the live-event hub) hear about a run only after that transaction commits,
and a failing listener never undoes a stored run.

Private projects: the caller's ``can_read`` decides; a project the caller may not read looks
exactly like a missing one, and nobody may add runs to it.

This module must not know HTTP or SQL.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

from results import fields
from results.batch import IngestBatch, IngestOutcome, ParsedReport, ReportKind, RunTarget
from results.errors import InvalidIngestField, NoReports, ProjectNotFound
from results.parsers.coverage import parse_coverage
from results.parsers.diff import Diff, parse_diff
from results.parsers.errors import InvalidReport, ReportTooLarge
from results.parsers.junit import parse_junit
from results.parsers.model import Diagnostic, ParseLimits
from results.runs import CanRead, RunListener, Visibility
from results.runstore import Store

logger = logging.getLogger(__name__)

#: Multipart file parts, by field name. ``jacoco`` takes any supported coverage format.
REPORT_PARTS = {"junit": ReportKind.JUNIT, "jacoco": ReportKind.COVERAGE}
#: The optional file part holding the change under test, a unified diff (``git diff``).
DIFF_PART = "diff"
TEXT_FIELDS = ("project", "branch", "commit", "flag", "runKey", "buildUrl", "base")
#: ``results.ingest.max-diff-bytes`` unless configured.
DEFAULT_MAX_DIFF_BYTES = 8 * 1024 * 1024
_HASH_CHUNK = 1024 * 1024
#: Ingests between parse and commit at once. Each holds its parsed reports in memory (bounded by
#: ``max-elements``), and parsing is CPU-bound under the GIL, so more would add memory, not speed.
INGEST_SLOTS = 2


@attrs.frozen
class ReportFile:
    """An uploaded file part, spooled to disk by the HTTP layer."""

    part: str
    path: Path
    filename: str | None
    size: int


@attrs.frozen
class IngestForm:
    fields: Mapping[str, str]
    files: tuple[ReportFile, ...]
    text_parts: tuple[str, ...] = ()  # names of parts that came as text, not as files


@attrs.frozen
class IngestResult:
    outcome: IngestOutcome
    diagnostics: tuple[tuple[ParsedReport, Diagnostic], ...]
    cases: int = 0  # test cases parsed from this upload's JUnit reports


@attrs.define
class Ingestor:
    store: Store
    limits: ParseLimits
    new_project_visibility: Visibility
    listeners: list[RunListener] = attrs.field(factory=list)
    max_diff_bytes: int = DEFAULT_MAX_DIFF_BYTES
    _slots: asyncio.Semaphore = attrs.field(factory=lambda: asyncio.Semaphore(INGEST_SLOTS))

    async def ingest(self, form: IngestForm, *, can_read: CanRead) -> IngestResult:
        target = self.target(form)
        project = await self.store.find_project(target.project)
        if project is not None and not can_read(project):
            raise ProjectNotFound(target.project)
        known: frozenset[str] = frozenset()
        if target.run_key is not None:
            known = await self.store.run_hashes(target.project, target.run_key)
        async with self._slots:
            reports = tuple(f for f in form.files if f.part != DIFF_PART)
            parsed, repeated = await asyncio.to_thread(parse_all, reports, self.limits, known)
            diff = await asyncio.to_thread(self.read_diff, form.files)
            outcome = await self.store.ingest(IngestBatch(target, parsed, diff))
        outcome = attrs.evolve(outcome, duplicates=(*repeated, *outcome.duplicates))
        await self.publish(outcome)
        notes = tuple((report, d) for report in parsed for d in report.diagnostics)
        cases = sum(len(report.junit.cases) for report in parsed if report.junit is not None)
        return IngestResult(outcome, notes, cases)

    def target(self, form: IngestForm) -> RunTarget:
        check_parts(form)
        return read_target(form.fields, self.new_project_visibility)

    def read_diff(self, files: Sequence[ReportFile]) -> Diff | None:
        """The ``diff`` part parsed (blocking: run in a thread); None when none was sent."""
        sent = next((f for f in files if f.part == DIFF_PART), None)
        if sent is None:
            return None
        report = ParsedReport(ReportKind.COVERAGE, DIFF_PART, sent.filename, "", sent.size)
        limit = self.max_diff_bytes
        if sent.size > limit:
            detail = f"larger than the limit of {limit} bytes (results.ingest.max-diff-bytes)"
            raise _named(ReportTooLarge(_where(report, detail), limit=limit), report)
        try:
            return parse_diff(sent.path, limits=attrs.evolve(self.limits, max_bytes=limit))
        except InvalidReport as exc:
            raise _named(InvalidReport(_where(report, exc.detail), reason=exc.reason, line=exc.line),
                         report) from exc  # fmt: skip
        except ReportTooLarge as exc:
            raise _named(
                ReportTooLarge(_where(report, exc.detail), limit=exc.limit), report
            ) from exc

    async def publish(self, outcome: IngestOutcome) -> None:
        for listener in list(self.listeners):
            try:
                await listener(outcome.run)
            except Exception:  # the run is stored; a broken listener must not turn that into a 500
                logger.exception("run listener failed for run %d", outcome.run.run_id)


def check_parts(form: IngestForm) -> None:
    errors = []
    for name in form.text_parts:
        if name in REPORT_PARTS or name == DIFF_PART:
            errors.append(_error(name, "must be a file part (curl -F name=@file.xml)"))
        elif name not in TEXT_FIELDS:
            errors.append(_error(name, "is not a known field"))
    for file in form.files:
        if file.part not in REPORT_PARTS and file.part != DIFF_PART:
            errors.append(_error(file.part, "is not a report part: send junit or jacoco files"))
    if sum(f.part == DIFF_PART for f in form.files) > 1:
        errors.append(_error(DIFF_PART, "is sent more than once: send one diff per request"))
    if errors:
        raise InvalidIngestField(errors)
    if not any(f.part in REPORT_PARTS for f in form.files):
        raise NoReports()


def read_target(form: Mapping[str, str], visibility: Visibility) -> RunTarget:
    errors: list[dict[str, str]] = []

    def take(name: str, check: Callable[[str], str], default: str = "") -> str:
        try:
            return check(form.get(name, default).strip())
        except fields.FieldError as exc:
            errors.append(_error(name, str(exc)))
            return ""

    def optional(name: str, check: Callable[[str], str]) -> str | None:
        return take(name, check) if name in form else None

    target = RunTarget(
        project=take("project", fields.project),
        branch=take("branch", fields.branch),
        commit=take("commit", fields.commit),
        flag=take("flag", fields.flag, fields.DEFAULT_FLAG),
        run_key=optional("runKey", fields.run_key),
        build_url=optional("buildUrl", fields.build_url),
        new_project_visibility=visibility,
        base_commit=optional("base", fields.commit),
    )
    if errors:
        raise InvalidIngestField(errors)
    return target


def _error(name: str, message: str) -> dict[str, str]:
    return {"in": "body", "field": name, "message": message}


def parse_all(
    files: Sequence[ReportFile], limits: ParseLimits, known: frozenset[str]
) -> tuple[tuple[ParsedReport, ...], tuple[ParsedReport, ...]]:
    """Parse every file not already in the run (blocking: run in a thread). Returns (parsed,
    repeated); any refusal names the file and ends the whole request.

    ``limits.max_elements`` is the budget of the whole request: every parsed report is held in
    memory until the run is written, so each file may only use what the earlier ones left.
    """
    parsed: list[ParsedReport] = []
    repeated: list[ParsedReport] = []
    left = limits.max_elements
    for file in files:
        digest = sha256_of(file.path)
        report = ParsedReport(REPORT_PARTS[file.part], file.part, file.filename, digest, file.size)
        if digest in known:
            repeated.append(report)
            continue
        if left <= 0:
            raise _named(_over_budget(report, limits.max_elements), report)
        report = _parse(report, file.path, attrs.evolve(limits, max_elements=left))
        left -= held(report)
        parsed.append(report)
    return tuple(parsed), tuple(repeated)


def held(report: ParsedReport) -> int:
    """A lower bound of the elements a parsed report stands for (what it keeps in memory)."""
    if report.junit is not None:
        return len(report.junit.cases) + len(report.junit.suites)
    if report.coverage is not None:
        return report.coverage.lines_valid + len(report.coverage.files)
    return 0


def _over_budget(report: ParsedReport, budget: int) -> ReportTooLarge:
    detail = f"the reports of this request hold more than {budget} elements together"
    return ReportTooLarge(_where(report, detail), limit=budget)


def _parse(report: ParsedReport, path: Path, limits: ParseLimits) -> ParsedReport:
    try:
        if report.kind is ReportKind.JUNIT:
            return attrs.evolve(report, junit=parse_junit(path, limits=limits))
        return attrs.evolve(report, coverage=parse_coverage(path, limits=limits))
    except InvalidReport as exc:
        raise _named(InvalidReport(_where(report, exc.detail), reason=exc.reason, line=exc.line),
                     report) from exc  # fmt: skip
    except ReportTooLarge as exc:
        raise _named(ReportTooLarge(_where(report, exc.detail), limit=exc.limit), report) from exc


def _where(report: ParsedReport, detail: str) -> str:
    name = f" {report.filename!r}" if report.filename else ""
    return f"{report.part} file{name}: {detail}"


def _named(exc: InvalidReport | ReportTooLarge, report: ParsedReport) -> Exception:
    exc.extra.update({"part": report.part, "filename": report.filename})
    return exc


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
