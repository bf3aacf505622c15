"""Server-rendered SVG: trend charts, a test's outcome strip (for ``results.web``), and badges (for
``results.http.badges``). No script, no fonts, nothing fetched: each picture is markup inside the
page (or the badge response) itself.

Accessibility: every chart is ``role="img"`` with a ``<title>`` and a ``<desc>`` that says in words
what the line does (first, last, lowest, highest), every point and bar carries its own
``<title>`` (a tooltip, and what a screen reader reads on focus) and links to its run. The pages
also print the numbers as a table. Every text that came from a report or a request (branches,
commits, names) is escaped here, and the result is ``Markup`` so templates do not escape twice.
This module must not fetch data or know HTTP.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import attrs
from markupsafe import Markup, escape

WIDTH, HEIGHT = 560, 190
LEFT, RIGHT, TOP, BOTTOM = 58, 12, 12, 14
#: Status colours (passed, failed, error, skipped, flaky) and the line colour.
COLORS = {
    "passed": "#2e7d32",
    "failed": "#c62828",
    "error": "#7f1d1d",
    "skipped": "#8c959f",
    "flaky": "#b7791f",
}
LINE = "#3056a0"
#: How a value is written on an axis and in a description.
Unit = Callable[[float], str]


@attrs.frozen
class Point:
    """One run on a chart: its value (None: nothing to draw), link and tooltip."""

    value: float | None
    href: str
    tip: str
    highlight: bool = False


@attrs.frozen
class Bar:
    """One run as stacked segments (value, colour, name), bottom first."""

    segments: tuple[tuple[float, str, str], ...]
    href: str
    tip: str
    highlight: bool = False


def line_chart(
    ident: str,
    points: Sequence[Point],
    *,
    title: str,
    unit: Unit,
    percent: bool = False,
) -> Markup:
    """A line over the runs, oldest left; ``percent`` zooms into 0-100 around the data."""
    values = [p.value for p in points if p.value is not None]
    plot = _Plot(len(points), *_scale(values, percent=percent))
    parts = [_open(ident, title, _describe(points, unit)), *plot.grid(unit)]
    for run in _runs_without_gaps(points, plot):
        parts.append(f'<polyline fill="none" stroke="{LINE}" stroke-width="2" points="{run}"/>')
    for i, point in enumerate(points):
        if point.value is None:
            continue
        x, y = plot.x(i), plot.y(point.value)
        if point.highlight:
            parts.append(_marker(x))
        radius = 5 if point.highlight else 3
        parts.append(
            f'<a href="{escape(point.href)}"><circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" '
            f'fill="{LINE}" stroke="#fff" stroke-width="1"><title>{escape(point.tip)}</title>'
            "</circle></a>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every text in it went through escape()


def bar_chart(ident: str, bars: Sequence[Bar], *, title: str, desc: str) -> Markup:
    """Stacked bars over the runs, oldest left (failures: failed, errors, flaky)."""
    top = max((sum(v for v, _, _ in bar.segments) for bar in bars), default=0.0)
    plot = _Plot(len(bars), *_scale([0.0, top], percent=False, whole=True))
    parts = [_open(ident, title, desc), *plot.grid(lambda v: f"{v:g}")]
    width = max(1.0, min(14.0, plot.slot * 0.7))
    for i, bar in enumerate(bars):
        x = plot.x(i)
        if bar.highlight:
            parts.append(_marker(x))
        parts.append(f'<a href="{escape(bar.href)}"><g><title>{escape(bar.tip)}</title>')
        base = 0.0
        for value, color, _ in bar.segments:
            if value <= 0:
                continue
            y0, y1 = plot.y(base), plot.y(base + value)
            parts.append(
                f'<rect x="{x - width / 2:.1f}" y="{y1:.1f}" width="{width:.1f}" '
                f'height="{max(1.0, y0 - y1):.1f}" fill="{color}"/>'
            )
            base += value
        if base <= 0:  # a run without failures still gets a target to point at
            parts.append(
                f'<rect x="{x - width / 2:.1f}" y="{plot.y(0) - 2:.1f}" width="{width:.1f}" '
                f'height="2" fill="{COLORS["passed"]}"/>'
            )
        parts.append("</g></a>")
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every text in it went through escape()


def strip(ident: str, cells: Sequence[tuple[str, str, str]], *, title: str, desc: str) -> Markup:
    """A test's outcomes as coloured cells, oldest left: (status, href, tooltip) each."""
    size, gap = 18, 2
    width = max(size, len(cells) * (size + gap))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="strip" viewBox="0 0 {width} {size}" '
        f'width="{width}" height="{size}" role="img" aria-labelledby="{ident}-t {ident}-d">'
        f'<title id="{ident}-t">{escape(title)}</title><desc id="{ident}-d">{escape(desc)}</desc>'
    ]
    for i, (status, href, tip) in enumerate(cells):
        color = COLORS.get(status, COLORS["skipped"])
        parts.append(
            f'<a href="{escape(href)}"><rect x="{i * (size + gap)}" y="0" width="{size}" '
            f'height="{size}" rx="2" fill="{color}"><title>{escape(tip)}</title></rect></a>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every text in it went through escape()


def badge(label: str, message: str, color: str) -> str:
    """A flat two-part badge (label on grey, message on ``color``), as a whole SVG document."""
    left, right = _text_width(label) + 12, _text_width(message) + 12
    total = left + right
    text = f"{label}: {message}"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" '
        f'aria-label="{escape(text)}"><title>{escape(text)}</title>'
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{escape(color)}"/>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" '
        'font-size="11">'
        f'<text x="{left / 2:.1f}" y="14">{escape(label)}</text>'
        f'<text x="{left + right / 2:.1f}" y="14">{escape(message)}</text></g></svg>'
    )


@attrs.frozen
class _Plot:
    count: int
    low: float
    high: float
    step: float  # between grid lines

    @property
    def slot(self) -> float:
        """Horizontal room of one run."""
        return (WIDTH - LEFT - RIGHT) / max(1, self.count)

    def x(self, index: int) -> float:
        return LEFT + self.slot * (index + 0.5)

    def y(self, value: float) -> float:
        span = (self.high - self.low) or 1.0
        return TOP + (HEIGHT - TOP - BOTTOM) * (1 - (value - self.low) / span)

    def grid(self, unit: Unit) -> list[str]:
        lines = []
        ticks = round((self.high - self.low) / self.step)
        for i in range(ticks + 1):
            tick = self.low + i * self.step
            y = self.y(tick)
            lines.append(
                f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                'stroke="#dde1e8" stroke-width="1"/>'
                f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="12" '
                f'fill="#5b6475">{escape(unit(tick))}</text>'
            )
        return lines


def _open(ident: str, title: str, desc: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-labelledby="{ident}-t {ident}-d" '
        'font-family="system-ui,sans-serif">'
        f'<title id="{ident}-t">{escape(title)}</title><desc id="{ident}-d">{escape(desc)}</desc>'
    )


def _marker(x: float) -> str:
    return (
        f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" stroke="#b7791f" '
        'stroke-width="2" stroke-dasharray="4 3"/>'
    )


def _runs_without_gaps(points: Sequence[Point], plot: _Plot) -> list[str]:
    """The line's pieces: a run without a value breaks it (no coverage is not 0 %)."""
    pieces: list[list[str]] = [[]]
    for i, point in enumerate(points):
        if point.value is None:
            pieces.append([])
        else:
            pieces[-1].append(f"{plot.x(i):.1f},{plot.y(point.value):.1f}")
    return [" ".join(piece) for piece in pieces if len(piece) > 1]


def _describe(points: Sequence[Point], unit: Unit) -> str:
    values = [p.value for p in points if p.value is not None]
    if not values:
        return f"{len(points)} runs, none with a value."
    return (
        f"{len(points)} runs, oldest first: from {unit(values[0])} to {unit(values[-1])}; "
        f"lowest {unit(min(values))}, highest {unit(max(values))}."
    )


def _scale(
    values: list[float], *, percent: bool, whole: bool = False
) -> tuple[float, float, float]:
    """(low, high, step) of an axis: round numbers around the data, four or five grid lines.
    Percentages zoom in (a 0.5 point drop must show) but stay within 0-100; counts start at 0."""
    if not values:
        return (0.0, 100.0, 25.0) if percent else (0.0, 1.0, 0.25)
    low, high = min(values), max(values)
    if percent:
        pad = max(1.0, (high - low) * 0.1)
        low, high = max(0.0, low - pad), min(100.0, high + pad)
    else:
        low, high = 0.0, max(high, 1.0 if whole else 1e-9)
    step = _nice((high - low) / 4)
    if whole:
        step = max(1.0, math.ceil(step))
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    if percent:
        low, high = max(0.0, low), min(100.0, high)
    return low, max(high, low + step), step


def _nice(value: float) -> float:
    """The next round number at or above ``value`` (1, 2, 2.5 or 5 times a power of ten)."""
    magnitude = 10.0 ** math.floor(math.log10(value))
    return next(m * magnitude for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * magnitude >= value - 1e-9)


def _text_width(text: str) -> int:
    """Verdana 11 px, roughly: wide capitals and digits, narrow punctuation."""
    return round(sum(_WIDTHS.get(c, 6.8 if c.isupper() or c.isdigit() else 6.2) for c in text))


_WIDTHS = dict.fromkeys("MW%mw", 7.5) | dict.fromkeys(".,:;!|il1 ()[]", 3.5)
