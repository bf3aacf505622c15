"""Every benchmark but chartsvc's and the console's (``test_smoke_services.py``) still runs
(``--smoke``) and reports its figures."""

from __future__ import annotations

import pytest

from tests.bench.support import benchmarks, smoke

NAMES = [name for name in benchmarks() if not name.startswith(("chartsvc_", "console_"))]


@pytest.mark.parametrize("name", NAMES)
def test_the_benchmark_runs_and_reports_its_figures(name: str) -> None:
    smoke(name)
