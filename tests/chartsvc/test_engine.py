"""The Helm engine adapter on real charts: rendering like `helm template`, show, create, errors."""

from __future__ import annotations

import asyncio
import io
import tarfile
from collections.abc import Iterator
from pathlib import Path

import helm_python
import pytest
import yaml

from chartsvc.helm import (
    ChartCache,
    ChartEngine,
    ChartInvalid,
    Helm,
    HelmRunner,
    RenderFailed,
    RenderLimits,
    RenderPool,
)
from common.errors import BadRequest


@pytest.fixture
def demo(chart_archives: dict[str, Path]) -> bytes:
    return chart_archives["demo-0.2.0"].read_bytes()


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[ChartEngine]:
    helm = Helm(temp_dir=tmp_path / "tmp", credentials_dir=tmp_path / "credentials")
    (tmp_path / "tmp").mkdir()
    yield helm.charts
    helm.close()


@pytest.fixture
def runner() -> Iterator[HelmRunner]:
    runner = HelmRunner()
    yield runner
    runner.close()


@pytest.fixture
def renders() -> Iterator[RenderPool]:
    pool = RenderPool(RenderLimits())
    yield pool
    pool.close()


async def test_render_orders_like_helm_template_and_puts_hooks_last(
    engine: ChartEngine, demo: bytes
) -> None:
    text = await engine.render(demo, values={}, release_name="web", namespace="prod")
    sources = [
        line.removeprefix("# Source: ")
        for line in text.splitlines()
        if line.startswith("# Source:")
    ]
    assert sources == [
        "demo/templates/serviceaccount.yaml",
        "demo/templates/service.yaml",
        "demo/templates/deployment.yaml",
        "demo/templates/tests/test-connection.yaml",
    ]
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert docs[2]["metadata"]["name"] == "web-demo"
    assert "NOTES" not in text


async def test_values_merge_like_helm_nested_and_null_deletes(
    engine: ChartEngine, demo: bytes
) -> None:
    values = {"replicaCount": 4, "service": {"port": None}, "ingress": {"enabled": True}}
    text = await engine.render(demo, values=values, release_name="web", namespace="default")
    docs = {d["kind"]: d for d in yaml.safe_load_all(text) if d}
    assert docs["Deployment"]["spec"]["replicas"] == 4
    assert docs["Ingress"]["spec"]["rules"]  # nested override kept the chart's other ingress keys
    assert docs["Service"]["spec"]["ports"][0]["port"] is None  # null removed the default 80


async def test_bad_release_name_and_bad_archive_are_400(engine: ChartEngine, demo: bytes) -> None:
    with pytest.raises(BadRequest):
        await engine.render(demo, values={}, release_name="Not Valid", namespace="default")
    with pytest.raises(ChartInvalid):
        await engine.render(b"not a tgz", values={}, release_name="x", namespace="default")


async def test_render_failure_is_400_not_500(engine: ChartEngine, tmp_path: Path) -> None:
    chart = await engine.scaffold("broken", tmp_path)
    (chart / "templates" / "bad.yaml").write_text('{{ fail "boom" }}\n')
    archive = await engine.package(chart, tmp_path)
    with pytest.raises(RenderFailed) as failed:
        await engine.render(archive.read_bytes(), values={}, release_name="x", namespace="d")
    assert "boom" in failed.value.detail


async def test_show_variants(engine: ChartEngine, demo: bytes) -> None:
    chart = yaml.safe_load(await engine.show(demo, "chart"))
    assert chart["name"] == "demo"
    assert chart["version"] == "0.2.0"
    assert "replicaCount" in yaml.safe_load(await engine.show(demo, "values"))
    assert (await engine.show(demo, "readme")).startswith("# demo")
    assert "CustomResourceDefinition" in await engine.show(demo, "crds")
    everything = await engine.show(demo, "all")
    assert "replicaCount" in everything
    assert "# demo" in everything


async def test_create_is_a_real_helm_create_scaffold(engine: ChartEngine) -> None:
    data = await engine.create("my-app")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        names = set(tar.getnames())
    assert {"my-app/Chart.yaml", "my-app/values.yaml", "my-app/templates/deployment.yaml"} <= names
    assert "my-app/templates/tests/test-connection.yaml" in names
    rendered = await engine.render(data, values={}, release_name="x", namespace="d")
    assert "kind: Deployment" in rendered


@pytest.mark.parametrize("name", ["../evil", "Bad_Name", "a/b", ""])
async def test_create_refuses_unsafe_names(engine: ChartEngine, name: str) -> None:
    with pytest.raises(BadRequest):
        await engine.create(name)


def test_chart_cache_reuses_and_closes_handles(chart_archives: dict[str, Path]) -> None:
    cache = ChartCache(max_charts=2)
    archives = [chart_archives[k].read_bytes() for k in ("demo-0.1.0", "demo-0.2.0", "other-2.3.4")]
    before = helm_python.open_handles_count()

    def load(data: bytes) -> None:
        with cache.use(data):
            pass

    for data in archives[:2] * 3:
        load(data)
    assert helm_python.open_handles_count() == before + 2  # loaded once each, kept
    with cache.use(archives[0]) as held:  # in use while evicted: must stay open until released
        load(archives[2])
        load(archives[1])
        assert held.metadata["version"] == "0.1.0"
    assert helm_python.open_handles_count() == before + 2
    cache.close()
    assert helm_python.open_handles_count() == before


async def test_concurrent_renders_share_the_workers_safely(
    runner: HelmRunner, renders: RenderPool, chart_archives: dict[str, Path]
) -> None:
    cache = ChartCache(max_charts=2)
    engine = ChartEngine(runner, cache, renders)
    keys = ["demo-0.1.0", "demo-0.2.0", "other-2.3.4"]
    archives = {k: chart_archives[k].read_bytes() for k in keys}

    async def render(key: str, n: int) -> tuple[str, str]:
        text = await engine.render(archives[key], values={}, release_name=f"r{n}", namespace="d")
        return key, text

    results = await asyncio.gather(*(render(keys[n % 3], n) for n in range(60)))
    for n, (key, text) in enumerate(results):
        name, version = key.rsplit("-", 1)[0], key.split("-", 1)[1]
        assert f"helm.sh/chart: {name}-{version}" in text
        assert f"app.kubernetes.io/instance: r{n}" in text
    cache.close()


async def test_create_accepts_what_helm_accepts(engine: ChartEngine) -> None:
    data = await engine.create("my.app-2")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        assert "my.app-2/Chart.yaml" in tar.getnames()


async def test_errors_name_no_server_paths(engine: ChartEngine, tmp_path: Path) -> None:
    with pytest.raises(ChartInvalid) as failed:
        await engine.show(b"garbage", "chart")
    assert str(tmp_path) not in failed.value.detail
    assert "/tmp" not in failed.value.detail
