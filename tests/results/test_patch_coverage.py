"""Patch coverage: the diff part, its parse, matching to coverage paths, shards and the gate."""

from __future__ import annotations

import gzip
import io
import subprocess
from pathlib import Path
from typing import Any

import pytest

from results.app import create_app
from results.parsers.diff import parse_diff
from results.parsers.errors import InvalidReport
from results.patch import match_paths
from tests.commands import run_wharf
from tests.conftest import ApiClient
from tests.guards import assert_problem
from tests.results.support import form, junit_xml, lcov, settings_for
from tests.typing_support import Client

# A change to src/shop/cart.py: lines 3-6 and 10 added (10 is blank), 2 removed elsewhere.
CART_DIFF = b"""diff --git a/src/shop/cart.py b/src/shop/cart.py
index 1111111..2222222 100644
--- a/src/shop/cart.py
+++ b/src/shop/cart.py
@@ -1,5 +1,8 @@
 def total(items):
-    return 0
+    if not items:
+        return 0
+    # sum the prices
+    return sum(i.price for i in items)


 def empty():
@@ -9,0 +10,1 @@ def empty():
+
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1,2 @@
 # shop
+More words.
"""

# Coverage of cart.py as coverage.py's Cobertura names it (relative to its source root):
# 3 and 6 ran, 4 did not, 5 (a comment) and 10 (blank) are not executable.
CART_LINES = {1: 1, 3: 1, 4: 0, 6: 1, 9: 1}


@pytest.fixture
async def client(api_client: ApiClient, tmp_path: Path) -> Client:
    return await api_client(create_app(settings_for(tmp_path)))


async def ingest(client: Client, status: int = 201, **kwargs: Any) -> dict[str, Any]:
    response = await client.post("/api/v1/ingest", data=form(**kwargs))
    body: dict[str, Any] = await response.json()
    assert response.status == status, body
    return body


def test_the_diff_gives_the_added_lines_of_each_file() -> None:
    diff = parse_diff(io.BytesIO(CART_DIFF))
    assert {f.path: sorted(f.added) for f in diff.files} == {
        "src/shop/cart.py": [2, 3, 4, 5, 10],
        "README.md": [2],
    }


# Renamed with a change, renamed without one, deleted, binary, a mode change, CRLF line ends, a
# missing final newline and a quoted path with a non-ASCII name.
AWKWARD_DIFF = (
    b"diff --git a/old name.py b/new name.py\r\n"
    b"similarity index 90%\r\n"
    b"rename from old name.py\r\n"
    b"rename to new name.py\r\n"
    b"--- a/old name.py\r\n"
    b"+++ b/new name.py\r\n"
    b"@@ -1,2 +1,2 @@\r\n"
    b" a = 1\r\n"
    b"-b = 2\r\n"
    b"+b = 3\r\n"
    b"\\ No newline at end of file\r\n"
    b"diff --git a/moved.py b/pkg/moved.py\n"
    b"similarity index 100%\n"
    b"rename from moved.py\n"
    b"rename to pkg/moved.py\n"
    b"diff --git a/gone.py b/gone.py\n"
    b"deleted file mode 100644\n"
    b"index 3333333..0000000\n"
    b"--- a/gone.py\n"
    b"+++ /dev/null\n"
    b"@@ -1,2 +0,0 @@\n"
    b"-x = 1\n"
    b"-y = 2\n"
    b"diff --git a/logo.png b/logo.png\n"
    b"index 4444444..5555555 100644\n"
    b"Binary files a/logo.png and b/logo.png differ\n"
    b"diff --git a/run.sh b/run.sh\n"
    b"old mode 100644\n"
    b"new mode 100755\n"
    b'diff --git "a/caf\\303\\251.py" "b/caf\\303\\251.py"\n'
    b"new file mode 100644\n"
    b"--- /dev/null\n"
    b'+++ "b/caf\\303\\251.py"\n'
    b"@@ -0,0 +1,2 @@\n"
    b"+print('caf\xc3\xa9')\n"
    b"+\n"
)


def test_renames_deletions_binaries_and_crlf_are_read_without_error() -> None:
    diff = parse_diff(io.BytesIO(AWKWARD_DIFF))
    assert {f.path: sorted(f.added) for f in diff.files} == {
        "new name.py": [2],
        "café.py": [1, 2],
    }


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n b\n", 5),  # nothing in the header says: not a hunk
        (b"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n?b\n", 5),
        (b"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n", 5),
        (b"--- a/x\n+++ b/x\n@@ nonsense @@\n", 3),
        (b"@@ -1 +1 @@\n+a\n", 1),
    ],
)
def test_a_malformed_diff_is_refused_naming_the_line(text: bytes, line: int) -> None:
    with pytest.raises(InvalidReport) as caught:
        parse_diff(io.BytesIO(text))
    assert caught.value.line == line
    assert f"line {line}:" in caught.value.detail


def test_diff_paths_match_coverage_paths_by_whole_trailing_segments() -> None:
    found = match_paths(
        ["src/shop/cart.py", "src\\shop\\util.py", "src/app/Main.java", "a/init.py", "docs/x.md"],
        [
            "shop/cart.py",  # relative to a source root
            "/home/ci/build/src/shop/util.py",  # absolute
            "com/app/Main.java",  # a different package: no match
            "x/init.py",  # init.py twice: ambiguous, no match
            "y/init.py",
        ],
    )
    assert found == {
        "src/shop/cart.py": "shop/cart.py",
        "src\\shop\\util.py": "/home/ci/build/src/shop/util.py",
    }


async def test_patch_coverage_counts_only_coverable_changed_lines(client: Client) -> None:
    body = await ingest(
        client,
        junit=[junit_xml([("t", "pass")])],
        jacoco=[lcov({"shop/cart.py": CART_LINES})],
        diff=("change.diff", gzip.compress(CART_DIFF)),
        base="abc1234",
    )
    # Added 2-5 and 10: 3 (covered), 4 (missed) are executable; 2 is not in the report either.
    assert body["patchCoverage"] == {"coverable": 2, "covered": 1, "missed": 1, "pct": 50.0}
    run = await (await client.get(f"/api/v1/runs/{body['runId']}")).json()
    assert run["baseCommit"] == "abc1234"
    assert run["patchFiles"] == [
        {"path": "README.md", "coveragePath": None, "changed": 1, "coverable": 0, "covered": 0,
         "missed": 0, "pct": None, "missedLines": []},
        {"path": "src/shop/cart.py", "coveragePath": "shop/cart.py", "changed": 5,
         "coverable": 2, "covered": 1, "missed": 1, "pct": 50.0, "missedLines": [4]},
    ]  # fmt: skip


async def test_shards_add_up(client: Client) -> None:
    first = {1: 1, 3: 1, 4: 0, 6: 0}
    second = {1: 1, 3: 0, 4: 1, 6: 1}
    body = await ingest(client, runKey="k", jacoco=[lcov({"shop/cart.py": first}, name="a.info")],
                        diff=("d", CART_DIFF))  # fmt: skip
    assert body["patchCoverage"] == {"coverable": 2, "covered": 1, "missed": 1, "pct": 50.0}
    body = await ingest(client, runKey="k", jacoco=[lcov({"shop/cart.py": second}, name="b.info")])
    assert body["patchCoverage"] == {"coverable": 2, "covered": 2, "missed": 0, "pct": 100.0}


async def test_a_run_without_a_diff_answers_null(client: Client) -> None:
    body = await ingest(client, jacoco=[lcov({"shop/cart.py": CART_LINES})])
    assert body["patchCoverage"] is None
    run = await (await client.get(f"/api/v1/runs/{body['runId']}")).json()
    assert run["patchFiles"] is None


@pytest.mark.parametrize(("minimum", "passed"), [("80", False), ("50", True)])
async def test_the_gate_judges_patch_coverage(
    api_client: ApiClient, tmp_path: Path, minimum: str, passed: bool
) -> None:
    settings = settings_for(tmp_path, f"results.gate.patch-coverage-min={minimum}")
    client = await api_client(create_app(settings))
    await ingest(client, junit=[junit_xml([("t", "pass")])],
                 jacoco=[lcov({"shop/cart.py": CART_LINES})], diff=("d", CART_DIFF))  # fmt: skip
    verdict = await (await client.get("/api/v1/gate?project=demo&commit=a1b2c3d4e5f6")).json()
    assert verdict["patchCoverage"]["pct"] == 50.0
    rule = next(r for r in verdict["rules"] if r["name"] == "patch-coverage")
    assert rule["passed"] is passed
    assert "50.00% of the changed lines" in rule["detail"]
    assert verdict["passed"] is passed


async def test_the_gate_skips_patch_coverage_without_a_diff(
    api_client: ApiClient, tmp_path: Path
) -> None:
    settings = settings_for(tmp_path, "results.gate.patch-coverage-min=80")
    client = await api_client(create_app(settings))
    await ingest(client, junit=[junit_xml([("t", "pass")])],
                 jacoco=[lcov({"shop/cart.py": CART_LINES})])  # fmt: skip
    for _ in range(2):  # the second answer comes from the kept verdict
        verdict = await (await client.get("/api/v1/gate?project=demo&commit=a1b2c3d4e5f6")).json()
        assert verdict["patchCoverage"] is None
        rule = next(r for r in verdict["rules"] if r["name"] == "patch-coverage")
        assert rule == {"name": "patch-coverage", "passed": True,
                        "detail": "skipped: the run was uploaded without a diff"}  # fmt: skip


async def test_a_diff_over_the_limit_is_413_naming_the_part(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await api_client(create_app(settings_for(tmp_path)))
    big = CART_DIFF + b"+x\n" * (10 * 1024 * 1024 // 3)
    response = await client.post(
        "/api/v1/ingest", data=form(jacoco=[lcov({"a.py": {1: 1}})], diff=("big.diff", big))
    )
    body = await assert_problem(response, 413)
    assert body["part"] == "diff"
    assert "max-diff-bytes" in body["detail"]


async def test_a_malformed_diff_is_400_naming_the_line(client: Client) -> None:
    bad = b"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n?b\n"
    response = await client.post(
        "/api/v1/ingest", data=form(jacoco=[lcov({"a.py": {1: 1}})], diff=("bad.diff", bad))
    )
    body = await assert_problem(response, 400)
    assert body["part"] == "diff"
    assert body["line"] == 5
    assert "line 5" in body["detail"]
    projects = await (await client.get("/api/v1/projects")).text()
    assert '"demo"' not in projects  # nothing written


async def test_the_run_page_shows_patch_coverage_and_the_missed_changed_lines(
    client: Client,
) -> None:
    body = await ingest(client, jacoco=[lcov({"shop/cart.py": CART_LINES})], diff=("d", CART_DIFF))
    page = await (await client.get(f"/runs/{body['runId']}")).text()
    assert "50.0" in page.split('id="patch-coverage"')[1].split("</div>")[0]
    changed = page.split('id="changed-files"')[1].split("</table>")[0]
    assert "<code>src/shop/cart.py</code>" in changed
    assert '<mark class="missed">4</mark>' in changed
    assert "(no coverage matched)" in changed  # README.md
    plain = await ingest(client, jacoco=[lcov({"shop/cart.py": CART_LINES})], commit="b" * 40)
    page = await (await client.get(f"/runs/{plain['runId']}")).text()
    assert "Uploaded without a diff" in page


async def test_the_patch_coverage_badge(client: Client) -> None:
    url = "/api/v1/badges/patch-coverage.svg?project=demo"
    await ingest(client, jacoco=[lcov({"shop/cart.py": CART_LINES})])
    assert "no diff" in await (await client.get(url)).text()
    await ingest(client, jacoco=[lcov({"shop/cart.py": CART_LINES})], diff=("d", CART_DIFF),
                 commit="c" * 40)  # fmt: skip
    response = await client.get(url)
    assert response.content_type == "image/svg+xml"
    svg = await response.text()
    assert "patch coverage" in svg
    assert "50.0%" in svg


async def test_the_compare_page_shows_patch_coverage_per_run(client: Client) -> None:
    await ingest(client, jacoco=[lcov({"shop/cart.py": CART_LINES})], commit="d" * 40)
    body = await ingest(client, branch="feature", jacoco=[lcov({"shop/cart.py": CART_LINES})],
                        diff=("d", CART_DIFF))  # fmt: skip
    page = await (await client.get(f"/runs/{body['runId']}/compare")).text()
    card = page.split('id="patch-coverage"')[1].split("</div>")[0]
    assert "50.0" in card
    assert "baseline: no diff" in card
    found = await (await client.get(f"/api/v1/runs/{body['runId']}/compare")).json()
    assert found["run"]["patchCoverage"]["pct"] == 50.0
    assert found["baseline"]["patchCoverage"] is None


async def test_a_project_overrides_the_patch_coverage_floor(
    api_client: ApiClient, tmp_path: Path
) -> None:
    settings = settings_for(tmp_path, "results.gate.patch-coverage-min=40")
    client = await api_client(create_app(settings))
    await ingest(client, junit=[junit_xml([("t", "pass")])],
                 jacoco=[lcov({"shop/cart.py": CART_LINES})], diff=("d", CART_DIFF))  # fmt: skip
    gate = "/api/v1/gate?project=demo&commit=a1b2c3d4e5f6"
    assert (await (await client.get(gate)).json())["passed"] is True  # 50 % over the setting's 40
    data = ["--set", f"results.data-dir={tmp_path / 'results-data'}"]

    def wharf(*args: str) -> subprocess.CompletedProcess[str]:
        return run_wharf("results", "project", "patch-coverage-min", *args, *data)

    assert wharf("demo", "75").returncode == 0
    verdict = await (await client.get(gate)).json()
    assert verdict["passed"] is False
    assert (
        "min 75.00%" in next(r for r in verdict["rules"] if r["name"] == "patch-coverage")["detail"]
    )
    assert wharf("demo", "unset").returncode == 0
    assert (await (await client.get(gate)).json())["passed"] is True
    assert wharf("nobody", "75").returncode == 1
    assert wharf("demo", "120").returncode == 2
