"""Helm's chart actions on local bytes: render (``helm template``), show, create, lint, package.

Only local bytes and files reach this module. It must not fetch anything: repository indexes, chart
archives and OCI blobs are downloaded by ``chartsvc.repos`` and ``chartsvc.oci`` through the address
guard first, so Helm's own network code is never exercised. Every call runs on the adapter's one
pool (``chartsvc.helm.runner``). It knows nothing of HTTP.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Literal

import helm_python as helm

from chartsvc import names
from chartsvc.helm.errors import provenance_failure
from chartsvc.helm.handles import HandlePool
from chartsvc.helm.runner import HelmRunner
from chartsvc.helm.sandbox import RenderPool
from common.errors import BadRequest, ValidationFailed

ShowFormat = Literal["all", "chart", "values", "readme", "crds"]

#: The longest name ``helm create`` + ``helm package`` can both take: Helm refuses names over 250,
#: and the package ``<name>-0.1.0.tgz`` must fit a 255-byte file name.
MAX_CREATE_NAME = 255 - len("-0.1.0.tgz")
#: Helm's own rule for chart names (chartutil.ValidateMetadataName), at most ``MAX_CREATE_NAME``
#: long: the spec's ``ChartName``. It also keeps "/" and ".." out of the scaffold's path.
CHART_NAME_PATTERN = names.dns_subdomain(MAX_CREATE_NAME)
_CHART_NAME = re.compile(CHART_NAME_PATTERN)


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

    def forget(self, digests: Iterable[str]) -> None:
        """Drop the charts loaded from archives of these sha256 digests (hex)."""
        self._pool.discard(digests)

    def close(self) -> None:
        self._pool.close()


class ChartEngine:
    """Chart actions on the runner's pool, loaded charts kept in ``cache``; renders run bounded in
    ``renders``' worker processes; temp files (show, create) go under ``temp_dir`` (the system's
    when None) and are removed when done."""

    def __init__(
        self,
        runner: HelmRunner,
        cache: ChartCache,
        renders: RenderPool,
        temp_dir: Path | None = None,
    ) -> None:
        self.runner = runner
        self.cache = cache
        self.renders = renders
        self.temp_dir = temp_dir

    async def render(
        self,
        archive: bytes,
        *,
        values: dict[str, Any],
        release_name: str,
        namespace: str,
        before: Callable[[], None] | None = None,
    ) -> str:
        """``helm template``: render offline, values coalesced over the chart's defaults like Helm,
        within the render limits (``chartsvc.helm.sandbox``).

        ``before`` runs first in the same worker thread (the archive limits check), saving a hop.
        """
        options = {"namespace": namespace, "revision": 1, "is_install": True}

        def call() -> str:
            if before is not None:
                before()
            return self.renders.render(archive, values, name=release_name, options=options)

        return await self.runner.run(call, operation="render")

    async def metadata(self, archive: bytes) -> dict[str, Any]:
        """The archive's ``Chart.yaml`` as a mapping (also proves the archive loads)."""

        def call() -> dict[str, Any]:
            with _loaded(archive) as chart:
                return chart.metadata

        return await self.runner.run(call, operation="metadata")

    async def verify(
        self, archive: bytes, provenance: bytes, keyring: Path, *, file_name: str
    ) -> dict[str, Any]:
        """``helm verify`` of ``archive`` (saved as ``file_name``, the name its ``.prov`` signs)
        against ``keyring``: ``{"file_name", "file_hash", "signed_by"}``; ProvenanceFailed with
        Helm's reason when it does not verify."""

        def call() -> dict[str, Any]:
            with self._workdir("verify") as work:
                path = work / file_name
                path.write_bytes(archive)
                prov = work / f"{file_name}.prov"
                prov.write_bytes(provenance)
                try:
                    return helm.verify(path, keyring, provenance_file=prov)
                except helm.HelmChartInvalidError as exc:
                    raise provenance_failure(exc) from None

        return await self.runner.run(call, operation="verify")

    async def show(self, archive: bytes, what: ShowFormat) -> str:
        """``helm show <what>`` of a local archive."""

        def call() -> str:
            helm.Chart.load_archive(archive).close()  # a bad archive: a 400 naming no file
            # helm's show reads a path; a local file keeps it away from any network code.
            with self._workdir("show") as work:
                path = work / "chart.tgz"
                path.write_bytes(archive)
                return helm.show(str(path), output_format=what)

        return await self.runner.run(call, operation="show")

    async def create(self, name: str) -> bytes:
        """``helm create <name>`` then ``helm package``: the scaffold as ``.tgz`` bytes."""
        check_create_name(name)

        def call() -> bytes:
            with self._workdir("create") as work:
                helm.Chart.create(name, work).close()
                return Path(helm.package(work / name, destination=work)).read_bytes()

        return await self.runner.run(call, operation="create")

    async def package(
        self, chart_dir: Path, destination: Path, *, version: str | None = None
    ) -> Path:
        """``helm package``: a chart directory into ``destination``; returns the archive path."""
        return await self.runner.run(
            lambda: Path(helm.package(chart_dir, destination=destination, version=version)),
            operation="package",
        )

    async def lint(
        self,
        archive: bytes,
        values: dict[str, Any],
        *,
        strict: bool = False,
        namespace: str | None = None,
        kube_version: str | None = None,
    ) -> dict[str, Any]:
        """``helm lint`` of a chart archive: ``{total_charts_linted, messages, errors}``, findings
        as data (severity 1 info, 2 warning, 3 error), never raised.

        Lint renders the templates, which cannot be stopped in-process: the chart is first
        rendered within the render limits, and only the limits' refusals are raised from it (a
        chart that fails to render is lint's finding to report)."""
        bounded = {"namespace": namespace or "default", "is_install": True}

        def call() -> dict[str, Any]:
            with suppress(BadRequest):  # does not render or load: lint says why, as findings
                self.renders.render(archive, values, name="release-name", options=bounded)
            with self._workdir("lint") as work:
                path = work / "chart.tgz"
                path.write_bytes(archive)
                return helm.lint(
                    path, values, strict=strict, namespace=namespace, kube_version=kube_version
                )

        return await self.runner.run(call, operation="lint")

    async def package_archive(
        self, archive: bytes, *, version: str | None, app_version: str | None
    ) -> tuple[bytes, str]:
        """``helm package`` of a chart directory sent as an archive: the ``.tgz`` and its name.

        The archive is unpacked by Helm's own loader (``helm.expand``: no path leaves the work
        directory), then packaged as ``helm package`` does it (``.helmignore`` applies)."""

        def call() -> tuple[bytes, str]:
            with self._workdir("package") as work:
                upload, tree = work / "upload.tgz", work / "tree"
                upload.write_bytes(archive)
                tree.mkdir()
                helm.expand(tree, upload)
                (chart_dir,) = (p for p in tree.iterdir() if p.is_dir())
                return _package(chart_dir, work / "out", version, app_version)

        return await self.runner.run(call, operation="package-archive")

    async def package_files(
        self, files: Mapping[str, str], *, version: str | None, app_version: str | None
    ) -> tuple[bytes, str]:
        """``helm package`` of a chart given as its files (relative paths already checked)."""

        def call() -> tuple[bytes, str]:
            with self._workdir("package") as work:
                root = work / "chart"
                for relative, text in files.items():
                    path = root / relative
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, "utf-8")
                return _package(root, work / "out", version, app_version)

        return await self.runner.run(call, operation="package-files")

    async def scaffold(self, name: str, directory: Path) -> Path:
        """``helm create`` into ``directory``; returns the chart directory."""

        def call() -> Path:
            helm.Chart.create(name, directory).close()
            return directory / name

        return await self.runner.run(call, operation="scaffold")

    @contextmanager
    def _workdir(self, what: str) -> Iterator[Path]:
        with tempfile.TemporaryDirectory(dir=self.temp_dir, prefix=f"chartsvc-{what}-") as work:
            yield Path(work)


def _package(
    chart_dir: Path, out: Path, version: str | None, app_version: str | None
) -> tuple[bytes, str]:
    out.mkdir()
    path = Path(helm.package(chart_dir, destination=out, version=version, app_version=app_version))
    return path.read_bytes(), path.name


def check_create_name(name: str) -> None:
    """Raise a 400 naming the field unless ``helm create`` and ``helm package`` can take ``name``."""
    if not _CHART_NAME.match(name):
        message = f"must be a DNS-1123 subdomain of at most {MAX_CREATE_NAME} characters"
        raise ValidationFailed([{"in": "body", "field": "name", "message": message}])
