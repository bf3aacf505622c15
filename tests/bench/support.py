"""Runs a benchmark's ``--smoke`` path (``scripts/bench/report.py``): it must run to the end and
give its figures, so a benchmark cannot rot unnoticed. The figures themselves are not judged here:
their targets are ``scripts/bench/all``'s business, on a quiet machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "scripts" / "bench"
MARK = "wharf-bench "
#: Modules of the folder that are not benchmarks.
SHARED = frozenset({"harness", "report", "table"})


def smoke(name: str, timeout: float = 240) -> dict[str, Any]:
    """Run ``name --smoke``; its one report line, decoded, once checked that it ran."""
    done = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=BENCH.parents[1],
    )
    tail = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"{name} --smoke exited {done.returncode}\n{tail}"
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    assert len(lines) == 1, f"{name} printed {len(lines)} report lines\n{tail}"
    report: dict[str, Any] = json.loads(lines[0].removeprefix(MARK))
    assert report["bench"] == name
    assert report["mode"] == "smoke"
    assert report["figures"], f"{name} reported no figures"
    for figure in report["figures"]:
        assert isinstance(figure["value"], int | float), figure  # a number, not None
        assert figure["met"] is None, figure  # a smoke run judges nothing
    return report


def benchmarks() -> list[str]:
    """Every benchmark script in the folder."""
    return sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in SHARED)
