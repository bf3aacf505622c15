"""Chart-service fixtures: real chart archives and a real chart repository served over loopback.

The archives are ``helm create`` scaffolds packaged by the real engine; the repository is an aiohttp
server speaking what chart repositories speak (index.yaml with ETag/Last-Modified, .tgz files). The
service reaches it only because the tests widen the address policy with an explicit allow-list.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import ipaddress
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import helm_python as helm
import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestServer
from pytest_aiohttp import AiohttpServer

from chartsvc.app import create_app
from chartsvc.settings import Settings
from common.config import load_settings
from tests.conftest import ApiClient
from tests.typing_support import Client

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
"""


def build_chart(
    workdir: Path, name: str, version: str, *, app_version: str = "1.0", extras: bool = False
) -> Path:
    """A packaged ``helm create`` scaffold; ``extras`` adds a README and a CRD."""
    src = workdir / f"src-{name}-{version}"
    src.mkdir(parents=True)
    helm.Chart.create(name, src).close()
    chart_dir = src / name
    meta = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
    meta.update(version=version, appVersion=app_version, description=f"{name} chart {version}")
    (chart_dir / "Chart.yaml").write_text(yaml.safe_dump(meta))
    if extras:
        (chart_dir / "README.md").write_text(f"# {name}\n\nA chart for tests.\n")
        (chart_dir / "crds").mkdir()
        (chart_dir / "crds" / "widget.yaml").write_text(CRD)
    out = workdir / "dist"
    out.mkdir(exist_ok=True)
    return Path(helm.package(chart_dir, destination=out))


@pytest.fixture(scope="session")
def chart_archives(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``<name>-<version>`` → archive, built once per session."""
    work = tmp_path_factory.mktemp("charts")
    specs = [
        ("demo", "0.1.0", False),
        ("demo", "0.2.0", True),
        ("demo", "1.0.0-rc.1", False),
        ("other", "2.3.4", False),
    ]
    return {f"{n}-{v}": build_chart(work, n, v, extras=x) for n, v, x in specs}


def index_document(
    archives: dict[str, Path], *, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A Helm index for ``archives`` with relative URLs, plus one invalid entry Helm would skip."""
    entries: dict[str, list[dict[str, Any]]] = {}
    for _key, path in archives.items():
        meta = helm.Chart.load(path)
        info = meta.metadata
        meta.close()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        entry = {
            **info,
            "urls": [f"charts/{path.name}"],
            "digest": digest,
            "created": "2026-01-01T00:00:00Z",
        }
        entries.setdefault(info["name"], []).append(entry)
    entries.setdefault("demo", []).append({"name": "demo", "version": "not-semver", "urls": ["x"]})
    return {
        "apiVersion": "v1",
        "entries": {**entries, **(extra or {})},
        "generated": "2026-01-01T00:00:00Z",
    }


@attrs.define
class ChartRepo:
    """A chart repository on loopback; tests change its index and read its request log."""

    archives: dict[str, Path]
    index: bytes = b""
    etag: str = '"v1"'
    requests: list[tuple[str, str]] = attrs.field(factory=list)
    status: int = 200
    server: TestServer | None = None
    basic_auth: str | None = None  # "user:password" the repository demands, like a private repo
    redirect_to: str | None = None  # answer index requests with a 302 to this URL
    # Requests with ?hold=<key> wait for gates[key]: a slow repository, on demand.
    gates: dict[str, asyncio.Event] = attrs.field(factory=dict)

    def _refused(self, request: web.Request) -> bool:
        if self.basic_auth is None:
            return False
        expected = "Basic " + base64.b64encode(self.basic_auth.encode()).decode()
        return request.headers.get("Authorization") != expected

    @property
    def url(self) -> str:
        assert self.server is not None
        return str(self.server.make_url("/")).rstrip("/")

    def set_index(
        self, document: dict[str, Any], *, as_yaml: bool = False, etag: str = '"v2"'
    ) -> None:
        self.index = (yaml.safe_dump(document) if as_yaml else json.dumps(document)).encode()
        self.etag = etag

    async def serve_index(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.path, request.headers.get("If-None-Match", "")))
        if (hold := request.query.get("hold")) in self.gates:
            await self.gates[hold].wait()
        if self._refused(request):
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="charts"'})
        if self.redirect_to is not None:
            return web.Response(status=302, headers={"Location": self.redirect_to})
        if self.status != 200:
            return web.Response(status=self.status, text="nope")
        if request.headers.get("If-None-Match") == self.etag:
            return web.Response(status=304, headers={"ETag": self.etag})
        response = web.Response(body=self.index, content_type="application/x-yaml")
        response.headers["ETag"] = self.etag
        if "gzip" in request.headers.get("Accept-Encoding", ""):
            response.enable_compression()
        return response

    async def serve_chart(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.path, ""))
        if self._refused(request):
            return web.Response(status=401)
        name = request.match_info["file"]
        for path in self.archives.values():
            if path.name == name:
                return web.Response(body=path.read_bytes(), content_type="application/gzip")
            prov = path.with_name(f"{path.name}.prov")  # beside its archive, as helm serve has it
            if prov.name == name and prov.is_file():
                return web.Response(body=prov.read_bytes(), content_type="text/plain")
        raise web.HTTPNotFound()


@pytest.fixture
async def chart_repo(chart_archives: dict[str, Path], aiohttp_server: AiohttpServer) -> ChartRepo:
    repo = ChartRepo(archives=dict(chart_archives))
    repo.set_index(index_document(chart_archives), etag='"v1"')
    app = web.Application()
    app.router.add_get("/index.yaml", repo.serve_index)
    app.router.add_get("/charts/{file}", repo.serve_chart)
    repo.server = await aiohttp_server(app)
    return repo


MakeSettings = Callable[..., Settings]


@pytest.fixture
def make_settings(tmp_path: Path) -> MakeSettings:
    """Settings with the data dir and temp dir under ``tmp_path``; ``--set`` style overrides."""

    def make(*overrides: str, **named: Any) -> Settings:
        pairs = [
            f"chartsvc.data-dir={tmp_path / 'data'}",
            f"chartsvc.rest.temp-dir={tmp_path / 'tmp'}",
            *overrides,
            *(f"chartsvc.{k.replace('__', '.').replace('_', '-')}={v}" for k, v in named.items()),
        ]
        return load_settings(Settings, overrides=pairs)

    return make


MakeClient = Callable[..., Awaitable[Client]]


@pytest.fixture
def make_client(api_client: ApiClient, make_settings: MakeSettings) -> MakeClient:
    """A test client of ``create_app`` with settings overrides; loopback allowed for the fakes."""

    async def make(*overrides: str, allow: tuple[Any, ...] = LOOPBACK) -> Client:
        return await api_client(create_app(make_settings(*overrides), address_allow=allow))

    return make


FULL = ("chartsvc.security.mode=FULL", "chartsvc.security.api-key=test-key")
KEY = {"X-API-Key": "test-key"}
#: The release operations the contract marks mutating.
RELEASE_WRITES = {
    "installRelease",
    "installReleaseUpload",
    "upgradeRelease",
    "upgradeReleaseUpload",
    "uninstallRelease",
    "rollbackRelease",
    "testRelease",
}


@pytest.fixture
async def client(make_client: MakeClient) -> Client:
    """FULL mode with a key, so tests can add repositories; requests send ``KEY`` for writes."""
    return await make_client(*FULL)


@pytest.fixture
async def repo_client(client: Client, chart_repo: ChartRepo) -> Client:
    """A client with the loopback repository added as ``r``."""
    resp = await client.post(
        "/api/v1/repos", json={"name": "r", "url": chart_repo.url}, headers=KEY
    )
    assert resp.status == 201, await resp.text()
    return client
