"""Repository domain over a real loopback chart repository: state on disk, updates, listings."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiohttp
import pytest
import yaml

from chartsvc import archives
from chartsvc.repos import config, index
from chartsvc.repos.cache import WeightedLRU
from chartsvc.repos.fetch import Fetcher
from chartsvc.repos.model import ChartNotFound, RepositoryNotFound
from chartsvc.repos.service import RepoService
from chartsvc.repos.store import IndexFiles
from common.errors import BadGateway, BadRequest, Conflict
from common.netguard import AddressPolicy, AddressRefused, guarded_session
from tests.chartsvc.conftest import LOOPBACK, ChartRepo, index_document


def make_service(
    tmp_path: Path,
    session: aiohttp.ClientSession,
    policy: AddressPolicy,
    *,
    index_memory: int = 64 * 1024 * 1024,
    max_index_size: int = 10 * 1024 * 1024,
    clock: Callable[[], float] = time.monotonic,
) -> RepoService:
    return RepoService(
        repositories_file=tmp_path / "repositories.yaml",
        files=IndexFiles(tmp_path / "cache"),
        fetcher=Fetcher(session, policy),
        policy=policy,
        max_index_size=max_index_size,
        limits=archives.ArchiveLimits(),
        indexes=WeightedLRU(index_memory),
        repo_file=config.EntriesCache(clock=clock),
    )


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[RepoService]:
    policy = AddressPolicy(allow=LOOPBACK)
    async with guarded_session(policy) as session:
        yield make_service(tmp_path, session, policy)


class Clock:
    """A monotonic clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def clocked(tmp_path: Path) -> AsyncIterator[tuple[RepoService, Clock]]:
    """A service that checks repositories.yaml for changes by a :class:`Clock`."""
    clock = Clock()
    policy = AddressPolicy(allow=LOOPBACK)
    async with guarded_session(policy) as session:
        yield make_service(tmp_path, session, policy, clock=clock), clock


async def test_add_writes_helm_compatible_state(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    repo, created = await service.add("demo-repo", chart_repo.url)
    assert created
    assert repo.url == chart_repo.url
    document = yaml.safe_load((tmp_path / "repositories.yaml").read_text())
    [entry] = document["repositories"]
    assert entry["name"] == "demo-repo"
    assert entry["url"] == chart_repo.url
    assert {"caFile", "certFile", "keyFile", "insecure_skip_tls_verify"} <= set(entry)
    raw = (tmp_path / "cache" / "demo-repo-index.yaml").read_bytes()
    assert yaml.safe_load(raw)["apiVersion"] == "v1"  # the helm CLI reads this file as YAML
    names = (tmp_path / "cache" / "demo-repo-charts.txt").read_text().split()
    assert names == ["demo", "other"]
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.endswith(".tmp")]


async def test_add_is_idempotent_and_refuses_a_changed_url(
    service: RepoService, chart_repo: ChartRepo
) -> None:
    await service.add("r", chart_repo.url)
    _, created = await service.add("r", chart_repo.url + "/")
    assert not created
    with pytest.raises(Conflict):
        await service.add("r", chart_repo.url + "/elsewhere")


@pytest.mark.parametrize("name", [".", "..", "a/b", "", "x y", "../etc"])
async def test_unsafe_names_are_refused(service: RepoService, name: str) -> None:
    with pytest.raises(BadRequest):
        await service.add(name, "https://charts.example.com")


async def test_loopback_url_is_refused_without_the_allow_list(tmp_path: Path) -> None:
    policy = AddressPolicy()
    async with guarded_session(policy) as session:
        strict = make_service(tmp_path, session, policy)
        with pytest.raises(AddressRefused) as refused:
            await strict.add("r", "http://127.0.0.1:1/charts")
        assert refused.value.address_class == "loopback"
        with pytest.raises(AddressRefused) as refused:
            await strict.add("r", "http://169.254.169.254/latest")
        assert refused.value.address_class == "metadata"
    assert not (tmp_path / "repositories.yaml").exists()


async def test_failed_add_writes_nothing(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    chart_repo.status = 500
    with pytest.raises(BadGateway):
        await service.add("r", chart_repo.url)
    assert not (tmp_path / "repositories.yaml").exists()
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())


async def test_listings_are_sorted_and_skip_invalid_entries(
    service: RepoService, chart_repo: ChartRepo
) -> None:
    await service.add("r", chart_repo.url)
    charts = await service.charts("r")
    assert [(c.name, c.chart_version) for c in charts] == [
        ("r/demo", "0.2.0"),
        ("r/other", "2.3.4"),
    ]
    versions = await service.versions("r", "demo")
    assert [v.chart_version for v in versions] == ["1.0.0-rc.1", "0.2.0", "0.1.0"]
    assert versions[0].name == "demo"
    assert versions[1].description == "demo chart 0.2.0"
    with pytest.raises(ChartNotFound):
        await service.versions("r", "missing")
    with pytest.raises(RepositoryNotFound):
        await service.charts("nope")


async def test_update_is_conditional_and_atomic(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    await service.add("r", chart_repo.url)
    result = await service.update("r")
    assert not result.updated  # 304: the server saw our ETag
    assert chart_repo.requests[-1] == ("/index.yaml", '"v1"')
    raw_before = (tmp_path / "cache" / "r-index.yaml").read_bytes()
    chart_repo.index = b"apiVersion: [this is : not an index"
    chart_repo.etag = '"broken"'
    with pytest.raises(BadGateway):
        await service.update("r")
    assert (tmp_path / "cache" / "r-index.yaml").read_bytes() == raw_before
    assert [c.name for c in await service.charts("r")] == ["r/demo", "r/other"]


async def test_update_reads_yaml_indexes_and_gzip(
    service: RepoService, chart_repo: ChartRepo, chart_archives: dict[str, Path]
) -> None:
    await service.add("r", chart_repo.url)
    only_other = {k: v for k, v in chart_archives.items() if k.startswith("other")}
    chart_repo.set_index(index_document(only_other), as_yaml=True, etag='"v3"')
    result = await service.update("r")
    assert result.updated
    assert result.charts == 1
    assert result.skipped == 1
    assert [v.chart_version for v in await service.versions("r", "other")] == ["2.3.4"]


async def test_restart_reads_the_prepared_form_without_reparsing(
    chart_repo: ChartRepo, tmp_path: Path
) -> None:
    policy = AddressPolicy(allow=LOOPBACK)
    async with guarded_session(policy) as session:
        await make_service(tmp_path, session, policy).add("r", chart_repo.url)
    prepared = tmp_path / "cache" / "r-index.prepared"
    stamp = prepared.stat().st_mtime_ns
    async with guarded_session(policy) as session:
        again = make_service(tmp_path, session, policy)
        assert len(await again.charts("r")) == 2
    assert prepared.stat().st_mtime_ns == stamp
    # A prepared file that does not match the raw index is rebuilt, never served.
    prepared.write_bytes(b'{"format": 3, "source": {"size": 1}, "skipped": 0, "versions": 0}\n')
    async with guarded_session(policy) as session:
        assert len(await make_service(tmp_path, session, policy).charts("r")) == 2


async def test_remove_deletes_entry_and_cache(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    await service.add("r", chart_repo.url)
    await service.remove("r")
    assert await service.configured() == ()
    assert list((tmp_path / "cache").iterdir()) == []
    with pytest.raises(RepositoryNotFound):
        await service.remove("r")


async def test_chart_archive_latest_exact_and_constraint(
    service: RepoService, chart_repo: ChartRepo, chart_archives: dict[str, Path]
) -> None:
    await service.add("r", chart_repo.url)
    data, name = await service.chart_archive("r", "demo", None)
    assert name == "demo-0.2.0.tgz"  # latest stable, not the release candidate
    assert data == chart_archives["demo-0.2.0"].read_bytes()
    _, name = await service.chart_archive("r", "demo", "1.0.0-rc.1")
    assert name == "demo-1.0.0-rc.1.tgz"
    _, name = await service.chart_archive("r", "demo", "~0.1")
    assert name == "demo-0.1.0.tgz"
    with pytest.raises(ChartNotFound):
        await service.chart_archive("r", "demo", "9.9.9")


async def test_versions_for_dependency_resolution(
    service: RepoService, chart_repo: ChartRepo
) -> None:
    await service.add("r", chart_repo.url)
    assert await service.versions_for(chart_repo.url + "/", "demo") == [
        "1.0.0-rc.1",
        "0.2.0",
        "0.1.0",
    ]
    assert await service.versions_for("@r", "other") == ["2.3.4"]
    assert await service.versions_for(chart_repo.url, "missing") == []


def test_prepared_index_skips_what_helm_skips() -> None:
    raw = (
        b'{"apiVersion":"v1","entries":{"a":[{"name":"a","version":"1.0.0","urls":["a.tgz"]},'
        b'{"name":"a","version":"v2","urls":["b.tgz"]},null,{"name":"../x","version":"1.0.0",'
        b'"urls":[]},{"name":"a","version":"latest","urls":[]}]}}'
    )
    prepared = index.parse(raw, source={})
    assert [e[index.VERSION] for e in prepared.entries("a") or []] == ["v2", "1.0.0"]
    assert prepared.skipped == 3
    with pytest.raises(BadGateway):
        index.parse(b'{"entries": {}}', source={})


@pytest.mark.parametrize(
    "versions",
    [
        [
            "1.0.0",
            "1.0.0-rc.1",
            "1.0.0-rc.10",
            "1.0.0-rc.2",
            "1.0.0-alpha",
            "1.0.0-1",
            "v2",
            "1.10",
        ],
        ["0.0.1", "1", "1.2", "1.2.3+build", "1.2.3-0a", "1.2.3-a.b.c", "1.2.3-a.b", "10.0.0"],
    ],
)
def test_index_sort_key_agrees_with_semver(versions: list[str]) -> None:
    from chartsvc import semver

    for text in [*versions, "01.2.3", "1.2.3-01", "x1", "1.2.3.4", "", "99999999999999999999999"]:
        assert (index.sort_key(text) is None) == (semver.parse_version(text) is None), text
    valid = [v for v in versions if semver.parse_version(v)]
    by_key = sorted(valid, key=lambda v: index.sort_key(v) or (), reverse=True)
    assert by_key == semver.sort_newest_first(valid)


async def test_credentials_from_repositories_yaml_reach_only_the_repository(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    chart_repo.basic_auth = "ci:hunter2"
    with pytest.raises(BadGateway, match="HTTP 401"):
        await service.add("private", chart_repo.url)
    entry = {**config.new_entry("private", chart_repo.url), "username": "ci", "password": "hunter2"}
    config.write_entries(tmp_path / "repositories.yaml", [entry])  # as `helm repo add --username`
    assert (await service.update("private")).updated
    data, _ = await service.chart_archive("private", "demo", None)
    assert data[:2] == b"\x1f\x8b"
    [repo] = await service.configured()
    assert "hunter2" not in repr(repo)
    assert repo.credentials_for("https://elsewhere.example/x.tgz") is None


def test_yaml_index_keeps_versions_as_written() -> None:
    raw = b"""apiVersion: v1
entries:
  a:
  - name: a
    version: 1.10.0
    appVersion: 1.10
    created: 2024-01-01T10:00:00Z
    deprecated: true
    urls: [a-1.10.0.tgz]
  - {name: a, version: 1.9.0, urls: [a-1.9.0.tgz]}
  - {name: a, version: [not, a, version], urls: []}
"""
    prepared = index.parse(raw, source={})
    first, second = prepared.entries("a") or []
    assert first[index.APP_VERSION] == "1.10"  # not the float 1.1
    assert first[index.CREATED] == "2024-01-01T10:00:00Z"
    assert first[index.DEPRECATED] is True
    assert second[index.VERSION] == "1.9.0"
    assert second[index.DEPRECATED] is False
    assert prepared.skipped == 1


async def test_writes_wait_for_helms_lock_file(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    import asyncio
    import fcntl

    tmp_path.joinpath("repositories.yaml").write_text("")  # an empty file is an empty list
    with (tmp_path / "repositories.lock").open("a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as `helm repo add` holds it
        adding = asyncio.ensure_future(service.add("r", chart_repo.url))
        await asyncio.sleep(0.3)
        assert not adding.done()
        fcntl.flock(lock, fcntl.LOCK_UN)
        await asyncio.wait_for(adding, 10)
    assert [r.name for r in await service.configured()] == ["r"]


async def test_index_served_as_a_gzip_file_and_size_cap(
    chart_repo: ChartRepo, chart_archives: dict[str, Path], tmp_path: Path
) -> None:
    import gzip
    import json

    policy = AddressPolicy(allow=LOOPBACK)
    chart_repo.index = gzip.compress(json.dumps(index_document(chart_archives)).encode())
    async with guarded_session(policy) as session:
        service = make_service(tmp_path, session, policy)
        assert (await service.add("gz", chart_repo.url))[1]  # no Content-Encoding, gzip magic
        assert len(await service.versions("gz", "demo")) == 3
        capped = make_service(tmp_path, session, policy, max_index_size=1000)
        chart_repo.etag = '"bigger"'
        with pytest.raises(BadGateway, match="limit of 1000 bytes"):
            await capped.update("gz")
        assert len(await capped.versions("gz", "demo")) == 3  # the old index still serves


async def test_unconfigured_dependency_repository_is_fetched_and_refreshed(
    service: RepoService, chart_repo: ChartRepo, chart_archives: dict[str, Path]
) -> None:
    assert await service.versions_for(chart_repo.url, "other") == ["2.3.4"]
    fetched = len(chart_repo.requests)
    assert await service.versions_for(chart_repo.url, "other") == ["2.3.4"]
    assert len(chart_repo.requests) == fetched  # served from memory
    chart_repo.set_index(index_document({"x": chart_archives["demo-0.1.0"]}))
    service.adhoc_ttl_s = 0
    assert await service.versions_for(chart_repo.url, "demo") == ["0.1.0"]


async def test_update_over_a_helm_cli_cache_does_not_parse_the_old_file(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    config.write_entries(tmp_path / "repositories.yaml", [config.new_entry("r", chart_repo.url)])
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "r-index.yaml").write_text("left: [by an old helm, broken")
    result = await service.update("r")
    assert result.updated
    assert result.charts == 2


def test_weighted_lru_bounds_memory() -> None:
    lru: WeightedLRU[str, str] = WeightedLRU(10)
    lru.put("a", "A", 4)
    lru.put("b", "B", 4)
    assert lru.get("a") == "A"  # a is now the most recent
    lru.put("c", "C", 4)
    assert lru.get("b") is None
    assert lru.weight == 8
    lru.put("huge", "H", 11)  # larger than the whole budget: never kept
    assert lru.get("huge") is None
    assert lru.get("a") == "A"


async def test_evicted_indexes_are_read_back_from_disk(
    chart_repo: ChartRepo, tmp_path: Path
) -> None:
    policy = AddressPolicy(allow=LOOPBACK)
    async with guarded_session(policy) as session:
        # Nothing fits in one byte: every listing reads the prepared file again.
        tiny = make_service(tmp_path, session, policy, index_memory=1)
        await tiny.add("r", chart_repo.url)
        assert [c.name for c in await tiny.charts("r")] == ["r/demo", "r/other"]


async def test_an_oci_registry_is_not_a_chart_repository(service: RepoService) -> None:
    with pytest.raises(BadRequest, match="use oci:// references directly") as refused:
        await service.add("o", "oci://registry.example.com/charts")
    assert refused.value.extra["errors"][0]["field"] == "url"


async def test_repository_list_follows_every_rewrite(
    clocked: tuple[RepoService, Clock], tmp_path: Path
) -> None:
    service, clock = clocked
    path = tmp_path / "repositories.yaml"
    for name in ("aaa", "bbb", "ccc"):  # same size, same second: only the inode tells them apart
        config.write_entries(path, [config.new_entry(name, "https://charts.example.com")])
        clock.now += config.RECHECK_S
        assert [r.name for r in await service.configured()] == [name]


async def test_an_edit_made_outside_is_listed_within_the_recheck_interval(
    clocked: tuple[RepoService, Clock], tmp_path: Path
) -> None:
    service, clock = clocked
    path = tmp_path / "repositories.yaml"
    config.write_entries(path, [config.new_entry("aaa", "https://charts.example.com")])
    listed = await service.configured()
    config.write_entries(path, [config.new_entry("bbb", "https://charts.example.com")])
    clock.now += config.RECHECK_S * 0.9
    assert await service.configured() is listed  # the file was not looked at again yet
    clock.now += config.RECHECK_S * 0.1
    assert [r.name for r in await service.configured()] == ["bbb"]


async def test_a_repository_the_helm_cli_just_added_is_found_by_name(
    clocked: tuple[RepoService, Clock], tmp_path: Path
) -> None:
    service, _ = clocked
    assert await service.configured() == ()
    entry = config.new_entry("new", "https://charts.example.com")
    config.write_entries(tmp_path / "repositories.yaml", [entry])  # as `helm repo add` would
    assert (await service.get("new")).url == "https://charts.example.com"
    assert [r.name for r in await service.configured()] == ["new"]
    with pytest.raises(RepositoryNotFound):
        await service.get("other")


@pytest.mark.parametrize(
    ("repo", "chart", "expected"),
    [
        ("https://x.io/charts", "a-1.tgz", "https://x.io/charts/a-1.tgz"),
        ("https://x.io/charts/", "sub/a-1.tgz", "https://x.io/charts/sub/a-1.tgz"),
        ("https://x.io/charts?token=abc", "a-1.tgz", "https://x.io/charts/a-1.tgz?token=abc"),
        ("https://x.io/charts", "/abs/a-1.tgz", "https://x.io/abs/a-1.tgz"),
        ("https://x.io/charts", "https://cdn.io/a.tgz?sig=1", "https://cdn.io/a.tgz?sig=1"),
    ],
)
def test_chart_urls_resolve_like_helm(repo: str, chart: str, expected: str) -> None:
    from chartsvc.repos.fetch import resolve_chart_url

    assert resolve_chart_url(repo, chart) == expected


async def test_archive_not_matching_the_index_digest_is_refused(
    service: RepoService, chart_repo: ChartRepo, chart_archives: dict[str, Path]
) -> None:
    document = index_document(chart_archives)
    for entry in document["entries"]["other"]:
        entry["digest"] = "0" * 64
    chart_repo.set_index(document)
    await service.add("r", chart_repo.url)
    with pytest.raises(BadGateway, match="does not match its digest"):
        await service.chart_archive("r", "other", None)


async def test_adds_of_different_repositories_do_not_wait_for_each_other(
    service: RepoService, chart_repo: ChartRepo
) -> None:
    import asyncio

    chart_repo.gates["a"] = asyncio.Event()
    adding_a = asyncio.ensure_future(service.add("a", chart_repo.url + "/?hold=a"))
    await asyncio.sleep(0.1)
    await asyncio.wait_for(service.add("b", chart_repo.url), 5)  # not stuck behind a
    assert not adding_a.done()
    chart_repo.gates["a"].set()
    await asyncio.wait_for(adding_a, 5)
    assert sorted(r.name for r in await service.configured()) == ["a", "b"]


async def test_an_update_queued_behind_a_removal_leaves_no_files(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    import asyncio

    await service.add("r", chart_repo.url)
    chart_repo.etag = '"newer"'
    removing = asyncio.ensure_future(service.remove("r"))
    updating = asyncio.ensure_future(service.update("r"))
    await removing
    with pytest.raises(RepositoryNotFound):
        await updating
    assert list((tmp_path / "cache").iterdir()) == []


async def test_unwritable_state_is_a_clear_error_and_nothing_is_recorded(
    chart_repo: ChartRepo, tmp_path: Path
) -> None:
    from chartsvc.repos.files import StorageFailed

    (tmp_path / "cache").write_text("a file where the cache directory should be")
    policy = AddressPolicy(allow=LOOPBACK)
    async with guarded_session(policy) as session:
        service = make_service(tmp_path, session, policy)
        with pytest.raises(StorageFailed, match="could not write r-index"):
            await service.add("r", chart_repo.url)
        assert await service.configured() == ()


async def test_a_prepared_file_cut_short_is_rebuilt(chart_repo: ChartRepo, tmp_path: Path) -> None:
    policy = AddressPolicy(allow=LOOPBACK)
    async with guarded_session(policy) as session:
        await make_service(tmp_path, session, policy).add("r", chart_repo.url)
    prepared = tmp_path / "cache" / "r-index.prepared"
    lines = prepared.read_bytes().splitlines(keepends=True)
    prepared.write_bytes(b"".join(lines[:-1]))  # lost its last chart, on a line boundary
    async with guarded_session(policy) as session:
        assert len(await make_service(tmp_path, session, policy).charts("r")) == 2


async def test_a_redirect_to_the_metadata_service_is_refused(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    chart_repo.redirect_to = "http://169.254.169.254/latest/meta-data/index.yaml"
    with pytest.raises(AddressRefused) as refused:
        await service.add("r", chart_repo.url)
    assert refused.value.address_class == "metadata"
    assert not (tmp_path / "repositories.yaml").exists()


async def test_updates_queued_behind_a_running_one_share_its_download(
    service: RepoService, chart_repo: ChartRepo
) -> None:
    import asyncio

    await service.add("r", chart_repo.url)
    chart_repo.etag = '"changed"'
    before = len(chart_repo.requests)
    results = await asyncio.gather(*(service.update("r") for _ in range(5)))
    assert len(chart_repo.requests) - before == 1
    assert all(r.updated for r in results)
    assert (await service.update("r")).updated is False  # a later request asks again: 304


async def test_credentials_in_a_url_are_stored_apart_and_never_listed(
    service: RepoService, chart_repo: ChartRepo, tmp_path: Path
) -> None:
    chart_repo.basic_auth = "ci:hunter2"
    with_credentials = chart_repo.url.replace("http://", "http://ci:hunter2@")
    repo, created = await service.add("private", with_credentials)
    assert created
    assert repo.url == chart_repo.url
    assert [r.url for r in await service.configured()] == [chart_repo.url]
    [entry] = yaml.safe_load((tmp_path / "repositories.yaml").read_text())["repositories"]
    assert (entry["url"], entry["username"], entry["password"]) == (chart_repo.url, "ci", "hunter2")
    data, _ = await service.chart_archive("private", "demo", None)  # the credentials still work
    assert data[:2] == b"\x1f\x8b"
