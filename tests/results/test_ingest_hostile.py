"""Hostile and broken uploads: each refused with a 4xx, nothing stored, the server still serving."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import FormData

from results.app import create_app
from results.settings import Settings
from tests.conftest import ApiClient
from tests.guards import assert_problem
from tests.results.support import (
    RUN_TABLES,
    coverage_for,
    db_path,
    form,
    ingest_ok,
    junit_xml,
    reference,
    row_counts,
    settings_for,
    upload,
)
from tests.typing_support import Client

MiB = 1024 * 1024
LIMITS = (
    "results.ingest.max-report-bytes=1048576",
    "results.ingest.max-total-bytes=4194304",
    "results.ingest.max-part-bytes=2097152",
    "results.ingest.max-elements=5000",
)

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite name="s"><testcase classname="c" name="&xxe;"/></testsuite>"""
XXE_PARAMETER = b"""<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY % ext SYSTEM "http://127.0.0.1:1/evil.dtd"> %ext;]>
<testsuite name="s"><testcase classname="c" name="n"/></testsuite>"""
LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">]>
<testsuite name="s"><testcase classname="c" name="&lol2;"/></testsuite>"""
MALFORMED = b'<testsuite name="s"><testcase name="a"></testsuite>'
DEEP = b"<testsuites>" + b"<testsuite>" * 200 + b"</testsuite>" * 200 + b"</testsuites>"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return settings_for(tmp_path, *LIMITS)


@pytest.fixture
async def client(api_client: ApiClient, settings: Settings) -> Client:
    return await api_client(create_app(settings))


async def assert_nothing_stored_and_healthy(client: Client, settings: Settings) -> None:
    assert row_counts(db_path(settings)) == dict.fromkeys(RUN_TABLES, 0)
    health = await client.get("/actuator/health")
    assert health.status == 200
    body = await ingest_ok(client, project="after", junit=[junit_xml([("ok", "pass")])])
    assert body["tests"] == 1


@pytest.mark.parametrize(
    ("content", "part"),
    [(XXE, "junit"), (XXE_PARAMETER, "junit"), (LAUGHS, "junit"), (LAUGHS, "jacoco")],
    ids=["xxe", "xxe-parameter-entity", "billion-laughs", "billion-laughs-coverage"],
)
async def test_entity_tricks_are_refused(
    client: Client, settings: Settings, content: bytes, part: str
) -> None:
    resp = await upload(client, **{part: [("evil.xml", content)]})
    body = await assert_problem(resp, 400, code="invalid-report")
    assert body["part"] == part
    assert body["filename"] == "evil.xml"
    assert "root:" not in body["detail"]  # nothing of /etc/passwd
    await assert_nothing_stored_and_healthy(client, settings)


async def test_a_gzip_bomb_is_refused_by_its_decompressed_size(
    client: Client, settings: Settings
) -> None:
    bomb = gzip.compress(b"<testsuite>" + b" " * (64 * MiB) + b"</testsuite>", 9)
    assert len(bomb) < 100 * 1024
    resp = await upload(client, junit=[("bomb.xml.gz", bomb)])
    body = await assert_problem(resp, 413, code="report-too-large")
    assert "decompression" in body["detail"]
    await assert_nothing_stored_and_healthy(client, settings)


async def test_ten_thousand_parts_are_refused(client: Client, settings: Settings) -> None:
    data = form(junit=[junit_xml([("a", "pass")])])
    for n in range(10_000):
        data.add_field("junit", b"<testsuite/>", filename=f"{n}.xml", content_type="text/xml")
    body = await assert_problem(await client.post("/api/v1/ingest", data=data), 413)
    assert "too many parts" in body["detail"]
    await assert_nothing_stored_and_healthy(client, settings)


async def test_elements_are_budgeted_over_the_whole_request(
    client: Client, settings: Settings
) -> None:
    cases = [(f"t{n}", "pass") for n in range(3000)]
    one = junit_xml(cases, suite="one")
    assert (await upload(client, junit=[one])).status == 201  # 3001 elements: within 5000
    resp = await upload(client, project="two", junit=[one, junit_xml(cases, suite="two")])
    body = await assert_problem(resp, 413, code="report-too-large")
    assert body["filename"] == "two.xml"
    runs = row_counts(db_path(settings))["runs"]
    assert runs == 1


async def test_a_part_over_its_limit_is_refused(client: Client, settings: Settings) -> None:
    big = b"<testsuite>" + b" " * (3 * MiB) + b"</testsuite>"
    resp = await upload(client, junit=[("big.xml", big)])
    await assert_problem(resp, 413, code="payload-too-large")
    await assert_nothing_stored_and_healthy(client, settings)


async def test_a_streamed_body_over_the_total_limit_is_refused(
    client: Client, settings: Settings
) -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"--b\r\nContent-Disposition: form-data; name=project\r\n\r\ndemo\r\n"
        for n in range(8):
            yield (
                f'--b\r\nContent-Disposition: form-data; name=junit; filename="{n}.xml"\r\n'
                "Content-Type: text/xml\r\n\r\n"
            ).encode()
            yield b"<testsuite>" + b" " * MiB + b"</testsuite>\r\n"
        yield b"--b--\r\n"

    headers = {"Content-Type": "multipart/form-data; boundary=b"}
    resp = await client.post("/api/v1/ingest", data=body(), headers=headers)
    body_ = await assert_problem(resp, 413)
    assert "all parts together" in body_["detail"]
    await assert_nothing_stored_and_healthy(client, settings)


async def test_a_declared_1_gb_body_is_refused_before_it_is_read(
    client: Client, settings: Settings
) -> None:
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(
            b"POST /api/v1/ingest HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: multipart/form-data; boundary=b\r\n"
            b"Content-Length: 1073741824\r\n\r\n--b\r\n"
        )
        await writer.drain()
        async with asyncio.timeout(10):
            status_line = await reader.readline()
    finally:
        writer.close()
        await writer.wait_closed()
    assert status_line.split()[1] == b"413"
    await assert_nothing_stored_and_healthy(client, settings)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (MALFORMED, "malformed-xml"),
        (b"", "malformed-xml"),
        (b"\x1f\x8bnot really gzip", "bad-gzip"),
        (b"<html><body>404</body></html>", "unknown-format"),
        (DEEP, None),
    ],
    ids=["mismatched-tag", "empty", "corrupt-gzip", "not-junit", "too-deep"],
)
async def test_broken_reports_are_refused(
    client: Client, settings: Settings, content: bytes, reason: str | None
) -> None:
    resp = await upload(client, junit=[("broken.xml", content)])
    body = await assert_problem(resp, 400, code="invalid-report")
    if reason is not None:
        assert body["reason"] == reason
    await assert_nothing_stored_and_healthy(client, settings)


async def test_a_bad_second_file_leaves_nothing_of_the_first(
    client: Client, settings: Settings
) -> None:
    resp = await upload(
        client,
        junit=[reference("junit-gotestsum-golden.xml"), ("second.xml", MALFORMED)],
        jacoco=[coverage_for(50)],
    )
    body = await assert_problem(resp, 400, code="invalid-report")
    assert body["filename"] == "second.xml"
    assert "line" in body
    await assert_nothing_stored_and_healthy(client, settings)


async def test_a_bad_shard_leaves_the_joined_run_as_it_was(
    client: Client, settings: Settings
) -> None:
    first = await ingest_ok(client, runKey="k", junit=[junit_xml([("a", "pass")])])
    before = row_counts(db_path(settings))
    resp = await upload(
        client, runKey="k", junit=[junit_xml([("b", "fail")]), ("bad.xml", MALFORMED)]
    )
    await assert_problem(resp, 400)
    assert row_counts(db_path(settings)) == before
    again = await ingest_ok(client, runKey="k", jacoco=[coverage_for(10)])
    assert (again["runId"], again["tests"], again["failures"]) == (first["runId"], 1, 0)


async def test_coverage_in_the_junit_part_is_refused(client: Client, settings: Settings) -> None:
    resp = await upload(client, junit=[reference("jacoco-default-package.xml")])
    body = await assert_problem(resp, 400, code="invalid-report")
    assert body["reason"] == "unknown-format"
    await assert_nothing_stored_and_healthy(client, settings)


async def test_a_multipart_body_cut_short_is_a_bad_request(
    client: Client, settings: Settings
) -> None:
    data = FormData(default_to_multipart=True)
    data.add_field("project", "p")
    headers = {"Content-Type": "multipart/form-data; boundary=zz"}
    resp = await client.post("/api/v1/ingest", data=b"--zz\r\nContent-Disp", headers=headers)
    assert 400 <= resp.status < 500
    await assert_nothing_stored_and_healthy(client, settings)
