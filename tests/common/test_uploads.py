"""The shared multipart reader on a real aiohttp server: parts as written, and malformed bodies.

Both ways of keeping parts (``read_parts`` in memory, ``read_multipart`` spooled to files) go through
one reader, so the malformed cases run against both.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest
from aiohttp import FormData, web
from pytest_aiohttp import AiohttpClient

from common.uploads import UploadLimits, read_multipart, read_parts
from tests.common.sample import problem_middleware
from tests.guards import assert_problem
from tests.typing_support import Client

LIMITS = UploadLimits(max_part_bytes=4096, max_total_bytes=6000, max_parts=3)
TEXT_CAP = 100  # read_parts: parts other than "file"
FORM_HEADER = "Content-Type: multipart/form-data; boundary=xyz"
FORM = {"Content-Type": "multipart/form-data; boundary=xyz"}


async def in_memory(request: web.Request) -> web.Response:
    def cap(name: str) -> int:
        return LIMITS.max_part_bytes if name == "file" else TEXT_CAP

    parts = await read_parts(request, limits=LIMITS, part_cap=cap)
    return web.json_response({name: data.hex() for name, data in parts.items()})


async def spooled(request: web.Request) -> web.Response:
    async with read_multipart(request, limits=LIMITS) as form:
        sizes = {name: [f.size for f in files] for name, files in form.files.items()}
        return web.json_response({"fields": form.fields, "files": sizes})


@pytest.fixture
async def client(aiohttp_client: AiohttpClient) -> Client:
    app = web.Application(middlewares=[problem_middleware])
    app.router.add_post("/memory", in_memory)
    app.router.add_post("/spooled", spooled)
    return await aiohttp_client(app)


def part(name: str, content: bytes, *, extra: str = "") -> bytes:
    head = f'--xyz\r\nContent-Disposition: form-data; name="{name}"{extra}\r\n\r\n'
    return head.encode() + content + b"\r\n"


@pytest.mark.parametrize("seed", range(20))
async def test_bodies_written_by_aiohttp_read_as_written(client: Client, seed: int) -> None:
    rng = random.Random(seed)
    form = FormData(default_to_multipart=True)
    expected: dict[str, bytes] = {}
    for i in range(rng.randint(1, 3)):
        name = rng.choice(["file", "request", "x y", "ü", 'a"b', "名前"]) + str(i)
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 50)))
        # aiohttp writes non-ASCII names (RFC 5987 name*=) for file parts only
        if rng.random() < 0.5 or not name.isascii():
            form.add_field(name, data, filename=rng.choice(["a.tgz", "ä.tgz", "x;y.tgz"]))
        else:
            form.add_field(name, data.decode("latin-1"))
            data = data.decode("latin-1").encode("utf-8")
        expected[name] = data
    resp = await client.post("/memory", data=form)
    assert resp.status == 200, await resp.text()
    assert await resp.json() == {name: data.hex() for name, data in expected.items()}


@pytest.mark.parametrize("path", ["/memory", "/spooled"])
async def test_malformed_bodies_are_400_naming_the_problem(client: Client, path: str) -> None:
    cases = [
        (b"x", {"Content-Type": "multipart/form-data"}, "boundary missed"),
        (b"no parts at all", FORM, "Could not find starting boundary"),
        (part("file", b"abc")[:-2], FORM, "the body ends before its closing boundary"),
        (part("file", b"abc"), FORM, "the body ends before its closing boundary"),
        (b"--xyz\r\n\r\nbody\r\n--xyz--\r\n", FORM, "needs a name in Content-Disposition"),
    ]
    for data, headers, why in cases:
        problem = await assert_problem(await client.post(path, data=data, headers=headers), 400)
        assert why in problem["detail"], (data, problem)
    resp = await client.post(path, json={"file": "x"})
    problem = await assert_problem(resp, 415, code="unsupported-media-type")
    assert problem["detail"] == "Content-Type must be multipart/form-data"


async def test_oversize_parts_are_413_while_they_stream_in(client: Client) -> None:
    # A chunked body whose end never comes: only a reader that counts as it reads can answer.
    reader, writer = await asyncio.open_connection(client.host, client.port)
    head = "POST /memory HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
    start = part("file", b"")[:-2] + b"x" * (300 * 1024)  # past one read (256 KiB) of the reader
    writer.write(f"{head}{FORM_HEADER}\r\n\r\n{len(start):x}\r\n".encode() + start + b"\r\n")
    await writer.drain()
    async with asyncio.timeout(5):
        status = await reader.readline()
        answer = await reader.read(4096)
    writer.close()
    await writer.wait_closed()
    assert status.startswith(b"HTTP/1.1 413"), status
    assert b"part 'file' is larger than the limit of 4096 bytes" in answer

    text = part("note", b"x" * (TEXT_CAP + 1)) + b"--xyz--\r\n"
    problem = await assert_problem(await client.post("/memory", data=text, headers=FORM), 413)
    assert problem["detail"] == f"part 'note' is larger than the limit of {TEXT_CAP} bytes"

    async def over_the_total() -> AsyncIterator[bytes]:  # each part fits; together they do not
        yield part("file", b"x" * 4000) + part("more", b"y" * 90)
        yield part("file", b"z" * 2000) + b"--xyz--\r\n"

    resp = await client.post("/memory", data=over_the_total(), headers=FORM)
    problem = await assert_problem(resp, 413)
    assert "larger than the limit for all parts together" in problem["detail"]

    many = b"".join(part(f"p{i}", b"") for i in range(4)) + b"--xyz--\r\n"
    problem = await assert_problem(await client.post("/spooled", data=many, headers=FORM), 413)
    assert problem["detail"] == "too many parts: at most 3 are accepted"

    declared = {**FORM, "Content-Length": "6001"}
    resp = await client.post("/memory", data=b"x" * 6001, headers=declared)
    problem = await assert_problem(resp, 413)
    assert problem["detail"] == "request body is larger than the limit of 6000 bytes"


@pytest.mark.parametrize("path", ["/memory", "/spooled"])
async def test_a_charset_part_is_skipped_whatever_its_length(client: Client, path: str) -> None:
    # RFC 7578's _charset_ part declares a charset, it holds no data: every text part is read as
    # UTF-8. aiohttp's own reader took a value over 31 bytes for a RuntimeError (a 500).
    for charset in (b"x" * 40, b"utf-8"):
        body = part("_charset_", charset) + part("note", b"hi") + b"--xyz--\r\n"
        resp = await client.post(path, data=body, headers=FORM)
        assert resp.status == 200, await resp.text()
        expected = {"note": b"hi".hex()} if path == "/memory" else {"fields": {"note": "hi"}}
        assert (await resp.json()).items() >= expected.items()

    # Sent chunked, with no length to refuse up front: only counting it as it streams in stops it.
    async def long_charset() -> AsyncIterator[bytes]:
        yield part("_charset_", b"x" * 7000) + b"--xyz--\r\n"

    problem = await assert_problem(await client.post(path, data=long_charset(), headers=FORM), 413)
    assert "larger than the limit" in problem["detail"]
