"""Helm fixtures for the console: the chart tests' loopback repository, the console pointed at it.

``helm_console`` is the console in open mode over ``alpha`` and ``beta`` whose chart library has
the loopback repository as ``r`` (charts ``demo`` 0.1.0/0.2.0 and ``other``, ``helm create``
scaffolds built by the real engine) and whose outbound policy allows loopback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from console.app import create_app
from console.keys import OUTBOUND_ALLOW
from tests.chartsvc.conftest import LOOPBACK, ChartRepo
from tests.chartsvc.conftest import chart_archives as chart_archives
from tests.chartsvc.conftest import chart_repo as chart_repo
from tests.conftest import ApiClient
from tests.console.support import make_settings
from tests.typing_support import Client

__all__ = ["ChartRepo", "chart_archives", "chart_repo", "helm_console"]


def write_repositories(data_dir: Path, repos: dict[str, str]) -> None:
    """Helm's repositories.yaml for the console's chart library, as an operator writes it."""
    target = data_dir / "helm" / "repositories.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    entries = [{"name": name, "url": url} for name, url in repos.items()]
    target.write_text(yaml.safe_dump({"apiVersion": "", "repositories": entries}))


@pytest.fixture
async def helm_console(
    api_client: ApiClient, kubeconfig: Path, tmp_path: Path, chart_repo: ChartRepo
) -> Client:
    return await make_helm_console(api_client, kubeconfig, tmp_path, chart_repo)


async def make_helm_console(
    api_client: ApiClient, kubeconfig: Path, tmp_path: Path, chart_repo: ChartRepo, *overrides: str
) -> Client:
    """:func:`helm_console` with settings ``overrides`` (``"clusters.impersonate=on"``)."""
    data = tmp_path / "console"
    write_repositories(data, {"r": chart_repo.url})
    app = create_app(make_settings(data, *overrides), environ={"KUBECONFIG": str(kubeconfig)})
    app[OUTBOUND_ALLOW] = LOOPBACK
    return await api_client(app)
