"""Patch coverage end to end: a real git repository, real pytest and coverage.py runs, and
``wharf results upload`` from the work tree to a real results server on loopback."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from aiohttp import ClientSession
from aiohttp.test_utils import TestServer
from pytest_aiohttp import AiohttpServer

from results.app import create_app
from tests.results.support import settings_for

ROOT = Path(__file__).resolve().parents[2]

MODULE = """\
def double(x):
    return 2 * x
"""
# Ten executable lines added; grow(1) runs six of them (the two def lines run at import).
ADDED = """\


def grow(x):
    y = x + 1
    y = y * 2
    if y > 100:
        y = 100
        y = y - 1
    return y


def shrink(x):
    z = x - 1
    return z
"""
TESTS = """\
from shop.calc import double


def test_double():
    assert double(2) == 4
"""
MORE_TESTS = """\


def test_grow():
    from shop.calc import grow

    assert grow(1) == 4
"""


def _env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "PYTHONPATH": f"{ROOT}{os.pathsep}src",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }  # fmt: skip


async def run(cwd: Path, env: dict[str, str], *argv: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdout=-1, stderr=-2)
    out, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


async def must(cwd: Path, env: dict[str, str], *argv: str) -> str:
    code, out = await run(cwd, env, *argv)
    assert code == 0, out
    return out


async def _build_repo(repo: Path, env: dict[str, str]) -> None:
    (repo / "src" / "shop").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "src" / "shop" / "__init__.py").write_text("")
    (repo / "src" / "shop" / "calc.py").write_text(MODULE)
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    await must(repo, env, "git", "init", "-q", "-b", "main")
    await must(repo, env, "git", "add", ".")
    await must(repo, env, "git", "commit", "-q", "-m", "calc")
    await must(repo, env, "git", "checkout", "-q", "-b", "feature")
    with (repo / "src" / "shop" / "calc.py").open("a") as module:
        module.write(ADDED)
    with (repo / "tests" / "test_calc.py").open("a") as tests:
        tests.write(MORE_TESTS)
    await must(repo, env, "git", "commit", "-q", "-am", "grow and shrink")
    python = sys.executable
    await must(repo, env, python, "-m", "coverage", "run", "--source=src", "-m", "pytest", "-q",
               "-p", "no:cacheprovider", "--junitxml=junit.xml", "tests")  # fmt: skip
    await must(repo, env, python, "-m", "coverage", "xml", "-o", "coverage.xml")


@pytest.mark.slow
async def test_upload_from_a_work_tree_gives_patch_coverage_and_the_gate_judges_it(
    aiohttp_server: AiohttpServer, tmp_path: Path
) -> None:
    repo, env = tmp_path / "repo", _env(tmp_path)
    repo.mkdir()
    await _build_repo(repo, env)
    strict: TestServer = await aiohttp_server(
        create_app(settings_for(tmp_path, "results.gate.patch-coverage-min=80"))
    )
    env["WHARF_RESULTS_URL"] = str(strict.make_url("")).rstrip("/")
    head = (await must(repo, env, "git", "rev-parse", "HEAD")).strip()
    wharf = (sys.executable, "-m", "wharf", "results")
    target = ("--project", "shop", "--commit", head, "--branch", "feature")
    out = await must(repo, env, *wharf, "upload", *target, "--junit", "junit.xml",
                     "--coverage", "coverage.xml", "--json")  # fmt: skip
    assert "patch coverage 60.00% (6/10)" in out
    async with ClientSession() as session, session.get(strict.make_url("/api/v1/runs/1")) as got:
        stored = await got.json()
    assert stored["patchCoverage"] == {"coverable": 10, "covered": 6, "missed": 4, "pct": 60.0}
    main = (await must(repo, env, "git", "rev-parse", "main")).strip()
    assert stored["baseCommit"] == main  # the merge base with main
    (calc,) = [f for f in stored["patchFiles"] if f["path"] == "src/shop/calc.py"]
    assert calc["coveragePath"] == "src/shop/calc.py"  # as coverage.py names it
    # The lines of y = 100, y = y - 1 and of shrink's body.
    assert calc["missedLines"] == [9, 10, 15, 16]

    code, out = await run(repo, env, *wharf, "gate", *target)
    assert code == 1, out
    assert "FAIL patch-coverage: 60.00% of the changed lines covered (6 of 10; min 80.00%)" in out

    lenient = await aiohttp_server(
        create_app(settings_for(tmp_path, "results.gate.patch-coverage-min=50"))
    )
    env["WHARF_RESULTS_URL"] = str(lenient.make_url("")).rstrip("/")
    code, out = await run(repo, env, *wharf, "gate", *target)
    assert code == 0, out
    assert "PASS patch-coverage: 60.00%" in out

    code, out = await run(repo, env, *wharf, "upload", *target, "--junit", "junit.xml",
                          "--no-diff", "--run-key", "other")  # fmt: skip
    assert code == 0, out
    assert "patch coverage" not in out
