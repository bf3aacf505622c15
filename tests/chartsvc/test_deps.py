"""Dependency resolution into Chart.lock: Helm's digest, byte for byte, and the refusals.

The digest is checked three ways: against locks bitnami committed, against Helm itself (the
helm_python SDK running ``helm dependency update`` on the same chart over a loopback repository), and
against Go's JSON rules for the characters and numbers where Python's json differs.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import helm_python
import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestServer

from chartsvc.deps import (
    BadChartArchive,
    ChartArchiveTooLarge,
    Dependency,
    InvalidDependency,
    LocalDependencyRefused,
    NoMatchingVersion,
    UnknownRepositoryAlias,
    go_json,
    hash_req,
    resolve_lock,
    rfc3339,
)
from chartsvc.oci import OciClient
from common.netguard import AddressPolicy
from tests.chartsvc.fixtures_charts import (
    NGINX_17_CHART_LOCK,
    NGINX_17_CHART_YAML,
    NGINX_2022_CHART_LOCK,
    NGINX_2022_DEPENDENCIES,
    WORDPRESS_2025_CHART_LOCK,
    WORDPRESS_2025_DEPENDENCIES,
    chart_yaml,
    tgz_bytes,
    write_chart_tgz,
)
from tests.chartsvc.fixtures_registry import USERS, Registry, registry

__all__ = ["registry"]  # the session fixture, imported for pytest

LOOPBACK = AddressPolicy(allow=(ipaddress.ip_network("127.0.0.0/8"),))
FIXED_NOW = datetime(2026, 11, 21, 17, 0, 0, 123450, tzinfo=UTC)

VersionsFor = Callable[[str, str], Awaitable[list[str]]]


def versions_from(table: dict[tuple[str, str], list[str]]) -> VersionsFor:
    async def versions_for(repo_url: str, chart: str) -> list[str]:
        return table[(repo_url, chart)]

    return versions_for


def tags_from(table: dict[str, list[str]]) -> Callable[[str], Awaitable[list[str]]]:
    async def oci_tags(ref: str) -> list[str]:
        return table[ref]

    return oci_tags


async def no_versions(repo_url: str, chart: str) -> list[str]:
    raise AssertionError(f"no repository should be consulted ({repo_url}, {chart})")


async def lock_for(tmp_path: Path, dependencies: str, **kwargs: Any) -> dict[str, Any]:
    archive = write_chart_tgz(tmp_path, chart_yaml("parent", "1.0.0", dependencies))
    kwargs.setdefault("versions_for", no_versions)
    text = await resolve_lock(archive, now=lambda: FIXED_NOW, **kwargs)
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


# --- real locks committed upstream ---------------------------------------------------------------


async def test_nginx_17_lock_digest_matches_the_committed_one(tmp_path: Path) -> None:
    archive = write_chart_tgz(tmp_path, NGINX_17_CHART_YAML)
    tags = tags_from({"oci://registry-1.docker.io/bitnamicharts/common": ["2.16.1", "1.17.1"]})
    text = await resolve_lock(
        archive, versions_for=no_versions, oci_tags=tags, now=lambda: FIXED_NOW
    )
    expected = yaml.safe_load(NGINX_17_CHART_LOCK)
    got = yaml.safe_load(text)
    assert got["digest"] == expected["digest"]
    assert got["dependencies"] == expected["dependencies"]


async def test_nginx_2022_http_repo_lock_matches_byte_for_byte(tmp_path: Path) -> None:
    archive = write_chart_tgz(tmp_path, chart_yaml("nginx", "13.2.20", NGINX_2022_DEPENDENCIES))
    repo = "https://charts.bitnami.com/bitnami"
    versions = versions_from({(repo, "common"): ["2.2.2", "2.2.1", "1.17.1", "3.0.0-rc.1"]})
    generated = datetime(2022, 12, 13, 19, 15, 48, 236175, tzinfo=UTC)
    text = await resolve_lock(archive, versions_for=versions, now=lambda: generated)
    # Python keeps microseconds where Go kept nanoseconds; everything else is the committed file.
    assert text == NGINX_2022_CHART_LOCK.replace("236175982Z", "236175Z")


async def test_wordpress_lock_with_conditions_matches(tmp_path: Path) -> None:
    archive = write_chart_tgz(
        tmp_path, chart_yaml("wordpress", "24.1.7", WORDPRESS_2025_DEPENDENCIES)
    )
    base = "oci://registry-1.docker.io/bitnamicharts"
    tags = tags_from(
        {
            f"{base}/memcached": ["7.6.0", "7.6.1", "8.0.0"],
            f"{base}/mariadb": ["20.2.2", "20.2.1", "19.1.0"],
            f"{base}/common": ["2.29.1", "2.29.0", "2.30.0-rc.1"],
        }
    )
    text = await resolve_lock(
        archive, versions_for=no_versions, oci_tags=tags, now=lambda: FIXED_NOW
    )
    expected = yaml.safe_load(WORDPRESS_2025_CHART_LOCK)
    got = yaml.safe_load(text)
    assert (got["digest"], got["dependencies"]) == (expected["digest"], expected["dependencies"])


# --- Helm itself as the oracle --------------------------------------------------------------------

PARITY_DEPENDENCIES = """\
dependencies:
  - name: sub
    version: ">=1.0.0 <2.0.0"
    repository: "{repo}"
    condition: sub.enabled
    tags: [backend, "a&b"]
    alias: subby
    enabled: true
    import-values:
      - data
      - child: default.data
        parent: myimports
  - name: other
    version: ~0.2
    repository: "{repo}"
  - name: other
    version: 0.1
    repository: "{repo}"
    alias: legacy
  - name: sub
    version: 1
    repository: "{repo}"
    alias: one
    condition: "one.enabled,global.one"
    import-values: [{{child: a, parent: b, extra: 2.50}}]
"""
REPO_CHARTS = {
    "sub": ["1.0.0", "1.2.0", "1.10.0", "2.0.0-rc.1", "2.0.0"],
    "other": ["0.1.0", "0.2.3"],
}


def repo_app() -> web.Application:
    """A chart repository: index.yaml plus one archive per version."""
    archives = {
        f"{name}-{version}.tgz": tgz_bytes({f"{name}/Chart.yaml": chart_yaml(name, version)})
        for name, versions in REPO_CHARTS.items()
        for version in versions
    }
    entries = {
        name: [
            {
                "apiVersion": "v2",
                "name": name,
                "version": version,
                "urls": [f"{name}-{version}.tgz"],
                "digest": hashlib.sha256(archives[f"{name}-{version}.tgz"]).hexdigest(),
            }
            for version in versions
        ]
        for name, versions in REPO_CHARTS.items()
    }
    index = yaml.safe_dump({"apiVersion": "v1", "entries": entries})

    async def get(request: web.Request) -> web.Response:
        name = request.match_info["file"]
        if name == "index.yaml":
            return web.Response(text=index, content_type="application/x-yaml")
        if name in archives:
            return web.Response(body=archives[name], content_type="application/gzip")
        raise web.HTTPNotFound()

    app = web.Application()
    app.router.add_get("/repo/{file}", get)
    return app


async def test_digest_equals_what_helm_dependency_update_writes(tmp_path: Path) -> None:
    async with TestServer(repo_app(), host="127.0.0.1") as server:
        repo = str(server.make_url("/repo"))
        deps = PARITY_DEPENDENCIES.format(repo=repo)
        chart_dir = tmp_path / "parent"
        (chart_dir / "charts").mkdir(parents=True)
        (chart_dir / "Chart.yaml").write_text(chart_yaml("parent", "1.0.0", deps))
        await asyncio.to_thread(helm_python.dependency_update, chart_dir)
        helm_lock = yaml.safe_load((chart_dir / "Chart.lock").read_text())

    archive = write_chart_tgz(tmp_path, chart_yaml("parent", "1.0.0", deps))
    versions = versions_from({(repo, n): v for n, v in REPO_CHARTS.items()})
    ours = yaml.safe_load(await resolve_lock(archive, versions_for=versions))
    assert ours["dependencies"] == helm_lock["dependencies"]
    assert ours["digest"] == helm_lock["digest"]
    assert [d["version"] for d in ours["dependencies"]] == ["1.10.0", "0.2.3", "0.1.0", "1.10.0"]


# --- resolution rules -------------------------------------------------------------------------------


async def test_aliases_resolve_to_urls_and_the_digest_uses_the_url(tmp_path: Path) -> None:
    deps = (
        "dependencies:\n"
        "  - {name: a, version: ^1, repository: '@stable'}\n"
        "  - {name: b, version: 2.x, repository: 'alias:stable'}\n"
    )
    url = "https://charts.example.com/stable"
    versions = versions_from({(url, "a"): ["1.0.0", "1.9.0", "2.0.0"], (url, "b"): ["2.1.0"]})
    lock = await lock_for(tmp_path, deps, versions_for=versions, repo_aliases={"stable": url})
    assert lock["dependencies"] == [
        {"name": "a", "repository": url, "version": "1.9.0"},
        {"name": "b", "repository": url, "version": "2.1.0"},
    ]
    requested = [
        Dependency(name="a", version="^1", repository=url),
        Dependency(name="b", version="2.x", repository=url),
    ]
    locked = [Dependency("a", "1.9.0", url), Dependency("b", "2.1.0", url)]
    assert lock["digest"] == hash_req(requested, locked)


@pytest.mark.parametrize(
    ("version", "repository", "refusal", "status", "named"),
    [
        pytest.param("^1", "@nope", UnknownRepositoryAlias, 404, "@nope", id="unknown-alias"),
        pytest.param("^1", "file://../a", LocalDependencyRefused, 400, "file://", id="file"),
        *[
            pytest.param(
                c, "https://x.example", InvalidDependency, 400, "'a'", id=f"constraint {c!r}"
            )
            for c in ("foo", "", ">= bar", "1.2.3.4")
        ],
        pytest.param(
            "~1.2",
            "oci://r.example/charts",
            InvalidDependency,
            400,
            "OCI",
            id="oci-range-no-lister",
        ),
    ],
)
async def test_refused_dependency_names_what_is_wrong(
    tmp_path: Path,
    version: str,
    repository: str,
    refusal: type[InvalidDependency | UnknownRepositoryAlias],
    status: int,
    named: str,
) -> None:
    deps = f"dependencies:\n  - {{name: a, version: '{version}', repository: '{repository}'}}\n"
    with pytest.raises(refusal) as caught:
        await lock_for(tmp_path, deps)  # no oci_tags: an OCI range cannot list its tags
    assert type(caught.value) is refusal
    assert caught.value.status == status
    assert named in caught.value.detail


async def test_no_matching_version_is_404_naming_dependency_and_constraint(tmp_path: Path) -> None:
    url = "https://charts.example.com"
    deps = (
        "dependencies:\n"
        f"  - {{name: a, version: '>=3.0.0', repository: '{url}'}}\n"
        f"  - {{name: b, version: '^1', repository: '{url}'}}\n"
    )
    versions = versions_from({(url, "a"): ["1.0.0", "3.0.0-beta.1"], (url, "b"): ["1.0.0"]})
    with pytest.raises(NoMatchingVersion) as caught:
        await lock_for(tmp_path, deps, versions_for=versions)
    assert caught.value.status == 404
    assert "'a' (>=3.0.0)" in caught.value.detail
    assert caught.value.missing == [("a", ">=3.0.0")]


async def test_prereleases_only_when_the_constraint_asks(tmp_path: Path) -> None:
    url = "https://charts.example.com"
    deps = (
        "dependencies:\n"
        f"  - {{name: a, version: '^1.0.0', repository: '{url}'}}\n"
        f"  - {{name: a, version: '^1.0.0-0', repository: '{url}', alias: pre}}\n"
    )
    versions = versions_from({(url, "a"): ["1.1.0", "1.2.0-rc.1", "garbage"]})
    lock = await lock_for(tmp_path, deps, versions_for=versions)
    assert [d["version"] for d in lock["dependencies"]] == ["1.1.0", "1.2.0-rc.1"]


async def test_oci_exact_version_is_used_without_listing_tags(tmp_path: Path) -> None:
    deps = "dependencies:\n  - {name: c, version: 1.2.3, repository: 'oci://r.example/charts'}\n"
    lock = await lock_for(tmp_path, deps)  # no oci_tags: listing would fail
    assert lock["dependencies"] == [
        {"name": "c", "repository": "oci://r.example/charts", "version": "1.2.3"}
    ]


async def test_oci_range_reads_tags_with_underscore_as_plus(tmp_path: Path) -> None:
    deps = "dependencies:\n  - {name: c, version: '~1.2', repository: 'oci://r.example/charts/'}\n"
    tags = tags_from({"oci://r.example/charts/c": ["1.2.0", "1.2.5_build.7", "v1.2.9", "latest"]})
    lock = await lock_for(tmp_path, deps, oci_tags=tags)
    assert lock["dependencies"][0]["version"] == "1.2.5+build.7"


async def test_vendored_subchart_keeps_its_constraint(tmp_path: Path) -> None:
    deps = "dependencies:\n  - {name: local, version: '>=0.1.0'}\n"
    archive = write_chart_tgz(
        tmp_path,
        chart_yaml("parent", "1.0.0", deps),
        {"charts/local/Chart.yaml": chart_yaml("local", "0.3.0")},
    )
    text = await resolve_lock(archive, versions_for=no_versions, now=lambda: FIXED_NOW)
    assert yaml.safe_load(text)["dependencies"] == [
        {"name": "local", "repository": "", "version": ">=0.1.0"}
    ]
    assert 'repository: ""' in text


async def test_missing_vendored_subchart_is_400(tmp_path: Path) -> None:
    with pytest.raises(InvalidDependency):
        await lock_for(tmp_path, "dependencies:\n  - {name: local, version: '>=0.1.0'}\n")


async def test_v1_chart_reads_requirements_yaml(tmp_path: Path) -> None:
    url = "https://charts.example.com"
    requirements = f"dependencies:\n  - {{name: a, version: '1.x', repository: '{url}'}}\n"
    archive = write_chart_tgz(
        tmp_path,
        chart_yaml("old", "0.1.0", api_version="v1"),
        {"requirements.yaml": requirements},
    )
    versions = versions_from({(url, "a"): ["1.4.0"]})
    text = await resolve_lock(archive, versions_for=versions, now=lambda: FIXED_NOW)
    assert yaml.safe_load(text)["dependencies"][0]["version"] == "1.4.0"


async def test_chart_without_dependencies_gets_an_empty_lock(tmp_path: Path) -> None:
    lock = await lock_for(tmp_path, "")
    assert lock["dependencies"] == []
    assert lock["digest"] == "sha256:" + hashlib.sha256(b"[[],[]]").hexdigest()


async def test_lock_text_shape(tmp_path: Path) -> None:
    url = "https://charts.example.com"
    deps = f"dependencies:\n  - {{name: a, version: '1.x', repository: '{url}'}}\n"
    archive = write_chart_tgz(tmp_path, chart_yaml("p", "1.0.0", deps))
    text = await resolve_lock(
        archive, versions_for=versions_from({(url, "a"): ["1.4.0"]}), now=lambda: FIXED_NOW
    )
    lines = text.splitlines()
    assert lines[:4] == ["dependencies:", "- name: a", f"  repository: {url}", "  version: 1.4.0"]
    assert lines[4].startswith("digest: sha256:")
    assert lines[5] == 'generated: "2026-11-21T17:00:00.12345Z"'


# --- archives ---------------------------------------------------------------------------------------


async def test_path_traversal_in_archive_is_400(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tgz"
    archive.write_bytes(tgz_bytes({"chart/Chart.yaml": chart_yaml("c", "1.0.0"), "../x": "boom"}))
    with pytest.raises(BadChartArchive):
        await resolve_lock(archive, versions_for=no_versions)


async def test_absolute_paths_in_archive_are_400(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tgz"
    archive.write_bytes(tgz_bytes({"/etc/Chart.yaml": chart_yaml("c", "1.0.0")}))
    with pytest.raises(BadChartArchive):
        await resolve_lock(archive, versions_for=no_versions)


@pytest.mark.parametrize("content", [b"not a tarball", b"", b"\x1f\x8b\x08\x00garbage"])
async def test_non_archives_are_400(tmp_path: Path, content: bytes) -> None:
    archive = tmp_path / "bad.tgz"
    archive.write_bytes(content)
    with pytest.raises(BadChartArchive):
        await resolve_lock(archive, versions_for=no_versions)


async def test_archive_without_chart_yaml_is_400(tmp_path: Path) -> None:
    archive = tmp_path / "empty.tgz"
    archive.write_bytes(tgz_bytes({"chart/values.yaml": "a: 1\n"}))
    with pytest.raises(BadChartArchive):
        await resolve_lock(archive, versions_for=no_versions)


async def test_oversized_chart_yaml_is_413(tmp_path: Path) -> None:
    big = chart_yaml("c", "1.0.0") + "#" * (5 * 1024 * 1024 + 1)
    archive = write_chart_tgz(tmp_path, big)
    with pytest.raises(ChartArchiveTooLarge) as caught:
        await resolve_lock(archive, versions_for=no_versions)
    assert caught.value.status == 413


@pytest.mark.parametrize(
    "deps",
    [
        "dependencies: {a: 1}\n",
        "dependencies:\n  - null\n",
        "dependencies:\n  - {name: a, version: 1.x, repository: 'https://x', enabled: 'yes'}\n",
        "dependencies:\n  - {name: a, version: 1.x, repository: 'https://x', tags: a}\n",
        "dependencies:\n  - {name: a, version: 1.x, repository: 'https://x', alias: 'a b'}\n",
        "dependencies:\n  - {name: a, version: 1.x, repository: 'ftp://x'}\n",
    ],
)
async def test_malformed_dependency_entries_are_400(tmp_path: Path, deps: str) -> None:
    with pytest.raises((BadChartArchive, InvalidDependency)) as caught:
        await lock_for(tmp_path, deps)
    assert caught.value.status == 400


# --- Go's JSON -------------------------------------------------------------------------------------


def test_go_json_escapes_html_characters_and_line_separators() -> None:
    dep = Dependency(name="a<b>&c", version=">=1 <2", repository="https://x/\u2028é")
    assert go_json(dep) == (
        '{"name":"a\\u003cb\\u003e\\u0026c","version":"\\u003e=1 \\u003c2",'
        '"repository":"https://x/\\u2028é"}'
    )


def test_go_json_omits_empty_fields_but_never_name_or_repository() -> None:
    assert go_json(Dependency(name="")) == '{"name":"","repository":""}'
    full = Dependency(
        name="n",
        version="1",
        repository="r",
        condition="c",
        tags=("t",),
        enabled=True,
        import_values=("x", {"parent": "p", "child": "c"}),
        alias="al",
    )
    assert go_json(full) == (
        '{"name":"n","version":"1","repository":"r","condition":"c","tags":["t"],'
        '"enabled":true,"import-values":["x",{"child":"c","parent":"p"}],"alias":"al"}'
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, "1"),
        (1.5, "1.5"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1.5e-7, "1.5e-7"),
        (0.00001, "0.00001"),
        ("\x01\b\f", '"\\u0001\\b\\f"'),
        (None, "null"),
        ({2: "x"}, '{"2":"x"}'),
    ],
)
def test_go_json_values(value: object, expected: str) -> None:
    assert go_json(value) == expected


async def test_numbers_in_version_fields_read_like_sigs_yaml(tmp_path: Path) -> None:
    # Unquoted `version: 1.10` is the float 1.1 to YAML; Helm's loader stores "1.1".
    url = "https://charts.example.com"
    deps = f"dependencies:\n  - {{name: a, version: 1.10, repository: '{url}'}}\n"
    versions = versions_from({(url, "a"): ["1.1.0", "1.10.0"]})
    lock = await lock_for(tmp_path, deps, versions_for=versions)
    assert lock["dependencies"][0]["version"] == "1.1.0"
    requested = [Dependency("a", "1.1", url)]
    assert lock["digest"] == hash_req(requested, [Dependency("a", "1.1.0", url)])


def test_rfc3339_like_go() -> None:
    assert rfc3339(datetime(2024, 2, 21, 14, 23, 11, tzinfo=UTC)) == "2024-02-21T14:23:11Z"
    tz = timezone(timedelta(hours=-5, minutes=-30))
    assert rfc3339(datetime(2024, 2, 21, 14, 23, 11, 500000, tzinfo=tz)) == (
        "2024-02-21T14:23:11.5-05:30"
    )


@pytest.mark.timeout(900)  # may be the first to need the registry, which apt-get may install
async def test_oci_digest_equals_what_helm_writes(registry: Registry, tmp_path: Path) -> None:
    base = f"{registry.oci}/public/deps"
    creds = {registry.host: ("alice", USERS["alice"])}
    async with OciClient(LOOPBACK, plain_http=True, credentials=creds) as oci:
        for version in ["1.0.0", "1.2.0", "1.10.0", "2.0.0", "1.11.0-rc.1", "1.3.0+build.2"]:
            archive = tmp_path / f"lib-{version}.tgz"
            archive.write_bytes(tgz_bytes({"lib/Chart.yaml": chart_yaml("lib", version)}))
            await oci.push(archive, base)
        deps = (
            "dependencies:\n"
            f"  - {{name: lib, version: '^1.0.0', repository: '{base}', tags: [x]}}\n"
            f"  - {{name: lib, version: '1.2.0', repository: '{base}', alias: pinned}}\n"
            f"  - {{name: lib, version: '~1.3', repository: '{base}', alias: built}}\n"
        )
        chart_dir = tmp_path / "parent"
        (chart_dir / "charts").mkdir(parents=True)
        (chart_dir / "Chart.yaml").write_text(chart_yaml("parent", "1.0.0", deps))
        await asyncio.to_thread(helm_python.dependency_update, chart_dir, plain_http=True)
        helm_lock = yaml.safe_load((chart_dir / "Chart.lock").read_text())
        archive = write_chart_tgz(tmp_path, chart_yaml("parent", "1.0.0", deps))
        ours = yaml.safe_load(
            await resolve_lock(archive, versions_for=no_versions, oci_tags=oci.tags)
        )
    assert ours["dependencies"] == helm_lock["dependencies"]
    assert ours["digest"] == helm_lock["digest"]
    assert [d["version"] for d in ours["dependencies"]] == ["1.10.0", "1.2.0", "1.3.0+build.2"]


async def test_yaml_dates_stay_strings_as_in_helms_loader(tmp_path: Path) -> None:
    url = "https://charts.example.com"
    deps = (
        "dependencies:\n"
        f"  - {{name: a, version: '1.x', repository: '{url}', import-values: [2024-01-02]}}\n"
    )
    lock = await lock_for(tmp_path, deps, versions_for=versions_from({(url, "a"): ["1.0.0"]}))
    requested = [Dependency("a", "1.x", url, import_values=("2024-01-02",))]
    assert lock["digest"] == hash_req(requested, [Dependency("a", "1.0.0", url)])
