"""The pages' charts, built from runs and outcomes: what each point says and where it links.

``results.svg`` draws; this module decides the series (pass rate, failures, duration, line
coverage; a test's outcomes and durations) and the words of each tooltip and description.
This module must not fetch data or know HTTP.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
from markupsafe import Markup

from results import svg
from results.flakiness import Outcome
from results.runs import RunSummary
from results.web.render import duration, pct, short_sha


@attrs.frozen
class Chart:
    key: str  # anchor and id prefix
    title: str
    svg: Markup


def trend_charts(
    runs: Sequence[RunSummary], *, prefix: str, highlight: int | None = None
) -> list[Chart]:
    """Pass rate, failures, duration and line coverage of ``runs`` (oldest first)."""
    scope = f"{len(runs)} run{'s' if len(runs) != 1 else ''}"

    def point(run: RunSummary, value: float | None, shown: str) -> svg.Point:
        return svg.Point(value, run.run_path, _tip(run, shown), run.run_id == highlight)

    def percents(key: str, title: str, of: Callable[[RunSummary], float | None]) -> Chart:
        points = [point(r, of(r), pct(of(r))) for r in runs]
        return _line(f"{prefix}-{key}", f"{title}, {scope}", points, pct, percent=True)

    return [
        percents("pass", "Pass rate", lambda r: r.pass_rate_pct),
        Chart(
            f"{prefix}-fail",
            f"Failures, {scope}",
            svg.bar_chart(
                f"{prefix}-fail",
                [_failure_bar(r, highlight) for r in runs],
                title=f"Failures, {scope}",
                desc=_failure_words(runs),
            ),
        ),
        _line(
            f"{prefix}-time",
            f"Duration, {scope}",
            [point(r, float(r.duration_ms), duration(r.duration_ms)) for r in runs],
            lambda v: duration(round(v)),
        ),
        percents("cov", "Line coverage", lambda r: r.line_coverage_pct),
    ]


def outcome_strip(project_id: int, outcomes: Sequence[Outcome], *, ident: str) -> Markup:
    cells = [(o.status, f"/runs/{o.run_id}", _outcome_tip(o)) for o in outcomes]
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in svg.COLORS}
    said = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    return svg.strip(
        ident,
        cells,
        title=f"Outcomes of the last {len(outcomes)} runs, oldest first",
        desc=f"{said or 'no runs'}.",
    )


def duration_chart(outcomes: Sequence[Outcome], *, ident: str) -> Markup:
    points = [
        svg.Point(
            float(o.duration_ms) if o.duration_ms is not None else None,
            f"/runs/{o.run_id}",
            _outcome_tip(o),
        )
        for o in outcomes
    ]
    return svg.line_chart(
        ident,
        points,
        title=f"Duration of the test, last {len(outcomes)} runs",
        unit=lambda v: duration(round(v)),
    )


def _line(
    key: str, title: str, points: list[svg.Point], unit: svg.Unit, *, percent: bool = False
) -> Chart:
    return Chart(key, title, svg.line_chart(key, points, title=title, unit=unit, percent=percent))


def _failure_bar(run: RunSummary, highlight: int | None) -> svg.Bar:
    segments = (
        (float(run.failures), svg.COLORS["failed"], "failed"),
        (float(run.errors), svg.COLORS["error"], "errors"),
        (float(run.flaky), svg.COLORS["flaky"], "flaky"),
    )
    said = f"{run.failures} failed, {run.errors} errors, {run.flaky} flaky"
    return svg.Bar(segments, run.run_path, _tip(run, said), run.run_id == highlight)


def _failure_words(runs: Sequence[RunSummary]) -> str:
    failing = [r for r in runs if r.failures or r.errors]
    flaky = sum(1 for r in runs if r.flaky)
    return (
        f"{len(runs)} runs, oldest first: {len(failing)} with failures or errors, "
        f"{flaky} with flaky tests."
    )


def _tip(run: RunSummary, shown: str) -> str:
    return f"Run #{run.run_id} · {run.branch} @ {short_sha(run.commit)} · {run.status}: {shown}"


def _outcome_tip(outcome: Outcome) -> str:
    took = duration(outcome.duration_ms)
    rerun = f", {outcome.reruns} rerun(s)" if outcome.reruns else ""
    return (
        f"Run #{outcome.run_id} · {outcome.branch} @ {short_sha(outcome.commit)}: "
        f"{outcome.status}{rerun}, {took}"
    )
