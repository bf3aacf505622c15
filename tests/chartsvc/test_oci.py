"""The OCI client against a real registry (distribution 2.8) with token auth, and against Helm.

Round trips prove our protocol; ``helm_python`` pulling what we pushed (and the reverse) proves the
media types and tag spelling are Helm's. The fakes at the end cover what the real registry never
does on its own: redirecting blob downloads to another origin, failing, and sending non-charts.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import ipaddress
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import helm_python
import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestServer

from chartsvc.oci import (
    CHART_LAYER_MEDIA_TYPE,
    CONFIG_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    PROVENANCE_LAYER_MEDIA_TYPE,
    ChartNotInRegistry,
    InvalidChartMetadata,
    InvalidReference,
    NotAChart,
    OciClient,
    Reference,
    RegistryAuthFailed,
    RegistryProtocolError,
    RegistryUnavailable,
)
from chartsvc.oci.auth import parse_challenge
from common.errors import WharfError
from common.netguard import AddressPolicy, AddressRefused
from tests.chartsvc.fixtures_charts import chart_yaml, tgz_bytes
from tests.chartsvc.fixtures_registry import USERS, Registry, registry

__all__ = ["registry"]  # the session fixture, imported for pytest
# The first test to need the registry may install it (apt-get): allow for that, not the default 120 s.
pytestmark = pytest.mark.timeout(900)

LOOPBACK = AddressPolicy(allow=(ipaddress.ip_network("127.0.0.0/8"),))
TEMPLATE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\n"


def make_chart(tmp_path: Path, name: str, version: str, **metadata: Any) -> Path:
    """A real, renderable chart archive as ``helm package`` lays it out (``name/…``)."""
    chart = yaml.safe_load(chart_yaml(name, version)) | metadata
    data = tgz_bytes(
        {
            f"{name}/Chart.yaml": yaml.safe_dump(chart),
            f"{name}/values.yaml": "replicas: 1\n",
            f"{name}/templates/cm.yaml": TEMPLATE,
        }
    )
    path = tmp_path / f"{name}-{version}.tgz"
    path.write_bytes(data)
    return path


def raw_chart(tmp_path: Path, chart: dict[str, Any]) -> Path:
    path = tmp_path / "raw.tgz"
    path.write_bytes(tgz_bytes({f"{chart['name']}/Chart.yaml": yaml.safe_dump(chart)}))
    return path


def alice(reg: Registry) -> dict[str, tuple[str, str]]:
    return {reg.host: ("alice", USERS["alice"])}


@pytest.fixture
async def client(registry: Registry) -> AsyncIterator[OciClient]:
    async with OciClient(LOOPBACK, plain_http=True, credentials=alice(registry)) as oci:
        yield oci


async def test_push_then_pull_returns_identical_bytes(
    registry: Registry, client: OciClient, tmp_path: Path
) -> None:
    archive = make_chart(tmp_path, "roundtrip", "1.2.3", description="a <test> & more")
    pushed = await client.push(archive, f"{registry.oci}/charts")
    assert pushed["ref"] == f"{registry.host}/charts/roundtrip:1.2.3"
    assert pushed["digest"].startswith("sha256:")
    pulled = await client.pull(f"{registry.oci}/charts/roundtrip:1.2.3")
    assert pulled == archive.read_bytes()
    by_version = await client.pull(f"{registry.oci}/charts/roundtrip", version="1.2.3")
    assert by_version == pulled
    by_digest = await client.pull(f"{registry.oci}/charts/roundtrip@{pushed['digest']}")
    assert by_digest == pulled


async def test_pushing_the_same_archive_twice_gives_the_same_digest(
    registry: Registry, client: OciClient, tmp_path: Path
) -> None:
    archive = make_chart(tmp_path, "again", "0.1.0")
    first = await client.push(archive, f"{registry.oci}/charts")
    second = await client.push(archive, f"{registry.oci}/charts/")
    assert first == second


async def test_latest_is_the_highest_release_and_constraints_work(
    registry: Registry, client: OciClient, tmp_path: Path
) -> None:
    archives = {}
    for version in ["1.0.0", "1.10.0", "1.2.0", "2.0.0-rc.1", "0.9.0+build.7"]:
        archives[version] = make_chart(tmp_path, "many", version).read_bytes()
        await client.push(tmp_path / f"many-{version}.tgz", f"{registry.oci}/charts")
    ref = f"{registry.oci}/charts/many"
    assert await client.tags(ref) == ["2.0.0-rc.1", "1.10.0", "1.2.0", "1.0.0", "0.9.0+build.7"]
    assert await client.pull(ref) == archives["1.10.0"]
    assert await client.pull(ref, version="~1.2") == archives["1.2.0"]
    assert await client.pull(ref, version=">=2.0.0-0") == archives["2.0.0-rc.1"]
    assert await client.pull(ref, version="0.9.0+build.7") == archives["0.9.0+build.7"]
    assert await client.pull(f"{ref}:0.9.0_build.7") == archives["0.9.0+build.7"]


async def test_unknown_tag_repository_and_version_are_404(
    registry: Registry, client: OciClient, tmp_path: Path
) -> None:
    await client.push(make_chart(tmp_path, "known", "1.0.0"), f"{registry.oci}/charts")
    for ref, version in [
        (f"{registry.oci}/charts/known:9.9.9", None),
        (f"{registry.oci}/charts/never-pushed:1.0.0", None),
        (f"{registry.oci}/charts/never-pushed", None),
        (f"{registry.oci}/charts/known", "^3"),
    ]:
        with pytest.raises(ChartNotInRegistry) as caught:
            await client.pull(ref, version=version)
        assert caught.value.status == 404
    with pytest.raises(ChartNotInRegistry):
        await client.tags(f"{registry.oci}/charts/never-pushed")


async def test_wrong_credentials_are_refused_without_echoing_them(
    registry: Registry, tmp_path: Path
) -> None:
    creds = {registry.host: ("alice", "not-her-password")}
    async with OciClient(LOOPBACK, plain_http=True, credentials=creds) as oci:
        with pytest.raises(RegistryAuthFailed) as caught:
            await oci.push(make_chart(tmp_path, "denied", "1.0.0"), f"{registry.oci}/charts")
    assert caught.value.status == 502
    assert registry.host in caught.value.detail
    assert "not-her-password" not in json.dumps(caught.value.to_problem(instance="/x"))


async def test_anonymous_may_pull_public_charts_but_not_push(
    registry: Registry, client: OciClient, tmp_path: Path
) -> None:
    archive = make_chart(tmp_path, "open", "1.0.0")
    await client.push(archive, f"{registry.oci}/public")
    async with OciClient(LOOPBACK, plain_http=True) as anonymous:
        assert await anonymous.pull(f"{registry.oci}/public/open:1.0.0") == archive.read_bytes()
        with pytest.raises(RegistryAuthFailed) as caught:
            await anonymous.push(archive, f"{registry.oci}/private")
    assert "anonymous" in caught.value.detail
    seen = registry.token_server.requests
    assert any(r["user"] == "alice" and r["service"] for r in seen)
    assert any(r["user"] is None for r in seen)


async def test_helm_reads_what_we_push(
    registry: Registry, client: OciClient, tmp_path: Path
) -> None:
    archive = make_chart(tmp_path, "helmcompat", "0.3.0", appVersion="9.9")
    provenance = tmp_path / "helmcompat-0.3.0.tgz.prov"
    provenance.write_text("-----BEGIN PGP SIGNED MESSAGE-----\nnot really signed\n")
    await client.push(archive, f"{registry.oci}/public/charts", provenance=provenance)
    ref = f"oci://{registry.host}/public/charts/helmcompat"
    # helm_python's show refuses a version option; the tag in the reference says the same.
    shown = await asyncio.to_thread(
        helm_python.show, f"{ref}:0.3.0", output_format="chart", plain_http=True
    )
    assert "name: helmcompat" in shown
    assert 'appVersion: "9.9"' in shown or "appVersion: '9.9'" in shown
    out = tmp_path / "out"
    out.mkdir()
    await asyncio.to_thread(
        helm_python.pull, ref, version="0.3.0", destination=out, plain_http=True
    )
    assert (out / "helmcompat-0.3.0.tgz").read_bytes() == archive.read_bytes()


async def test_we_read_what_helm_pushes(
    registry: Registry, client: OciClient, tmp_path: Path
) -> None:
    archive = make_chart(tmp_path, "fromhelm", "2.1.0")
    helm_client = helm_python.RegistryClient(
        plain_http=True, credentials_file=tmp_path / "registry.json"
    )
    await asyncio.to_thread(
        helm_client.login, registry.host, "alice", USERS["alice"], plain_http=True
    )
    await asyncio.to_thread(
        helm_python.push, archive, f"{registry.oci}/charts", client=helm_client, plain_http=True
    )
    assert await client.tags(f"{registry.oci}/charts/fromhelm") == ["2.1.0"]
    assert await client.pull(f"{registry.oci}/charts/fromhelm") == archive.read_bytes()


async def test_pushed_manifest_uses_helms_media_types(
    registry: Registry, client: OciClient, tmp_path: Path
) -> None:
    archive = make_chart(
        tmp_path, "mediatypes", "1.0.0", home="https://example.com", sources=["https://src"]
    )
    pushed = await client.push(archive, f"{registry.oci}/public")
    helm_client = helm_python.RegistryClient(plain_http=True)
    described = await asyncio.to_thread(
        helm_client.resolve, f"oci://{registry.host}/public/mediatypes:1.0.0"
    )
    assert described["digest"] == pushed["digest"]
    assert described["media_type"] == MANIFEST_MEDIA_TYPE


@pytest.mark.parametrize(
    "ref",
    [
        "http://127.0.0.1/charts/x",
        "oci://127.0.0.1",
        "oci:///charts/x",
        "oci://host/UPPER/x",
        "oci://host/charts/x:bad tag",
        "oci://host/charts/x@md5:abc",
        "oci://host/../x",
    ],
)
async def test_malformed_references_are_400(ref: str) -> None:
    async with OciClient(LOOPBACK, plain_http=True) as oci:
        with pytest.raises(InvalidReference) as caught:
            await oci.pull(ref)
    assert caught.value.status == 400


async def test_loopback_registry_is_refused_without_the_allow_list(registry: Registry) -> None:
    async with OciClient(AddressPolicy(), plain_http=True) as oci:
        with pytest.raises(AddressRefused) as caught:
            await oci.pull(f"{registry.oci}/public/anything:1.0.0")
    assert caught.value.address_class == "loopback"


async def test_unreachable_registry_is_502() -> None:
    server = TestServer(web.Application(), host="127.0.0.1")
    await server.start_server()
    host = f"127.0.0.1:{server.port}"
    await server.close()
    async with OciClient(LOOPBACK, plain_http=True) as oci:
        with pytest.raises(RegistryUnavailable) as caught:
            await oci.pull(f"oci://{host}/charts/x:1.0.0")
    assert caught.value.status == 502


# --- a fake registry for what the real one does not do -------------------------------------------

CHART = tgz_bytes({"fake/Chart.yaml": chart_yaml("fake", "1.0.0")})


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class FakeRegistry:
    """Serves one chart; its blob GET redirects to ``storage`` (another origin) when set."""

    def __init__(self) -> None:
        self.storage_url = ""
        self.status = 200
        self.config_type = CONFIG_MEDIA_TYPE
        self.blob = CHART
        self.storage_headers: list[dict[str, str]] = []

    def manifest(self) -> bytes:
        config = b"{}"
        return json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": MANIFEST_MEDIA_TYPE,
                "config": {"mediaType": self.config_type, "digest": _digest(config), "size": 2},
                "layers": [
                    {"mediaType": PROVENANCE_LAYER_MEDIA_TYPE, "digest": _digest(b"p"), "size": 1},
                    {
                        "mediaType": CHART_LAYER_MEDIA_TYPE,
                        "digest": _digest(CHART),
                        "size": len(CHART),
                    },
                ],
            }
        ).encode()

    async def get_manifest(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != "Bearer fake-token":
            realm = f"http://{request.host}/token"
            challenge = f'Bearer realm="{realm}",service="fake",scope="repository:charts/fake:pull"'
            return web.Response(status=401, headers={"WWW-Authenticate": challenge})
        if self.status != 200:
            return web.Response(status=self.status)
        return web.Response(body=self.manifest(), content_type=MANIFEST_MEDIA_TYPE)

    async def token(self, request: web.Request) -> web.Response:
        return web.json_response({"access_token": "fake-token"})

    async def tags(self, request: web.Request) -> web.Response:
        pages = {None: ["1.0.0", "not-semver"], "b": ["1.0.1_build.1", "v2.0.0"], "c": ["0.5.0"]}
        last = request.query.get("last")
        following = {None: "b", "b": "c"}.get(last)
        headers = {}
        if following:
            link = f"/v2/charts/fake/tags/list?n=2&last={following}"
            headers["Link"] = f'<{link}>; rel="next"'
        return web.json_response({"name": "charts/fake", "tags": pages[last]}, headers=headers)

    async def get_blob(self, request: web.Request) -> web.Response:
        if self.storage_url:
            raise web.HTTPTemporaryRedirect(self.storage_url)
        return web.Response(body=self.blob)

    async def storage(self, request: web.Request) -> web.Response:
        self.storage_headers.append(dict(request.headers))
        return web.Response(body=self.blob)


@pytest.fixture
async def fake() -> AsyncIterator[tuple[FakeRegistry, str]]:
    registry = FakeRegistry()
    app = web.Application()
    app.router.add_get("/v2/charts/fake/manifests/{tag}", registry.get_manifest)
    app.router.add_get("/v2/charts/fake/blobs/{digest}", registry.get_blob)
    app.router.add_get("/v2/charts/fake/tags/list", registry.tags)
    app.router.add_get("/token", registry.token)
    storage = web.Application()
    storage.router.add_get("/bucket/{name}", registry.storage)
    async with (
        TestServer(app, host="127.0.0.1") as server,
        TestServer(storage, host="127.0.0.1") as store,
    ):
        registry.storage_url = str(store.make_url("/bucket/chart.tgz"))
        yield registry, f"oci://127.0.0.1:{server.port}/charts/fake"


async def test_blob_redirect_to_storage_drops_the_token(fake: tuple[FakeRegistry, str]) -> None:
    registry, ref = fake
    async with OciClient(LOOPBACK, plain_http=True) as oci:
        assert await oci.pull(f"{ref}:1.0.0") == CHART
    (headers,) = registry.storage_headers
    assert "Authorization" not in headers


async def test_blob_redirect_to_a_refused_address_is_refused(
    fake: tuple[FakeRegistry, str],
) -> None:
    registry, ref = fake
    registry.storage_url = "http://169.254.169.254/latest/meta-data"
    async with OciClient(LOOPBACK, plain_http=True) as oci:
        with pytest.raises(AddressRefused) as caught:
            await oci.pull(f"{ref}:1.0.0")
    assert caught.value.address_class == "metadata"


@pytest.mark.parametrize(
    ("field", "value", "refusal", "status"),
    [
        pytest.param("blob", CHART[:-1] + b"x", RegistryProtocolError, 502, id="corrupt-blob"),
        pytest.param("status", 503, RegistryUnavailable, 502, id="registry-failure"),
        pytest.param(
            "config_type",
            "application/vnd.oci.image.config.v1+json",
            NotAChart,
            400,
            id="container-image-not-a-chart",
        ),
    ],
)
async def test_a_pull_without_a_good_chart_is_refused(
    fake: tuple[FakeRegistry, str],
    field: str,
    value: object,
    refusal: type[WharfError],
    status: int,
) -> None:
    registry, ref = fake
    setattr(registry, field, value)
    async with OciClient(LOOPBACK, plain_http=True) as oci:
        with pytest.raises(refusal) as caught:
            await oci.pull(f"{ref}:1.0.0")
    assert caught.value.status == status


async def test_tag_lists_follow_link_pagination(fake: tuple[FakeRegistry, str]) -> None:
    _, ref = fake
    async with OciClient(LOOPBACK, plain_http=True) as oci:
        assert await oci.tags(ref) == ["1.0.1+build.1", "1.0.0", "0.5.0"]


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("oci://Registry.Example:5000/a/b/c", Reference("registry.example:5000", "a/b/c")),
        ("oci://r.example/charts/nginx:1.2.3_b", Reference("r.example", "charts/nginx", "1.2.3_b")),
        (
            "oci://[::1]:5000/x@sha256:" + "a" * 64,
            Reference("[::1]:5000", "x", digest="sha256:" + "a" * 64),
        ),
        ("oci://r.example/my-org/my_chart", Reference("r.example", "my-org/my_chart")),
    ],
)
def test_references_parse(ref: str, expected: Reference) -> None:
    assert Reference.parse(ref) == expected


def test_push_destinations_take_no_tag() -> None:
    with pytest.raises(InvalidReference):
        Reference.parse("oci://r.example/charts:1.0.0", allow_tag=False)


def test_challenges_parse() -> None:
    header = (
        'Bearer realm="https://auth.example/token",service="registry.example",'
        'scope="repository:a/b:pull,push",error="insufficient_scope"'
    )
    challenge = parse_challenge(header)
    assert challenge is not None
    assert challenge.scheme == "bearer"
    assert challenge.params["scope"] == "repository:a/b:pull,push"
    assert challenge.params["realm"] == "https://auth.example/token"
    basic = parse_challenge('Basic realm="Registry Realm"')
    assert basic is not None
    assert (basic.scheme, basic.params) == ("basic", {"realm": "Registry Realm"})
    assert parse_challenge("") is None


@pytest.mark.parametrize(("version", "detail"), [("not-semver", "SemVer"), (None, "a version")])
async def test_push_refuses_charts_helm_would_not_load(
    registry: Registry, client: OciClient, tmp_path: Path, version: str | None, detail: str
) -> None:
    archive = raw_chart(tmp_path, {"apiVersion": "v2", "name": "broken", "version": version})
    with pytest.raises(InvalidChartMetadata) as caught:
        await client.push(archive, f"{registry.oci}/charts")
    assert caught.value.status == 400
    assert detail in caught.value.detail


async def test_numeric_chart_version_is_pushed_as_helm_reads_it(
    registry: Registry, client: OciClient, tmp_path: Path
) -> None:
    archive = raw_chart(tmp_path, {"apiVersion": "v2", "name": "numeric", "version": 3})
    pushed = await client.push(archive, f"{registry.oci}/charts")
    assert pushed["ref"].endswith("/charts/numeric:3")


@pytest.fixture
async def basic_registry() -> AsyncIterator[str]:
    """A registry that answers Basic challenges (no token service), as htpasswd-only ones do."""
    registry = FakeRegistry()
    registry.storage_url = ""
    expected = "Basic " + base64.b64encode(b"bob:builder").decode()

    Handler = Callable[[web.Request], Awaitable[web.Response]]

    def guarded(handler: Handler) -> Handler:
        async def check(request: web.Request) -> web.Response:
            if request.headers.get("Authorization") != expected:
                return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="r"'})
            return await handler(request)

        return check

    async def manifest(request: web.Request) -> web.Response:
        return web.Response(body=registry.manifest(), content_type=MANIFEST_MEDIA_TYPE)

    app = web.Application()
    app.router.add_get("/v2/charts/fake/manifests/{tag}", guarded(manifest))
    app.router.add_get("/v2/charts/fake/blobs/{digest}", guarded(registry.get_blob))
    async with TestServer(app, host="127.0.0.1") as server:
        yield f"127.0.0.1:{server.port}"


async def test_basic_challenge_is_answered_with_configured_credentials(basic_registry: str) -> None:
    creds = {basic_registry: ("bob", "builder")}
    async with OciClient(LOOPBACK, plain_http=True, credentials=creds) as oci:
        assert await oci.pull(f"oci://{basic_registry}/charts/fake:1.0.0") == CHART


async def test_basic_challenge_without_credentials_is_502(basic_registry: str) -> None:
    async with OciClient(LOOPBACK, plain_http=True) as oci:
        with pytest.raises(RegistryAuthFailed) as caught:
            await oci.pull(f"oci://{basic_registry}/charts/fake:1.0.0")
    assert "requires credentials" in caught.value.detail


async def test_wrong_basic_credentials_are_502_without_echo(basic_registry: str) -> None:
    creds = {basic_registry: ("bob", "hunter2")}
    async with OciClient(LOOPBACK, plain_http=True, credentials=creds) as oci:
        with pytest.raises(RegistryAuthFailed) as caught:
            await oci.pull(f"oci://{basic_registry}/charts/fake:1.0.0")
    assert "hunter2" not in caught.value.detail
    assert basic_registry in caught.value.detail
