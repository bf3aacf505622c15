"""The pod file browser against a living simulator: the gates (off, read-only, writable), admin
only in open mode, listing, reading as text or base64, downloading, atomic writes, deletes, the
allowed roots held against ``..`` and symlinks, the size caps, and the audit."""

from __future__ import annotations

import pytest

from console.streams import podfiles
from kubesim import Simulator
from tests.console.conftest import ConsoleApp
from tests.console.live_cluster import sim
from tests.console.resources_support import eventually, seeded_namespace
from tests.console.support import ADMIN
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

ROOTS = "files.allowed-roots=/tmp,/etc"
CAPS = ("files.max-read-bytes=2048", "files.max-write-bytes=4096")


@pytest.fixture(scope="module")
def ns(sim: Simulator) -> str:
    main = {"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"]}
    box = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "box"},
           "spec": {"containers": [main]}}  # fmt: skip
    return seeded_namespace(sim, "files", box)


def files(ns: str, suffix: str = "") -> str:
    return f"/api/v1/clusters/alpha/pods/{ns}/box/files{suffix}"


async def _running(client: Client, ns: str) -> None:
    async def check() -> bool:
        resp = await client.get(files(ns), params={"path": "/tmp"}, headers=ADMIN)
        return resp.status == 200

    await eventually(check, what="the pod's files to be readable")


@pytest.fixture
async def writable(console_app: ConsoleApp, ns: str) -> Client:
    client = await console_app("files.enabled=true", "files.writable=true", ROOTS, *CAPS)
    await _running(client, ns)
    return client


async def run_in_box(client: Client, ns: str, argv: list[str]) -> None:
    """``argv`` run in the pod's container (through the console's exec), to its end."""
    params = [("cluster", "alpha"), ("namespace", ns), ("pod", "box")]
    ws = await client.ws_connect(
        "/ws/exec", params=params + [("command", part) for part in argv], headers=ADMIN
    )
    async for _ in ws:
        pass


async def test_gates_and_credentials(console_app: ConsoleApp, client: Client, ns: str) -> None:
    where = {"path": "/tmp"}
    await assert_problem(await client.get(files(ns), params=where), 401)
    await assert_problem(
        await client.get(files(ns), params=where, headers=ADMIN), 404, code="files-disabled"
    )
    reader = await console_app("files.enabled=true", ROOTS)
    await _running(reader, ns)
    await assert_problem(await reader.get(files(ns), params=where), 401)
    assert (await reader.get(files(ns), params=where, headers=ADMIN)).status == 200
    put = await reader.put(
        files(ns, "/content"), params={"path": "/tmp/x"}, data=b"x", headers=ADMIN
    )
    await assert_problem(put, 403, code="files-read-only")
    gone = await reader.delete(files(ns), params={"path": "/tmp/x"}, headers=ADMIN)
    await assert_problem(gone, 403, code="files-read-only")


async def test_a_download_name_with_controls_and_utf8_is_a_safe_header(
    writable: Client, ns: str
) -> None:
    for name, disposition in [
        ("a\r\nb.txt", 'attachment; filename="a__b.txt"'),
        ("r\u00e9sum\u00e9 \"1\".txt",
         'attachment; filename="r_sum_ _1_.txt"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9%20%221%22.txt'),
    ]:  # fmt: skip
        path = {"path": f"/tmp/{name}"}
        put = await writable.put(files(ns, "/content"), params=path, data=b"x", headers=ADMIN)
        assert put.status == 200, await put.text()
        resp = await writable.get(files(ns, "/download"), params=path, headers=ADMIN)
        assert (resp.status, await resp.read()) == (200, b"x")
        assert resp.headers["Content-Disposition"] == disposition
        await writable.delete(files(ns), params=path, headers=ADMIN)


async def test_write_read_download_list_delete(writable: Client, ns: str) -> None:
    client = writable
    path = {"path": "/tmp/notes/../hello.txt"}
    resp = await client.put(files(ns, "/content"), params=path, data=b"hi there\n", headers=ADMIN)
    assert await resp.json() == {"path": "/tmp/hello.txt", "size": 9}

    resp = await client.get(files(ns, "/content"), params={"path": "/tmp/hello.txt"}, headers=ADMIN)
    assert await resp.json() == {"path": "/tmp/hello.txt", "size": 9, "encoding": "utf-8",
                                 "content": "hi there\n"}  # fmt: skip
    resp = await client.get(files(ns, "/download"), params=path, headers=ADMIN)
    assert (resp.content_type, await resp.read()) == ("application/octet-stream", b"hi there\n")
    assert resp.headers["Content-Disposition"] == 'attachment; filename="hello.txt"'

    blob = bytes(range(256))
    binary = {"path": "/tmp/blob.bin"}
    await client.put(files(ns, "/content"), params=binary, data=blob, headers=ADMIN)
    body = await (await client.get(files(ns, "/content"), params=binary, headers=ADMIN)).json()
    assert (body["encoding"], body["size"]) == ("base64", 256)

    listing = await (await client.get(files(ns), params={"path": "/tmp"}, headers=ADMIN)).json()
    entries = {e["name"]: e for e in listing["entries"]}
    assert entries["hello.txt"] | {"modified": "-"} == {
        "name": "hello.txt", "path": "/tmp/hello.txt", "type": "file", "size": 9,
        "mode": entries["hello.txt"]["mode"], "modified": "-"}  # fmt: skip
    assert not any(name.endswith(".wharf-upload") for name in entries)
    assert listing["truncated"] is False

    resp = await client.delete(files(ns), params={"path": "/tmp/hello.txt"}, headers=ADMIN)
    assert (await resp.json())["type"] == "file"
    await assert_problem(
        await client.get(files(ns, "/content"), params={"path": "/tmp/hello.txt"}, headers=ADMIN),
        404,
        code="file-not-found",
    )
    audit = await (await client.get("/api/v1/audit", headers=ADMIN)).json()
    done = {(e["action"], e["target"], e["outcome"]) for e in audit}
    assert ("file-write", f"pods/{ns}/box:/tmp/notes/../hello.txt", "success") in done
    assert ("file-delete", f"pods/{ns}/box:/tmp/hello.txt", "success") in done


async def test_roots_hold_against_dotdot_and_links(writable: Client, ns: str) -> None:
    client = writable
    for path in ("/", "/var", "/tmp/../var/log"):
        resp = await client.get(files(ns), params={"path": path}, headers=ADMIN)
        await assert_problem(resp, 403, code="path-not-allowed")
    await run_in_box(client, ns, ["ln", "-s", "/var", "/tmp/out"])
    for suffix, path in (("", "/tmp/out"), ("/content", "/tmp/out/log")):
        resp = await client.get(files(ns, suffix), params={"path": path}, headers=ADMIN)
        await assert_problem(resp, 403, code="path-not-allowed")
    put = await client.put(
        files(ns, "/content"), params={"path": "/tmp/out/evil"}, data=b"x", headers=ADMIN
    )
    await assert_problem(put, 403, code="path-not-allowed")
    resp = await client.delete(files(ns), params={"path": "/tmp/out"}, headers=ADMIN)
    assert (await resp.json())["type"] == "symlink"  # the link went, not what it pointed to
    await assert_problem(
        await client.delete(files(ns), params={"path": "/tmp"}, headers=ADMIN),
        403,
        code="path-not-allowed",
    )


async def test_caps_and_kinds(writable: Client, ns: str) -> None:
    client = writable
    big = {"path": "/tmp/big"}
    put = await client.put(files(ns, "/content"), params=big, data=b"x" * 5000, headers=ADMIN)
    await assert_problem(put, 413, code="file-too-large")
    await client.put(files(ns, "/content"), params=big, data=b"x" * 3000, headers=ADMIN)
    for suffix in ("/content", "/download"):
        resp = await client.get(files(ns, suffix), params=big, headers=ADMIN)
        await assert_problem(resp, 413, code="file-too-large")
    await assert_problem(
        await client.get(files(ns), params=big, headers=ADMIN), 400, code="not-a-directory"
    )
    await assert_problem(
        await client.get(files(ns, "/content"), params={"path": "/tmp"}, headers=ADMIN),
        400,
        code="not-a-file",
    )
    await assert_problem(await client.get(files(ns), params={"path": "tmp"}, headers=ADMIN), 400)
    put = await client.put(
        files(ns, "/content"), params={"path": "/tmp/d/f"}, data=b"", headers=ADMIN
    )
    await assert_problem(put, 404, code="file-not-found")  # writes make no directories
    empty = {"path": "/tmp/empty"}
    put = await client.put(files(ns, "/content"), params=empty, data=b"", headers=ADMIN)
    assert await put.json() == {"path": "/tmp/empty", "size": 0}  # an empty body is a file
    resp = await client.get(files(ns, "/download"), params=empty, headers=ADMIN)
    assert (resp.status, await resp.read()) == (200, b"")


async def test_names_with_newlines_tabs_and_bytes_that_are_not_utf8(
    writable: Client, ns: str
) -> None:
    client, where = writable, {"path": "/tmp/odd"}
    # printf writes byte 0351 alone: the name is Latin-1's "café", not UTF-8.
    await run_in_box(
        client, ns, ["sh", "-c", "mkdir /tmp/odd && touch \"/tmp/odd/$(printf 'caf\\351.txt')\""]
    )
    odd = {"line\nbreak.txt": b"one", "tab\there|bar.txt": b"two", "plain.txt": b"three"}
    for name, data in odd.items():
        put = await client.put(
            files(ns, "/content"), params={"path": f"/tmp/odd/{name}"}, data=data, headers=ADMIN
        )
        assert put.status == 200, await put.text()

    listing = await (await client.get(files(ns), params=where, headers=ADMIN)).json()
    assert {(e["name"], e["path"], e["size"]) for e in listing["entries"]} == {
        (name, f"/tmp/odd/{name}", len(data)) for name, data in odd.items()
    }
    assert listing["truncated"] is False
    assert listing["skipped"] == [{"name": "caf\\xe9.txt", "reason": "its name is not UTF-8"}]
    newline = {"path": "/tmp/odd/line\nbreak.txt"}
    body = await (await client.get(files(ns, "/content"), params=newline, headers=ADMIN)).json()
    assert body["content"] == "one"


def test_stat_records_are_read_knowing_the_paths_asked_for() -> None:
    """A name may hold a newline or ``|``; a path stat could not read (gone since find listed
    it) has no record, and the records after it are still matched to their paths."""
    out = b"regular file|3|644|0|/d/a\nb|c\ndirectory|4096|755|60|/d/z\n"
    entries = podfiles._stat_records(out, ["/d/a\nb|c", "/d/gone", "/d/z"])
    assert [(e.name, e.type, e.size, e.mode, e.modified) for e in entries] == [
        ("a\nb|c", "file", 3, "0644", "1970-01-01T00:00:00Z"),
        ("z", "directory", 4096, "0755", "1970-01-01T00:01:00Z"),
    ]
