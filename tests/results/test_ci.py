"""``wharf results upload`` and ``wharf results gate`` against a real server on loopback: from a
shell script as a CI job runs them, and in-process for retries, batches and errors."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest
from aiohttp import ClientSession, web
from aiohttp.test_utils import TestServer
from pytest_aiohttp import AiohttpServer

from results import keys
from results.app import create_app
from results.browse import RunFilter
from results.ci.sources import ci_target, report_files
from tests.results.story import coverage
from tests.results.support import junit_xml, settings_for
from wharf import cli

ROOT = Path(__file__).resolve().parents[2]
Server = TestServer


@pytest.fixture
async def server(aiohttp_server: AiohttpServer, tmp_path: Path) -> Server:
    app = create_app(settings_for(tmp_path, "results.security.require-ingest-token=true"))
    started: Server = await aiohttp_server(app)
    accounts = started.app[keys.ACCOUNTS]
    await accounts.add_user("ci", password_hash=await accounts.hash("pw-ci-secret"))
    return started


async def token_for(server: Server) -> str:
    accounts = server.app[keys.ACCOUNTS]
    return (await accounts.create_token(await accounts.user("ci"), "ci")).value


def write(directory: Path, report: tuple[str, bytes]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / report[0]
    path.write_bytes(report[1])
    return path


def base(server: Server) -> str:
    return str(server.make_url("")).rstrip("/")


@pytest.mark.slow
async def test_a_ci_job_uploads_and_gates_from_a_shell_script(
    server: Server, tmp_path: Path
) -> None:
    work = tmp_path / "job"
    write(work / "green", junit_xml([("a", "pass"), ("b", "pass")], suite="TEST-shop"))
    write(work / "red", junit_xml([("a", "pass"), ("b", "fail")], suite="TEST-shop"))
    write(work, ("lcov-80.info", coverage(80)[1]))
    write(work, ("lcov-60.info", coverage(60)[1]))
    script = textwrap.dedent("""\
        wharf() { "$PYTHON" -m wharf "$@"; }
        export GITHUB_REF_NAME=main
        GITHUB_SHA=aaaaaaa1 wharf results upload --project shop --junit "$JOB/green" --coverage "$JOB/lcov-80.info"
        echo "upload-green=$?"
        GITHUB_SHA=aaaaaaa1 wharf results gate --project shop
        echo "gate-green=$?"
        GITHUB_SHA=bbbbbbb2 wharf results upload --project shop --junit "$JOB/red/*.xml" --coverage "$JOB/lcov-60.info"
        echo "upload-red=$?"
        GITHUB_SHA=bbbbbbb2 wharf results gate --project shop
        echo "gate-red=$?"
        GITHUB_SHA=ccccccc3 wharf results gate --project shop
        echo "gate-none=$?"
        WHARF_RESULTS_TOKEN= GITHUB_SHA=ddddddd4 wharf results upload --project shop --junit "$JOB/green"
        echo "upload-anonymous=$?"
        """)
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),
        "JOB": str(work),
        "WHARF_RESULTS_URL": base(server),
        "WHARF_RESULTS_TOKEN": await token_for(server),
    }
    proc = await asyncio.create_subprocess_exec(
        "bash", "-c", script, cwd=ROOT, env=env, stdout=-1, stderr=-1
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    codes = dict(line.split("=") for line in out.decode().split())
    log = err.decode()
    assert codes == {
        "upload-green": "0",
        "gate-green": "0",
        "upload-red": "0",
        "gate-red": "1",
        "gate-none": "2",
        "upload-anonymous": "1",
    }, log
    assert "quality gate FAILED" in log
    assert "FAIL new-failures: 1 new failure(s) vs baseline run 1: pkg.Tests b" in log
    assert "FAIL coverage-drop" in log
    assert f"{base(server)}/runs/2/compare" in log  # what changed, for a failed gate
    assert "PASS new-failures" in log  # the green gate's rules are printed too
    assert "GET /api/v1/gate answered 404" in log
    assert "POST /api/v1/ingest answered 401" in log


async def wharf(*argv: str) -> int:
    """``wharf`` in this process (in a thread: it runs its own event loop)."""
    return await asyncio.to_thread(cli.main, list(argv))


@pytest.fixture
def ci_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("GITHUB_SHA", "GITHUB_REF_NAME", "GITHUB_HEAD_REF", "WHARF_RESULTS_URL",
                 "WHARF_RESULTS_TOKEN", "CI_COMMIT_SHA", "GIT_COMMIT", "GIT_BRANCH"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_SHA", "abcdef123")
    monkeypatch.setenv("GITHUB_REF_NAME", "main")
    return monkeypatch


async def test_retries_ride_out_a_flaky_proxy_and_give_up_with_a_reason(
    server: Server, tmp_path: Path, ci_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    failures = {"left": 2}

    async def proxy(request: web.Request) -> web.StreamResponse:
        if failures["left"] != 0:
            failures["left"] -= 1
            return web.Response(status=503, headers={"Retry-After": "0"}, text="busy")
        async with (
            ClientSession() as session,
            session.request(
                request.method,
                f"{base(server)}{request.path_qs}",
                data=await request.read(),
                headers={k: v for k, v in request.headers.items() if k.lower() != "host"},
            ) as upstream,
        ):
            return web.Response(
                status=upstream.status,
                body=await upstream.read(),
                content_type=upstream.content_type,
            )

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", proxy)
    front = TestServer(app)
    await front.start_server()
    try:
        ci_env.setenv("WHARF_RESULTS_TOKEN", await token_for(server))
        report = write(tmp_path, junit_xml([("a", "pass")]))
        url = base(front)
        assert (
            await wharf("results", "upload", "--url", url, "--project", "p", "--junit", str(report))
            == 0
        )
        assert failures["left"] == 0
        assert await server.app[keys.STORE].find_project("p") is not None
        failures["left"] = -1  # from now on, always busy
        code = await wharf("results", "upload", "--url", url, "--project", "p", "--retries", "1",
                           "--junit", str(report))  # fmt: skip
        assert code == 1
        err = capsys.readouterr().err
        assert "answered 503" in err
        assert "gave up after 2 attempts" in err
    finally:
        await front.close()


async def test_many_files_go_in_several_requests_of_one_run(
    server: Server, tmp_path: Path, ci_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci_env.setenv("WHARF_RESULTS_TOKEN", await token_for(server))
    ci_env.setenv("WHARF_RESULTS_URL", base(server) + "/api/v1")
    for n in range(5):
        write(
            tmp_path / "reports", junit_xml([(f"t{n}", "pass"), (f"u{n}", "skip")], suite=f"S{n}")
        )
    code = await wharf("results", "upload", "--project", "big", "--files-per-request", "2",
                       "--junit", str(tmp_path / "reports"), "--json")  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    assert '"tests": 10' in captured.out
    assert '"uploads": 5' in captured.out
    assert "uploaded 5 file(s) to run #1 of big (main @ abcdef123)" in captured.err
    found = await server.app[keys.READS].list_runs(1, RunFilter(), before=None, limit=5)
    assert len(found) == 1


async def test_refusals_and_usage_problems_say_what_is_wrong(
    server: Server, tmp_path: Path, ci_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ci_env.setenv("WHARF_RESULTS_TOKEN", await token_for(server))
    url = base(server)
    bad = write(tmp_path, ("broken.xml", b"<testsuite><testcase"))
    assert (
        await wharf("results", "upload", "--url", url, "--project", "p", "--junit", str(bad)) == 1
    )
    err = capsys.readouterr().err
    assert "answered 400" in err
    assert "broken.xml" in err
    missing = str(tmp_path / "nope.xml")
    assert await wharf("results", "upload", "--url", url, "--project", "p", "--junit", missing) == 2
    assert "nope.xml: no such file" in capsys.readouterr().err
    assert await wharf("results", "upload", "--project", "p", "--junit", str(bad)) == 2
    assert "no server: pass --url or set WHARF_RESULTS_URL" in capsys.readouterr().err
    ci_env.delenv("GITHUB_SHA")
    assert await wharf("results", "gate", "--url", url, "--project", "p") == 2
    assert "no verdict" in capsys.readouterr().err  # the branch from GITHUB_REF_NAME: no run
    ci_env.delenv("GITHUB_REF_NAME")
    assert await wharf("results", "gate", "--url", url, "--project", "p") == 2
    assert "no commit or branch: pass --commit or --branch" in capsys.readouterr().err
    assert await wharf("results", "gate", "--url", url, "--project", "p", "--branch", "main") == 2
    assert "no verdict" in capsys.readouterr().err


def test_ci_variables_fill_in_commit_branch_and_build_url() -> None:
    github = ci_target({
        "GITHUB_SHA": "abc", "GITHUB_REF_NAME": "42/merge", "GITHUB_HEAD_REF": "feature/x",
        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "7",
    })  # fmt: skip
    assert (github.commit, github.branch) == ("abc", "feature/x")
    assert github.build_url == "https://github.com/o/r/actions/runs/7"
    jenkins = ci_target(
        {"GIT_COMMIT": "def", "GIT_BRANCH": "origin/main", "BUILD_URL": "https://j/1"}
    )
    assert (jenkins.commit, jenkins.branch, jenkins.build_url) == ("def", "main", "https://j/1")
    gitlab = ci_target({"CI_COMMIT_SHA": "123", "CI_COMMIT_REF_NAME": "dev", "CI_JOB_URL": "u"})
    assert (gitlab.commit, gitlab.branch, gitlab.build_url) == ("123", "dev", "u")
    assert ci_target({}).commit is None


def test_report_arguments_expand_directories_and_globs(tmp_path: Path) -> None:
    for name in ("b.xml", "a.xml", "notes.txt", "deep/c.xml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    found = report_files([str(tmp_path), str(tmp_path / "**" / "*.xml")], coverage=False)
    assert [p.relative_to(tmp_path).as_posix() for p in found] == ["a.xml", "b.xml", "deep/c.xml"]
    with pytest.raises(ValueError, match="no such file"):
        report_files([str(tmp_path / "*.json")], coverage=False)
