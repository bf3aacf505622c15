"""The systemd units in deploy/systemd: valid for systemd-analyze in a fresh root, hardened, ready
by sd_notify, and their example settings files accepted by every service."""

from __future__ import annotations

import importlib
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from common.config import describe, env_name, load_settings
from wharf import systemd

DEPLOY = Path(__file__).resolve().parents[1] / "deploy" / "systemd"
UNITS = sorted(DEPLOY.glob("*.service"))
SERVICES = ("chartsvc", "results", "console")
HARDENING = (
    "DynamicUser=yes",
    "ProtectSystem=strict",
    "NoNewPrivileges=yes",
    "ProtectHome=yes",
    "PrivateTmp=yes",
    "CapabilityBoundingSet=",
    "UMask=0077",
)
needs_systemd = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed"
)


def directives(unit: Path) -> list[str]:
    return [line for line in unit.read_text().splitlines() if line and line[0] not in "#;["]


@pytest.fixture
def fresh_root(tmp_path: Path) -> Path:
    """A root with systemd's own units, the Wharf units installed, and a ``wharf`` to run."""
    (tmp_path / "usr/lib/systemd").mkdir(parents=True)
    shutil.copytree("/usr/lib/systemd/system", tmp_path / "usr/lib/systemd/system", symlinks=True)
    units = tmp_path / "etc/systemd/system"
    units.mkdir(parents=True)
    for unit in UNITS:
        shutil.copy(unit, units)
    for program in ("opt/wharf/venv/bin/wharf", "bin/sh"):
        (tmp_path / program).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / program).write_text("#!/bin/sh\n")
        (tmp_path / program).chmod(0o755)
    return tmp_path


@needs_systemd
def test_units_verify_in_a_fresh_root(fresh_root: Path) -> None:
    units = [f"etc/systemd/system/{unit.name}" for unit in UNITS]
    result = subprocess.run(
        ["systemd-analyze", "verify", f"--root={fresh_root}", *units],
        cwd=fresh_root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no unknown keys, no bad values, executables found


@needs_systemd
def test_units_expose_little(fresh_root: Path) -> None:
    units = [f"etc/systemd/system/{unit.name}" for unit in UNITS]
    analyze = ["systemd-analyze", "security", "--offline=true", "--threshold=20"]
    result = subprocess.run(
        [*analyze, f"--root={fresh_root}", *units],
        cwd=fresh_root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout  # every unit's exposure at most 2.0 of 10


def test_every_service_and_the_simulator_has_a_hardened_unit() -> None:
    assert [u.name for u in UNITS] == [f"wharf-{n}.service" for n in sorted([*SERVICES, "kubesim"])]
    for unit in UNITS:
        lines = directives(unit)
        for wanted in HARDENING:
            assert wanted in lines, (unit.name, wanted)
        assert any(line.startswith("StateDirectory=wharf/") for line in lines), unit.name
    for service in SERVICES:
        lines = directives(DEPLOY / f"wharf-{service}.service")
        assert "Type=notify" in lines
        [start] = [line for line in lines if line.startswith("ExecStart=")]
        assert f" serve {service} " in start
        assert f"Environment={env_name(service + '.data-dir')}=/var/lib/wharf/{service}" in lines
        # glibc's allocator gives a burst's memory back (results_events_flood: +13 MB, not +30)
        assert "Environment=PYTHONMALLOC=malloc" in lines


def test_the_example_settings_are_accepted_by_every_service() -> None:
    for service in SERVICES:
        settings_class = importlib.import_module(f"{service}.settings").Settings
        load_settings(settings_class, config_file=DEPLOY / "wharf.yaml")
    names = {
        env_name(info.key)
        for service in SERVICES
        for info in describe(importlib.import_module(f"{service}.settings").Settings)
    }
    assigned = [
        line.split("=", 1)[0]
        for line in (DEPLOY / "wharf.env").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert assigned
    assert set(assigned) <= names


def test_notify_reaches_an_abstract_socket() -> None:
    name = f"wharf-test-{id(object())}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind("\0" + name)
        listener.settimeout(5)
        assert systemd.notify("READY=1", {"NOTIFY_SOCKET": "@" + name})
        assert listener.recv(100) == b"READY=1"
    assert not systemd.notify("READY=1", {})
