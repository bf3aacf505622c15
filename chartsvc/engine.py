"""The one adapter over ``helm_python``: every call runs in a worker thread, every error becomes ours.

Only local bytes and files reach this module. It must not fetch anything: repository indexes, chart
archives and OCI blobs are downloaded by ``chartsvc.repos`` and ``chartsvc.oci`` through the address
guard first, so Helm's own network code is never exercised. It knows nothing of HTTP.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

import helm_python as helm

from chartsvc import manifests
from chartsvc.handles import HandlePool
from common.errors import BadRequest, WharfError

T = TypeVar("T")

ShowFormat = Literal["all", "chart", "values", "readme", "crds"]

# Helm's own rule for chart names (chartutil.ValidateMetadataName); it also keeps "/" and ".." out of
# the scaffold's path.
CHART_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class ChartInvalid(BadRequest):
    """The bytes are not a loadable chart archive."""

    default_code = "invalid-chart"


class RenderFailed(BadRequest):
    """The chart loaded but its templates or the given values do not render."""

    default_code = "render-failed"


class EngineError(WharfError):
    """Helm failed for a reason that is not the caller's input."""


def _translate(exc: helm.HelmError) -> WharfError:
    # Upstream text is truncated: it can quote whole templates back at the caller.
    detail = str(exc)[:500]
    if isinstance(exc, helm.HelmChartLoadError | helm.HelmChartInvalidError):
        return ChartInvalid(f"invalid chart archive: {detail}")
    if isinstance(exc, helm.HelmValuesError | helm.HelmRenderError):
        return RenderFailed(f"chart failed to render: {detail}")
    if isinstance(exc, helm.HelmInvalidArgError):
        return BadRequest(detail)
    return EngineError("the Helm engine failed")


async def _run(func: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    def call() -> T:
        try:
            return func(*args, **kwargs)
        except helm.HelmError as exc:
            raise _translate(exc) from exc

    return await asyncio.to_thread(call)


@contextmanager
def _loaded(archive: bytes) -> Iterator[helm.Chart]:
    chart = helm.Chart.load_archive(archive)
    try:
        yield chart
    finally:
        chart.close()


class ChartCache:
    """Loaded charts by archive digest, least recently used first out, shared across threads.

    Loading is a third of a render's cost, and the same chart is rendered again and again. Charts
    are immutable and thread-safe in helm_python; the pool closes a handle only once it has been
    evicted *and* no thread still renders with it. The owner calls :meth:`close` at shutdown.
    """

    def __init__(self, max_charts: int = 32, max_bytes: int = 16 * 1024 * 1024) -> None:
        # max_bytes counts compressed bytes; a loaded chart takes several times that in the Go heap.
        self._pool: HandlePool[str, helm.Chart] = HandlePool(
            max_count=max_charts, max_weight=max_bytes
        )

    @contextmanager
    def use(self, archive: bytes) -> Iterator[helm.Chart]:
        key = hashlib.sha256(archive).hexdigest()
        with self._pool.use(
            key, lambda: helm.Chart.load_archive(archive), weight=len(archive)
        ) as chart:
            yield chart

    def close(self) -> None:
        self._pool.close()


def _render_sync(
    archive: bytes,
    values: dict[str, Any],
    release_name: str,
    namespace: str,
    charts: ChartCache | None,
    before: Callable[[], None] | None,
) -> str:
    if before is not None:
        before()
    helm.validate_release_name(release_name)
    with charts.use(archive) if charts is not None else _loaded(archive) as chart:
        rendered = chart.render(
            values, name=release_name, namespace=namespace, revision=1, is_install=True
        )
    return manifests.text(rendered)


async def render(
    archive: bytes,
    *,
    values: dict[str, Any],
    release_name: str,
    namespace: str,
    charts: ChartCache | None = None,
    before: Callable[[], None] | None = None,
) -> str:
    """``helm template``: render offline, values coalesced over the chart's defaults like Helm.

    ``before`` runs first in the same worker thread (the archive limits check), saving a hop.
    """
    return await _run(_render_sync, archive, values, release_name, namespace, charts, before)


def _metadata_sync(archive: bytes) -> dict[str, Any]:
    with _loaded(archive) as chart:
        return chart.metadata


async def metadata(archive: bytes) -> dict[str, Any]:
    """The archive's ``Chart.yaml`` as a mapping (also proves the archive loads)."""
    return await _run(_metadata_sync, archive)


def _show_sync(archive: bytes, what: ShowFormat, temp_dir: Path | None) -> str:
    helm.Chart.load_archive(archive).close()  # a bad archive: a 400 that names no server path
    # helm's show reads a path; a local file keeps it away from any network code.
    with tempfile.TemporaryDirectory(dir=temp_dir, prefix="chartsvc-show-") as work:
        path = Path(work) / "chart.tgz"
        path.write_bytes(archive)
        return helm.show(str(path), output_format=what)


async def show(archive: bytes, what: ShowFormat, *, temp_dir: Path | None = None) -> str:
    """``helm show <what>`` of a local archive."""
    return await _run(_show_sync, archive, what, temp_dir)


def _create_sync(name: str, temp_dir: Path | None) -> bytes:
    if not CHART_NAME.match(name) or len(name) > 253:
        raise BadRequest(
            f"invalid chart name {name[:100]!r}: must match {CHART_NAME.pattern}",
            extra={"errors": [{"in": "body", "field": "name", "message": "is invalid"}]},
        )
    with tempfile.TemporaryDirectory(dir=temp_dir, prefix="chartsvc-create-") as work:
        helm.Chart.create(name, work).close()
        archive = helm.package(Path(work) / name, destination=work)
        return Path(archive).read_bytes()


async def create(name: str, *, temp_dir: Path | None = None) -> bytes:
    """``helm create <name>`` then ``helm package``: the scaffold as ``.tgz`` bytes."""
    return await _run(_create_sync, name, temp_dir)


def _package_sync(chart_dir: Path, destination: Path, version: str | None) -> Path:
    return Path(helm.package(chart_dir, destination=destination, version=version))


async def package(chart_dir: Path, destination: Path, *, version: str | None = None) -> Path:
    """``helm package``: a chart directory into ``destination``; returns the archive path."""
    return await _run(_package_sync, chart_dir, destination, version)


def _scaffold_sync(name: str, directory: Path) -> Path:
    helm.Chart.create(name, directory).close()
    return directory / name


async def scaffold(name: str, directory: Path) -> Path:
    """``helm create`` into ``directory``; returns the chart directory."""
    return await _run(_scaffold_sync, name, directory)
