"""Helm fixtures for the console: the chart tests' loopback repository, the console pointed at it.

``helm_console`` is the console in open mode over ``alpha`` and ``beta`` whose chart library has
the loopback repository as ``r`` (charts ``demo`` 0.1.0/0.2.0 and ``other``, ``helm create``
scaffolds built by the real engine) and whose outbound policy allows loopback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp.test_utils import TestClient

from common.kubesim import Simulator
from console.app import create_app
from console.keys import OUTBOUND_ALLOW
from tests.chartsvc.conftest import LOOPBACK, ChartRepo
from tests.chartsvc.conftest import chart_archives as chart_archives
from tests.chartsvc.conftest import chart_repo as chart_repo
from tests.conftest import ApiClient
from tests.console.resources_support import create, kube, namespace, unique
from tests.console.support import make_settings

__all__ = ["ChartRepo", "chart_archives", "chart_repo", "fresh_namespace", "helm_console"]


def write_repositories(data_dir: Path, repos: dict[str, str]) -> None:
    """Helm's repositories.yaml for the console's chart library, as an operator writes it."""
    target = data_dir / "helm" / "repositories.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    entries = [{"name": name, "url": url} for name, url in repos.items()]
    target.write_text(yaml.safe_dump({"apiVersion": "", "repositories": entries}))


@pytest.fixture
async def helm_console(
    api_client: ApiClient, kubeconfig: Path, tmp_path: Path, chart_repo: ChartRepo
) -> TestClient[Any, Any]:
    data = tmp_path / "console"
    write_repositories(data, {"r": chart_repo.url})
    app = create_app(make_settings(data), environ={"KUBECONFIG": str(kubeconfig)})
    app[OUTBOUND_ALLOW] = LOOPBACK
    return await api_client(app)


async def fresh_namespace(sim: Simulator, prefix: str = "h") -> str:
    name = unique(prefix)
    async with kube(sim) as api:
        await create(api, namespace(name))
    return name
