"""Provenance: a chart signed in the test by Helm itself (helm_python's sign, with a key gpg made)
verifies, from the loopback repository and as an upload; the same archive with one byte changed, a
.prov signed by a key outside the keyring, and a chart without .prov each fail with their own
reason, and nothing is installed, rendered or pulled."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import attrs
import helm_python as helm
import pytest
from aiohttp import FormData

from chartsvc.archives import without_gzip_extra
from chartsvc.gpg import Keyring
from chartsvc.oci import OciClient
from common.config import ConfigError
from kubesim import Simulator
from tests.chartsvc.conftest import FULL, KEY, ChartRepo, MakeClient, index_document
from tests.chartsvc.fixtures_cluster import API, build_chart, namespace, sim
from tests.chartsvc.fixtures_registry import Registry, registry
from tests.chartsvc.test_oci import LOOPBACK, alice
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["namespace", "registry", "sim"]

CHART = "signed"


@attrs.frozen
class Signer:
    """A key gpg made for the test: its user's name, its fingerprint, its secret keyring (for Helm to sign with)
    and its public key, armoured."""

    name: str
    fingerprint: str
    secret: Path
    public: Path


def make_signer(work: Path, name: str) -> Signer:
    home = work / f"gnupg-{name}"
    home.mkdir(mode=0o700)

    def gpg(*args: str) -> bytes:
        command = ["gpg", "--homedir", str(home), "--batch", "--no-tty", "--quiet", *args]
        return subprocess.run(command, check=True, capture_output=True, timeout=120).stdout

    gpg("--passphrase", "", "--quick-gen-key", f"{name} <{name}@example.test>", "rsa2048", "sign")
    listing = gpg("--with-colons", "--list-keys").decode()
    fingerprint = next(line.split(":")[9] for line in listing.splitlines() if line[:4] == "fpr:")
    secret, public = work / f"{name}-secret.gpg", work / f"{name}-public.asc"
    secret.write_bytes(gpg("--export-secret-keys"))
    public.write_bytes(gpg("--armor", "--export"))
    return Signer(name, fingerprint, secret, public)


@pytest.fixture(scope="module")
def signers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Signer]:
    work = tmp_path_factory.mktemp("keys")
    return {name: make_signer(work, name) for name in ("author", "outsider")}


def signed_archive(work: Path, version: str, signer: Signer | None) -> Path:
    """``signed-<version>.tgz`` in its own folder, with the ``.prov`` Helm writes when signed."""
    folder = work / uuid.uuid4().hex[:8]
    folder.mkdir()
    archive = folder / f"{CHART}-{version}.tgz"
    archive.write_bytes(build_chart(work, CHART, version=version))
    if signer is not None:
        helm.sign(archive, key=signer.name, keyring=signer.secret)
    return archive


@pytest.fixture
def published(chart_repo: ChartRepo, signers: dict[str, Signer], tmp_path: Path) -> dict[str, Path]:
    """In the loopback repository: 1.0.0 signed by the author, 2.0.0 by an outsider, 3.0.0
    unsigned, and 4.0.0 signed by the author but served with one byte of the archive changed
    (the index updated to match, as a compromised repository would)."""
    charts = {
        "1.0.0": signed_archive(tmp_path, "1.0.0", signers["author"]),
        "2.0.0": signed_archive(tmp_path, "2.0.0", signers["outsider"]),
        "3.0.0": signed_archive(tmp_path, "3.0.0", None),
        "4.0.0": signed_archive(tmp_path, "4.0.0", signers["author"]),
    }
    tampered = bytearray(charts["4.0.0"].read_bytes())
    tampered[4] ^= 1  # the gzip header's mtime: still a valid archive, no longer the signed one
    charts["4.0.0"].write_bytes(bytes(tampered))
    for version, path in charts.items():
        chart_repo.archives[f"{CHART}-{version}"] = path
    chart_repo.set_index(index_document(chart_repo.archives), etag='"signed"')
    return charts


@pytest.fixture
async def client(
    make_client: MakeClient,
    chart_repo: ChartRepo,
    signers: dict[str, Signer],
    sim: Simulator,
    published: dict[str, Path],
) -> Client:
    c: Client = await make_client(
        *FULL,
        f"chartsvc.kube.kubeconfig={sim.kubeconfig_path}",
        f"chartsvc.security.keyring={signers['author'].public}",
    )
    resp = await c.post(f"{API}/repos", json={"name": "r", "url": chart_repo.url}, headers=KEY)
    assert resp.status == 201, await resp.text()
    return c


async def verify(client: Client, version: str, **extra: Any) -> tuple[int, dict[str, Any]]:
    body = {"chart": f"r/{CHART}", "version": version} | extra
    resp = await client.post(f"{API}/charts/verify", json=body)
    return resp.status, await resp.json(content_type=None)


async def test_a_chart_helm_signed_verifies(
    client: Client, signers: dict[str, Signer], published: dict[str, Path]
) -> None:
    status, body = await verify(client, "1.0.0")
    assert status == 200, body
    digest = hashlib.sha256(published["1.0.0"].read_bytes()).hexdigest()
    author = signers["author"].fingerprint
    assert body == {
        "name": CHART,
        "version": "1.0.0",
        "signer": "author <author@example.test>",
        "fingerprint": author,
        "keyId": author[-16:],
        "digest": f"sha256:{digest}",
        "file": f"{CHART}-1.0.0.tgz",
    }
    for key_id in (author, author[-16:], "0x" + author[-8:].lower()):
        status, named = await verify(client, "1.0.0", keyId=key_id)
        assert (status, named) == (200, body)


@pytest.mark.parametrize(
    ("version", "reason"),
    [("2.0.0", "unknown-key"), ("3.0.0", "no-provenance"), ("4.0.0", "digest-mismatch")],
)
async def test_each_failure_names_its_reason(client: Client, version: str, reason: str) -> None:
    status, body = await verify(client, version)
    assert status == 400
    assert (body["code"], body["reason"]) == ("provenance-failed", reason), body


async def test_a_key_id_outside_the_keyring_is_refused(
    client: Client, signers: dict[str, Signer]
) -> None:
    status, body = await verify(client, "1.0.0", keyId=signers["outsider"].fingerprint)
    assert (status, body["reason"]) == (400, "unknown-key")


@pytest.mark.parametrize(
    ("version", "reason"),
    [("2.0.0", "unknown-key"), ("3.0.0", "no-provenance"), ("4.0.0", "digest-mismatch")],
)
async def test_nothing_that_fails_is_installed_rendered_or_pulled(
    client: Client, namespace: str, version: str, reason: str
) -> None:
    ref = {"chartRef": f"r/{CHART}", "version": version, "verify": True}
    resp = await client.post(
        f"{API}/releases", json=ref | {"releaseName": "app", "namespace": namespace}, headers=KEY
    )
    problem = await assert_problem(resp, 400, code="provenance-failed")
    assert problem["reason"] == reason
    listed = await client.get(f"{API}/releases?namespace={namespace}")
    assert await listed.json() == []
    rendered = await client.post(f"{API}/charts/template", json=ref)
    assert (await assert_problem(rendered, 400, code="provenance-failed"))["reason"] == reason
    pull = {"chart": f"r/{CHART}", "version": version, "verify": True}
    pulled = await client.post(f"{API}/repos/pull", json=pull)
    assert (await assert_problem(pulled, 400, code="provenance-failed"))["reason"] == reason


async def test_a_verified_install_and_upgrade(client: Client, namespace: str) -> None:
    ref = {"chartRef": f"r/{CHART}", "version": "1.0.0", "verify": True}
    where = {"releaseName": "app", "namespace": namespace}
    resp = await client.post(f"{API}/releases", json=ref | where, headers=KEY)
    assert resp.status == 201, await resp.text()
    assert (await resp.json())["chart"]["metadata"]["version"] == "1.0.0"
    bad = {"chartRef": f"r/{CHART}", "version": "2.0.0", "verify": True}
    upgrade = await client.put(f"{API}/releases/app?namespace={namespace}", json=bad, headers=KEY)
    await assert_problem(upgrade, 400, code="provenance-failed")
    history = await client.get(f"{API}/releases/app/history?namespace={namespace}")
    assert [r["version"] for r in await history.json()] == [1]
    upgrade = await client.put(f"{API}/releases/app?namespace={namespace}", json=ref, headers=KEY)
    assert upgrade.status == 200, await upgrade.text()


def upload(archive: bytes, prov: bytes | None, key_id: str | None = None) -> FormData:
    form = FormData()
    form.add_field("chart", archive, filename="chart.tgz", content_type="application/gzip")
    if prov is not None:
        form.add_field("provenance", prov, filename="chart.tgz.prov", content_type="text/plain")
    if key_id is not None:
        form.add_field("keyId", key_id)
    return form


async def test_the_upload_variant(
    client: Client, published: dict[str, Path], signers: dict[str, Signer]
) -> None:
    archive = published["1.0.0"]
    prov = archive.with_name(archive.name + ".prov").read_bytes()
    resp = await client.post(f"{API}/charts/verify/upload", data=upload(archive.read_bytes(), prov))
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["fingerprint"] == signers["author"].fingerprint
    changed = bytearray(archive.read_bytes())
    changed[4] ^= 1
    resp = await client.post(f"{API}/charts/verify/upload", data=upload(bytes(changed), prov))
    assert (await assert_problem(resp, 400, code="provenance-failed"))[
        "reason"
    ] == "digest-mismatch"
    resp = await client.post(f"{API}/charts/verify/upload", data=upload(archive.read_bytes(), None))
    assert (await assert_problem(resp, 400, code="provenance-failed"))["reason"] == "no-provenance"
    forged = prov.replace(b"name: signed", b"name: signee")
    resp = await client.post(
        f"{API}/charts/verify/upload", data=upload(archive.read_bytes(), forged)
    )
    assert (await assert_problem(resp, 400, code="provenance-failed"))["reason"] == "bad-signature"
    resp = await client.post(
        f"{API}/charts/verify/upload", data=upload(archive.read_bytes(), b"not a signature")
    )
    problem = await assert_problem(resp, 400, code="provenance-failed")
    assert problem["reason"] == "invalid-provenance"


def upload_with(
    archive: bytes, prov: bytes | None, request: dict[str, Any] | None = None
) -> FormData:
    """A release or template upload: the archive, its ``.prov`` when given, the request part."""
    form = upload(archive, prov)
    if request is not None:
        form.add_field("request", json.dumps(request), content_type="application/json")
    return form


def prov_of(archive: Path) -> bytes:
    return archive.with_name(archive.name + ".prov").read_bytes()


async def test_uploads_verified_install_template_and_upgrade(
    client: Client, namespace: str, published: dict[str, Path], signers: dict[str, Signer]
) -> None:
    archive = published["1.0.0"]
    data, prov = archive.read_bytes(), prov_of(archive)
    verify = {"verify": True, "keyId": signers["author"].fingerprint[-16:]}
    resp = await client.post(
        f"{API}/charts/template/upload", data=upload_with(data, prov, verify | {"releaseName": "a"})
    )
    assert resp.status == 200, await resp.text()
    install = verify | {"releaseName": "app", "namespace": namespace}
    resp = await client.post(
        f"{API}/releases/upload", data=upload_with(data, prov, install), headers=KEY
    )
    assert resp.status == 201, await resp.text()
    resp = await client.post(
        f"{API}/releases/app/upgrade/upload?namespace={namespace}",
        data=upload_with(data, prov, verify),
        headers=KEY,
    )
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["version"] == 2
    # a .prov sent without verify is refused, not left unchecked
    resp = await client.post(f"{API}/charts/template/upload", data=upload_with(data, prov, {}))
    problem = await assert_problem(resp, 400)
    assert problem["errors"][0]["field"] == "provenance"


@pytest.mark.parametrize(
    "reason", ["digest-mismatch", "unknown-key", "no-provenance", "bad-signature"]
)
async def test_an_upload_that_fails_verification_is_neither_installed_nor_rendered(
    client: Client,
    namespace: str,
    published: dict[str, Path],
    signers: dict[str, Signer],
    reason: str,
) -> None:
    archive = published["1.0.0"]
    data, prov = archive.read_bytes(), prov_of(archive)
    given: dict[str, Any] = {}
    if reason == "digest-mismatch":
        changed = bytearray(data)
        changed[4] ^= 1
        data = bytes(changed)
    elif reason == "unknown-key":
        given = {"keyId": signers["outsider"].fingerprint}
    elif reason == "bad-signature":
        prov = prov.replace(b"name: signed", b"name: signee")
    sent = None if reason == "no-provenance" else prov
    verify = {"verify": True} | given
    install = verify | {"releaseName": "app", "namespace": namespace}
    resp = await client.post(
        f"{API}/releases/upload", data=upload_with(data, sent, install), headers=KEY
    )
    assert (await assert_problem(resp, 400, code="provenance-failed"))["reason"] == reason
    listed = await client.get(f"{API}/releases?namespace={namespace}")
    assert await listed.json() == []
    resp = await client.post(f"{API}/charts/template/upload", data=upload_with(data, sent, verify))
    assert (await assert_problem(resp, 400, code="provenance-failed"))["reason"] == reason
    good = {"releaseName": "app", "namespace": namespace}
    good_form = upload_with(archive.read_bytes(), None, good)
    assert (await client.post(f"{API}/releases/upload", data=good_form, headers=KEY)).status == 201
    resp = await client.post(
        f"{API}/releases/app/upgrade/upload?namespace={namespace}",
        data=upload_with(data, sent, verify),
        headers=KEY,
    )
    assert (await assert_problem(resp, 400, code="provenance-failed"))["reason"] == reason
    history = await client.get(f"{API}/releases/app/history?namespace={namespace}")
    assert [r["version"] for r in await history.json()] == [1]


async def test_without_a_keyring_nothing_verifies(
    make_client: MakeClient, chart_repo: ChartRepo, published: dict[str, Path]
) -> None:
    client: Client = await make_client(*FULL)
    await client.post(f"{API}/repos", json={"name": "r", "url": chart_repo.url}, headers=KEY)
    status, body = await verify(client, "1.0.0")
    assert (status, body["reason"]) == (400, "no-keyring")


@pytest.mark.timeout(900)  # the first registry test may install the package
async def test_a_signed_chart_from_oci_verifies_and_an_unsigned_one_does_not(
    make_client: MakeClient, registry: Registry, signers: dict[str, Signer], tmp_path: Path
) -> None:
    # The OCI client pushes archives without Helm's gzip extra field (see test_http_oci): the
    # archive is signed as pushed.
    signed = tmp_path / f"{CHART}-5.0.0.tgz"
    signed.write_bytes(without_gzip_extra(build_chart(tmp_path, CHART, version="5.0.0")))
    prov = Path(helm.sign(signed, key="author", keyring=signers["author"].secret))
    unsigned = tmp_path / "unsigned" / f"{CHART}-6.0.0.tgz"
    unsigned.parent.mkdir()
    unsigned.write_bytes(without_gzip_extra(build_chart(tmp_path, CHART, version="6.0.0")))
    remote = f"{registry.oci}/public/provenance"
    async with OciClient(LOOPBACK, plain_http=True, credentials=alice(registry)) as oci:
        await oci.push(signed, remote, provenance=prov)
        await oci.push(unsigned, remote)
    client: Client = await make_client(
        "chartsvc.oci.plain-http=true", f"chartsvc.security.keyring={signers['author'].public}"
    )
    resp = await client.post(
        f"{API}/charts/verify", json={"chart": f"{remote}/{CHART}", "version": "5.0.0"}
    )
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert (body["name"], body["version"]) == (CHART, "5.0.0")
    assert body["digest"] == "sha256:" + hashlib.sha256(signed.read_bytes()).hexdigest()
    resp = await client.post(
        f"{API}/repos/pull", json={"chart": f"{remote}/{CHART}:6.0.0", "verify": True}
    )
    assert (await assert_problem(resp, 400, code="provenance-failed"))["reason"] == "no-provenance"


async def test_without_gpg_the_service_starts_and_verify_is_503(
    make_client: MakeClient,
    signers: dict[str, Signer],
    published: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no gpg on this machine
    client: Client = await make_client(f"chartsvc.security.keyring={signers['author'].public}")
    archive = published["1.0.0"]
    data, prov = archive.read_bytes(), prov_of(archive)
    resp = await client.post(f"{API}/charts/verify/upload", data=upload(data, prov))
    problem = await assert_problem(resp, 503, code="provenance-unavailable")
    assert "gpg (GnuPG)" in problem["detail"]
    asked = upload_with(data, prov, {"verify": True})
    resp = await client.post(f"{API}/charts/template/upload", data=asked)
    await assert_problem(resp, 503, code="provenance-unavailable")
    resp = await client.post(f"{API}/charts/template/upload", data=upload_with(data, None, {}))
    assert resp.status == 200, await resp.text()  # all else is served


@pytest.mark.parametrize("content", [None, b"", b"not a key at all"])
def test_a_keyring_that_cannot_be_read_stops_start_up(
    tmp_path: Path, content: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keyring.asc"
    if content is not None:
        path.write_bytes(content)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where its working copies go
    with pytest.raises(ConfigError, match=r"chartsvc\.security\.keyring"):
        Keyring.load(path)
    assert not list(scratch.iterdir())  # nothing left behind
