"""SVG drawing: scales with round numbers, gaps for missing values, escaping, badges."""

from __future__ import annotations

import defusedxml.ElementTree as ET

from results import svg
from results.svg import _scale


def test_axes_use_round_numbers_around_the_data() -> None:
    assert _scale([42.0, 100.0], percent=True) == (20.0, 100.0, 20.0)
    assert _scale([81.8, 63.6], percent=True) == (60.0, 90.0, 10.0)
    assert _scale([0.0, 2000.0], percent=False) == (0.0, 2000.0, 500.0)
    assert _scale([0.0, 3.0], percent=False, whole=True) == (0.0, 3.0, 1.0)
    low, high, _ = _scale([99.9, 100.0], percent=True)
    assert 98.0 <= low < 99.9  # zoomed in
    assert high == 100.0  # never past 100 %
    assert _scale([], percent=True) == (0.0, 100.0, 25.0)


def test_a_line_chart_is_well_formed_escaped_and_breaks_at_gaps() -> None:
    hostile = '</title><script>x</script>"'
    points = [
        svg.Point(50.0, "/runs/1", hostile),
        svg.Point(None, "/runs/2", "none"),
        svg.Point(60.0, "/runs/3", "b"),
        svg.Point(70.0, "/runs/4", "c", highlight=True),
    ]
    drawn = str(svg.line_chart("c1", points, title=hostile, unit=lambda v: f"{v:g}%"))
    root = ET.fromstring(drawn)  # well-formed XML: nothing broke out of its element
    ns = "{http://www.w3.org/2000/svg}"
    title = root.find(f"{ns}title")
    assert title is not None
    assert title.text == hostile
    assert "<script>" not in drawn
    assert len(root.findall(f"{ns}polyline")) == 1  # 1 alone, then 3-4: one piece of two points
    assert len(root.findall(f".//{ns}circle")) == 3
    desc = root.find(f"{ns}desc")
    assert desc is not None
    assert desc.text == "4 runs, oldest first: from 50% to 70%; lowest 50%, highest 70%."


def test_strip_and_badge() -> None:
    strip = str(svg.strip("s", [("failed", "/runs/1", "t<1>")], title="T", desc="D"))
    ET.fromstring(strip)
    assert svg.COLORS["failed"] in strip
    assert "t&lt;1&gt;" in strip
    badge = svg.badge("coverage", "81.2%", "#2e7d32")
    root = ET.fromstring(badge)
    assert root.get("aria-label") == "coverage: 81.2%"
    assert int(root.get("width", "0")) > 80
