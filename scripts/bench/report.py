"""The one output every benchmark gives: its figures as one JSON line, and its sizes for ``--quick``.

A benchmark prints what it likes for people, then, last, one line that starts with ``MARK`` and
holds its figures as JSON: each figure's value and unit, the target it is judged by (``at_most`` or
``at_least``), whether it met it, and the baseline a ratio is taken against. ``scripts/bench/all``
runs the benchmarks and builds its table from these lines alone (never from the text above them);
the exit code of a benchmark is 1 when a figure missed its target.

``options`` gives every benchmark the same two flags: ``--quick`` (small sizes: the whole set runs
in minutes on two cores and still judges every target) and ``--smoke`` (the smallest sizes, one
round: proves the benchmark still runs; its figures mean nothing and are not judged).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

MARK = "wharf-bench "


@dataclass(frozen=True, slots=True)
class Figure:
    name: str
    #: None when the run produced no number (nothing finished in the time it had).
    value: float | None
    unit: str
    #: "<= 1.3" or ">= 60": what the value is judged by; empty for a figure only shown.
    target: str = ""
    met: bool | None = None
    #: What a ratio is taken against (measured in the same run), or empty.
    baseline: str = ""


@dataclass(slots=True)
class Report:
    """The figures of one run of one benchmark; ``emit`` prints them as the ``MARK`` line."""

    bench: str
    mode: str = "full"  # "full", "quick" or "smoke"
    figures: list[Figure] = field(default_factory=list)

    @classmethod
    def of(cls, bench: str, args: argparse.Namespace) -> Report:
        mode = "smoke" if getattr(args, "smoke", False) else "full"
        if mode == "full" and getattr(args, "quick", False):
            mode = "quick"
        return cls(bench, mode)

    def figure(
        self,
        name: str,
        value: float,
        unit: str,
        *,
        at_most: float | None = None,
        at_least: float | None = None,
        baseline: str = "",
    ) -> bool:
        """Record a figure; True unless it misses its target (a smoke run judges nothing)."""
        target, met = "", None
        if at_most is not None:
            target, met = f"<= {at_most:g}", value <= at_most
        elif at_least is not None:
            target, met = f">= {at_least:g}", value >= at_least
        if self.mode == "smoke" or not math.isfinite(value):
            met = None if self.mode == "smoke" else False
        number = round(value, 4) if math.isfinite(value) else None
        self.figures.append(Figure(name, number, unit, target, met, baseline))
        return met is not False

    @property
    def met(self) -> bool:
        return all(f.met is not False for f in self.figures)

    def emit(self) -> int:
        """Print the ``MARK`` line; the exit code: 0 when every target was met, else 1."""
        line = {
            "bench": self.bench,
            "mode": self.mode,
            "figures": [asdict(f) for f in self.figures],
        }
        sys.stdout.flush()
        print(MARK + json.dumps(line, allow_nan=False), flush=True)
        return 0 if self.met else 1


def options(
    parser: argparse.ArgumentParser,
    *,
    quick: Mapping[str, Any],
    smoke: Mapping[str, Any] | None = None,
    argv: list[str] | None = None,
) -> argparse.Namespace:
    """Parse ``argv`` with ``--quick`` and ``--smoke`` added: each sets the defaults it names (an
    option given on the command line still wins); ``smoke`` falls back to ``quick``.

    Every benchmark parses here first, so here its children (the services it serves, their
    baselines) are given the allocator the services are deployed with: ``PYTHONMALLOC=malloc``,
    as ``scripts/run``, the systemd units and the image set it (unless it is set already). RSS
    figures otherwise measure CPython's own allocator, which keeps freed arenas (a repository
    index update: 3.2x the file's size with it, 2.3x as deployed)."""
    os.environ.setdefault("PYTHONMALLOC", "malloc")
    parser.add_argument("--quick", action="store_true", help="small sizes; targets still judged")
    parser.add_argument("--smoke", action="store_true", help="smallest sizes; nothing judged")
    seen, _ = parser.parse_known_args(argv)
    if seen.smoke:
        parser.set_defaults(**{**quick, **(smoke or {})})
    elif seen.quick:
        parser.set_defaults(**quick)
    return parser.parse_args(argv)


def read(text: str) -> list[dict[str, Any]]:
    """The ``MARK`` lines of a benchmark's output, decoded."""
    lines = (line.removeprefix(MARK) for line in text.splitlines() if line.startswith(MARK))
    return [json.loads(line) for line in lines]
