"""Every chartsvc and console benchmark still runs (``--smoke``) and reports its figures.

The other benchmarks are in ``test_smoke_others.py``: two files, so the suite's workers share
them."""

from __future__ import annotations

import pytest

from tests.bench.support import benchmarks, smoke

NAMES = [name for name in benchmarks() if name.startswith(("chartsvc_", "console_"))]


@pytest.mark.parametrize("name", NAMES)
def test_the_benchmark_runs_and_reports_its_figures(name: str) -> None:
    smoke(name)
