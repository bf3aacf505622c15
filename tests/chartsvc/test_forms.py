"""Multipart bodies as clients really send them (curl's layout, quoted names, odd boundaries)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.chartsvc.conftest import MakeClient
from tests.guards import assert_problem
from tests.typing_support import Client

URL = "/api/v1/charts/template/upload"


def body(boundary: str, parts: list[tuple[str, bytes]], *, close: bool = True) -> bytes:
    out = b"preamble to ignore\r\n"
    for disposition, content in parts:
        out += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n".encode()
        out += b"Content-Type: application/octet-stream\r\n\r\n" + content + b"\r\n"
    return out + (f"--{boundary}--\r\nepilogue".encode() if close else b"")


@pytest.fixture
def archive(chart_archives: dict[str, Path]) -> bytes:
    return chart_archives["demo-0.1.0"].read_bytes()


@pytest.mark.parametrize("boundary", ["------------------------d74496d66958873e", "a'b()+_,-./:=?"])
async def test_curl_style_body_with_quoted_boundary(
    client: Client, archive: bytes, boundary: str
) -> None:
    data = body(
        boundary,
        [
            ('form-data; name="chart"; filename="demo-0.1.0.tgz"', archive),
            ('form-data; name="request"', b'{"releaseName": "curl"}'),
        ],
    )
    headers = {"Content-Type": f'multipart/form-data; boundary="{boundary}"'}
    resp = await client.post(URL, data=data, headers=headers)
    assert resp.status == 200, await resp.text()
    assert "name: curl-demo" in await resp.text()


async def test_token_name_and_escaped_quotes(client: Client, archive: bytes) -> None:
    data = body("xyz", [('form-data; filename="a\\"b.tgz"; name=chart', archive)])
    resp = await client.post(
        URL, data=data, headers={"Content-Type": "multipart/form-data; boundary=xyz"}
    )
    assert resp.status == 200, await resp.text()


async def test_malformed_bodies_are_400_and_other_types_415(client: Client, archive: bytes) -> None:
    headers = {"Content-Type": "multipart/form-data; boundary=xyz"}
    cases = [
        (
            body("xyz", [('form-data; name="chart"', archive)], close=False),
            "malformed multipart body: the body ends before its closing boundary",
        ),
        (body("xyz", [("form-data", archive)]), "every multipart part needs a name"),
        (b"no parts at all", "malformed multipart body: Could not find starting boundary"),
    ]
    for data, why in cases:
        problem = await assert_problem(await client.post(URL, data=data, headers=headers), 400)
        assert problem["detail"].startswith(why), problem
    resp = await client.post(URL, data=b"x", headers={"Content-Type": "multipart/form-data"})
    problem = await assert_problem(resp, 400)
    assert "boundary missed" in problem["detail"]
    resp = await client.post(URL, json={"chart": "x"})
    await assert_problem(resp, 415, code="unsupported-media-type")
    resp = await client.post(
        URL, data=b"x", headers={"Content-Type": "multipart/mixed; boundary=x"}
    )
    await assert_problem(resp, 415, code="unsupported-media-type")


async def test_missing_archive_part_is_named(client: Client) -> None:
    data = body("xyz", [('form-data; name="request"', b"{}")])
    resp = await client.post(
        URL, data=data, headers={"Content-Type": "multipart/form-data; boundary=xyz"}
    )
    problem = await assert_problem(resp, 400)
    assert problem["errors"] == [{"in": "body", "field": "chart", "message": "part is required"}]


async def test_a_misspelt_option_or_part_is_named_not_ignored(
    client: Client, archive: bytes
) -> None:
    headers = {"Content-Type": "multipart/form-data; boundary=xyz"}
    request = b'{"releaseName": "r", "namespace": 7, "valuse": {"a": 1}}'
    data = body(
        "xyz", [('form-data; name="chart"', archive), ('form-data; name="request"', request)]
    )
    problem = await assert_problem(await client.post(URL, data=data, headers=headers), 400)
    assert problem["errors"] == [
        {"in": "body", "field": "request.valuse", "message": "is not a known field"},
        {"in": "body", "field": "request.namespace", "message": "must be of type string or null"},
    ]
    data = body("xyz", [('form-data; name="chart"', archive), ('form-data; name="requset"', b"{}")])
    problem = await assert_problem(await client.post(URL, data=data, headers=headers), 400)
    assert problem["errors"] == [
        {
            "in": "body",
            "field": "requset",
            "message": "is not a known part; the form takes chart, provenance, request",
        }
    ]


async def test_oversized_text_part_is_413(client: Client, archive: bytes) -> None:
    data = body(
        "xyz",
        [
            ('form-data; name="chart"', archive),
            ('form-data; name="request"', b"x" * (1024 * 1024 + 1)),
        ],
    )
    resp = await client.post(
        URL, data=data, headers={"Content-Type": "multipart/form-data; boundary=xyz"}
    )
    problem = await assert_problem(resp, 413)
    assert problem["detail"] == "part 'request' is larger than the limit of 1048576 bytes"


async def test_chunked_upload_over_the_cap_is_413(make_client: MakeClient) -> None:
    small = await make_client("chartsvc.rest.max-upload-size=1000")

    async def chunks() -> Any:
        yield b'--xyz\r\nContent-Disposition: form-data; name="chart"\r\n\r\n'
        for _ in range(20):
            yield b"x" * 100_000
        yield b"\r\n--xyz--\r\n"

    resp = await small.post(
        URL, data=chunks(), headers={"Content-Type": "multipart/form-data; boundary=xyz"}
    )
    problem = await assert_problem(resp, 413)
    assert problem["detail"] == "part 'chart' is larger than the limit of 1000 bytes"


async def test_body_without_preamble_and_part_without_headers(
    client: Client, archive: bytes
) -> None:
    data = (
        b'--xyz\r\nContent-Disposition: form-data; name="chart"\r\n\r\n'
        + archive
        + b"\r\n--xyz--\r\n"
    )
    headers = {"Content-Type": "multipart/form-data; boundary=xyz"}
    resp = await client.post(URL, data=data, headers=headers)
    assert resp.status == 200, await resp.text()
    nameless = b"--xyz\r\n\r\nbody\r\n--xyz--\r\n"
    await assert_problem(await client.post(URL, data=nameless, headers=headers), 400)
