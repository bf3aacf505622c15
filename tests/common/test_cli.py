"""The ``wharf`` command as a user types it: help, version, and settings errors that stop start-up."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from aiohttp import web

from wharf.cli import freeze_heap

WHARF = [sys.executable, "-m", "wharf"]


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WHARF, *args], capture_output=True, text=True, timeout=60, env=env, check=False
    )


def test_help_lists_the_commands() -> None:
    result = run("--help")
    assert result.returncode == 0
    for command in ("serve", "version", "kubesim"):
        assert command in result.stdout


def test_version() -> None:
    result = run("version")
    assert result.returncode == 0
    assert result.stdout.startswith("wharf ")


def test_unknown_service_is_a_usage_error() -> None:
    result = run("serve", "nosuch")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_bad_enum_setting_stops_startup_with_one_line() -> None:
    result = run("serve", "chartsvc", "--set", "chartsvc.security.mode=NOPE")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [
        "wharf: invalid setting chartsvc.security.mode (from --set): expected one of READ_ONLY, FULL"
    ]


def test_bad_setting_from_environment_and_file(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "CHARTSVC_SECURITY_MODE": "nope"}
    result = run("serve", "chartsvc", env=env)
    assert result.returncode == 2
    assert "environment CHARTSVC_SECURITY_MODE" in result.stderr
    cfg = tmp_path / "wharf.yaml"
    cfg.write_text("chartsvc:\n  security:\n    modee: FULL\n")
    result = run("serve", "chartsvc", "--config", str(cfg))
    assert result.returncode == 2
    assert "chartsvc.security.modee" in result.stderr


def test_unknown_event_loop_stops_startup_with_one_line() -> None:
    import os

    result = run("serve", "results", env={**os.environ, "WHARF_EVENT_LOOP": "trio"})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "wharf: WHARF_EVENT_LOOP must be one of auto, uvloop, asyncio, not 'trio'"
    ]


async def test_a_started_service_leaves_its_start_up_heap_out_of_full_collections() -> None:
    """``wharf serve`` freezes what start-up made once the app has started (``gc.freeze``)."""
    assert gc.get_freeze_count() == 0
    try:
        await freeze_heap(web.Application())
        assert gc.get_freeze_count() > 10_000  # the modules and objects this process holds
    finally:
        gc.unfreeze()


CI_IMPORTS = """
import sys
from wharf.entry import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"aiohttp", "chartsvc", "console",
    "helm_python", "kubernetes_asyncio", "jsonschema", "yaml", "common", "kubeclient"})
print("imported:", ",".join(heavy))
"""


def test_the_ci_commands_read_their_arguments_without_loading_the_services() -> None:
    """``wharf results upload|gate`` run on every CI step: their --help and usage errors load no
    service, no HTTP client and no Helm engine (scripts/bench/cli_start.py times them)."""
    for command in ("upload", "gate"):
        done = subprocess.run(
            [sys.executable, "-c", CI_IMPORTS, "results", command, "--help"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert "usage: wharf results " + command in done.stdout
        assert done.stdout.strip().endswith("imported:"), done.stdout[-300:]


def test_the_simulator_starts_without_loading_the_services() -> None:
    """``wharf kubesim`` starts with every test cluster and demo: it goes straight to the
    simulator's command line, past the parser that knows every service."""
    done = subprocess.run(
        [sys.executable, "-c", CI_IMPORTS, "kubesim", "--help"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert "usage: wharf kubesim" in done.stdout
    imported = done.stdout.strip().rpartition("imported:")[2].split(",")
    assert not {"chartsvc", "console", "helm_python", "kubeclient"} & set(imported), imported


def test_the_ci_commands_still_answer_as_part_of_wharf() -> None:
    usage = run("results", "upload")  # no --project
    assert usage.returncode == 2
    assert "the following arguments are required: --project" in usage.stderr
    listed = run("results", "--help")
    assert listed.returncode == 0
    assert "upload" in listed.stdout
    assert "gate" in listed.stdout
