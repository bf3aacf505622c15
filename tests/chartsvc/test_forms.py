"""Multipart bodies as clients really send them (curl's layout, quoted names, odd boundaries)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.guards import assert_problem

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
    client: Any, archive: bytes, boundary: str
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


async def test_token_name_and_escaped_quotes(client: Any, archive: bytes) -> None:
    data = body("xyz", [('form-data; filename="a\\"b.tgz"; name=chart', archive)])
    resp = await client.post(
        URL, data=data, headers={"Content-Type": "multipart/form-data; boundary=xyz"}
    )
    assert resp.status == 200, await resp.text()


async def test_malformed_bodies_are_400_and_other_types_415(client: Any, archive: bytes) -> None:
    headers = {"Content-Type": "multipart/form-data; boundary=xyz"}
    cases = [
        body("xyz", [('form-data; name="chart"', archive)], close=False),
        body("xyz", [("form-data", archive)]),
        b"no parts at all",
    ]
    for data in cases:
        await assert_problem(await client.post(URL, data=data, headers=headers), 400)
    resp = await client.post(URL, data=b"x", headers={"Content-Type": "multipart/form-data"})
    await assert_problem(resp, 400)
    resp = await client.post(URL, json={"chart": "x"})
    await assert_problem(resp, 415, code="unsupported-media-type")


async def test_missing_archive_part_is_named(client: Any) -> None:
    data = body("xyz", [('form-data; name="request"', b"{}")])
    resp = await client.post(
        URL, data=data, headers={"Content-Type": "multipart/form-data; boundary=xyz"}
    )
    problem = await assert_problem(resp, 400)
    assert problem["errors"] == [{"in": "body", "field": "chart", "message": "part is required"}]


async def test_a_misspelt_option_or_part_is_named_not_ignored(client: Any, archive: bytes) -> None:
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
            "message": "is not a known part; the form takes chart, request",
        }
    ]


async def test_oversized_text_part_is_413(client: Any, archive: bytes) -> None:
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
    await assert_problem(resp, 413)


async def test_chunked_upload_over_the_cap_is_413(make_client: Any) -> None:
    small = await make_client("chartsvc.rest.max-upload-size=1000")

    async def chunks() -> Any:
        yield b'--xyz\r\nContent-Disposition: form-data; name="chart"\r\n\r\n'
        for _ in range(20):
            yield b"x" * 100_000
        yield b"\r\n--xyz--\r\n"

    resp = await small.post(
        URL, data=chunks(), headers={"Content-Type": "multipart/form-data; boundary=xyz"}
    )
    await assert_problem(resp, 413)


async def test_body_without_preamble_and_part_without_headers(client: Any, archive: bytes) -> None:
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


@pytest.mark.parametrize("seed", range(40))
async def test_bodies_written_by_aiohttp_split_as_written(seed: int) -> None:
    import random

    from aiohttp import FormData

    from chartsvc.http.forms import split_form

    rng = random.Random(seed)
    form = FormData(default_to_multipart=True)
    expected: dict[str, bytes] = {}
    for i in range(rng.randint(1, 4)):
        name = rng.choice(["chart", "request", "remote", "x y", "ü", 'a"b', "名前"]) + str(i)
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 2000)))
        # aiohttp writes non-ASCII names (RFC 5987 name*=) for file parts only
        if rng.random() < 0.5 or not name.isascii():
            form.add_field(name, data, filename=rng.choice(["a.tgz", "ä.tgz", "x;y.tgz"]))
        else:
            form.add_field(name, data.decode("latin-1"))
            data = data.decode("latin-1").encode("utf-8")
        expected[name] = data
    writer = form()

    class Sink:
        def __init__(self) -> None:
            self.body = bytearray()

        async def write(self, chunk: bytes) -> None:
            self.body += chunk

    sink = Sink()
    await writer.write(sink)  # type: ignore[arg-type]
    assert split_form(bytes(sink.body), writer.content_type) == expected
