"""Helpers the console tests of both groups import: settings, kubeconfigs and credentials."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from common.config import load_settings
from console.keys import AUTH
from console.settings import Settings
from kubesim import Simulator
from tests.typing_support import Client

ADMIN_USER = "admin"
ADMIN_PASSWORD = "correct horse battery staple"
#: Headers carrying the admin's (or a wrong) HTTP Basic credentials: ``client.post(..., headers=ADMIN)``.
ADMIN = {"Authorization": aiohttp.encode_basic_auth(ADMIN_USER, ADMIN_PASSWORD)}
WRONG = {"Authorization": aiohttp.encode_basic_auth(ADMIN_USER, "wrong")}
#: The password of the people's console accounts (``add_people``), and alice's and bob's headers.
PEOPLE_PASSWORD = "a-Password-for-everyone-4321"
ALICE = {"Authorization": aiohttp.encode_basic_auth("alice", PEOPLE_PASSWORD)}
BOB = {"Authorization": aiohttp.encode_basic_auth("bob", PEOPLE_PASSWORD)}


def make_settings(data_dir: Path, *overrides: str, **values: Any) -> Settings:
    """Console settings under ``data_dir``; ``values`` are ``console.<key>`` with ``_`` for ``.``
    and ``-`` is spelled out in ``overrides`` (``"security.open-mode=false"``). Impersonation
    is off unless an override turns it on."""
    given = [
        f"console.data-dir={data_dir}",
        f"console.security.admin.password={ADMIN_PASSWORD}",
        # The simulators are on loopback, which the address guard refuses for runtime clusters.
        "console.clusters.allow-addresses=127.0.0.1",
    ]
    # The simulators' kubeconfig is system:masters, so impersonation would be on by default; the
    # contract's tests act as the console itself, and the identity tests turn it on themselves.
    given.append("console.clusters.impersonate=off")
    given += [f"console.{item}" for item in overrides]
    given += [f"console.{key.replace('__', '.')}={value}" for key, value in values.items()]
    return load_settings(Settings, overrides=given)


def stop_the_throttle_clock(client: Client) -> None:
    """Hold the sign-in throttle's time still: its first lock lasts 1 s, which a loaded machine
    can spend between two sign-ins, so a test of the lock must not let it run out."""
    client.app[AUTH].throttle.clock = lambda: 1000.0


def kubeconfig_text(sim: Simulator) -> str:
    return sim.kubeconfig_path.read_text("utf-8")


def merged_kubeconfig(sims: Sequence[Simulator], path: Path, *, current: str | None = None) -> Path:
    """One kubeconfig file holding every simulator's context (named after ``sim.context``)."""
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [],
        "users": [],
        "contexts": [],
    }
    for sim in sims:
        part = yaml.safe_load(kubeconfig_text(sim))
        for kind in ("clusters", "users", "contexts"):
            doc[kind].extend(part[kind])
    doc["current-context"] = current or sims[0].context
    path.write_text(yaml.safe_dump(doc, sort_keys=False), "utf-8")
    path.chmod(0o600)
    return path


async def add_people(client: Client) -> None:
    """alice (group team-a) and bob (group team-b) as accounts of ``client``'s console."""
    accounts = client.app[AUTH].accounts
    await accounts.add("alice", PEOPLE_PASSWORD, ["team-a"])
    await accounts.add("bob", PEOPLE_PASSWORD, ["team-b"])
