"""``/about``: every field, nothing secret, and what open mode withholds until sign-in."""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from kubesim import Simulator
from kubesim.http import differences
from tests.addresses import free_port
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN, ADMIN_PASSWORD, kubeconfig_text

WITHHELD = ["security.adminUsername", "clusterStore.location", "files.allowedRoots"]


async def test_open_mode_withholds_until_sign_in(console_app: ConsoleApp, tmp_path: Path) -> None:
    client = await console_app()
    resp = await client.get("/api/v1/about")
    body = await resp.json()
    assert ADMIN_PASSWORD not in await resp.text()
    assert body["withheld"] == WITHHELD
    assert "adminUsername" not in body["security"]
    assert "location" not in body["clusterStore"]
    assert "allowedRoots" not in body["files"]
    assert body["security"] == {
        "mode": "open",
        "openMode": True,
        "authenticated": False,
        "adminPasswordSet": True,
        "sessionTimeoutMinutes": 30,
    }
    assert body["clusterCount"] == 2
    assert body["clusterStore"] == {"backend": "sqlite", "persistent": True}
    assert body["ai"] == {"enabled": False, "provider": None, "model": None, "apiKeySet": False}
    assert body["files"] == {
        "enabled": False,
        "writable": False,
        "maxReadBytes": 1048576,
        "maxWriteBytes": 1048576,
    }
    assert body["version"]

    signed_in = await (await client.get("/api/v1/about", headers=ADMIN)).json()
    assert signed_in["withheld"] == []
    assert signed_in["security"]["adminUsername"] == "admin"
    assert signed_in["security"]["authenticated"] is True
    assert signed_in["clusterStore"]["location"] == str(tmp_path / "console" / "clusters.db")
    assert signed_in["files"]["allowedRoots"] == ["/"]


async def test_closed_mode_shows_everything_to_the_admin(console_app: ConsoleApp) -> None:
    client = await console_app("security.open-mode=false")
    body = await (await client.get("/api/v1/about", headers=ADMIN)).json()
    assert body["security"]["mode"] == "closed"
    assert body["withheld"] == []


async def test_gates_ai_and_store_settings_are_reported(console_app: ConsoleApp) -> None:
    client = await console_app(
        "files.enabled=true",
        "files.writable=true",
        "ai.provider=anthropic",
        "ai.api-key=sk-not-shown",
        "ai.model=claude",
        "clusters.store.backend=memory",
    )
    resp = await client.get("/api/v1/about")
    body = await resp.json()
    assert "sk-not-shown" not in await resp.text()
    assert body["ai"] == {
        "enabled": True,
        "provider": "anthropic",
        "model": "claude",
        "apiKeySet": True,
    }
    assert (body["files"]["enabled"], body["files"]["writable"]) == (True, True)
    assert body["clusterStore"] == {"backend": "memory", "persistent": False}


async def test_simulator_state(console_app: ConsoleApp, sim: Simulator, tmp_path: Path) -> None:
    port = free_port()
    doc = yaml.safe_load(kubeconfig_text(sim))
    dead = {
        "name": "dead",
        "cluster": {**doc["clusters"][0]["cluster"], "server": f"https://127.0.0.1:{port}"},
    }
    doc["clusters"].append(dead)
    doc["contexts"].append({"name": "dead", "context": {"cluster": "dead", "user": "alpha"}})
    path = tmp_path / "with-dead"
    path.write_text(yaml.safe_dump(doc))
    client = await console_app(environ={"KUBECONFIG": str(path)})
    started = time.monotonic()
    body = await (await client.get("/api/v1/about")).json()
    assert time.monotonic() - started < 3
    known = [dict(d) for d in differences.differences()]  # the simulator's README, as listed
    assert body["simulator"] == {
        "detected": True,
        "clusters": [
            {"id": "alpha", "simulator": True, "serverVersion": "v1.32.4", "differences": known},
            {"id": "dead", "simulator": None, "serverVersion": None, "differences": []},
        ],
    }
    assert {"Validation", "Not served"} <= {d["area"] for d in known}
    config = await (await client.get("/api/v1/clusters/alpha/config")).json()
    assert (config["simulator"], config["serverVersion"]) == (True, "v1.32.4")
    # The config view shows where runtime clusters live to every reader; only /about withholds.
    assert "withheld" not in config
    assert config["storage"] == f"sqlite:{tmp_path / 'console' / 'clusters.db'}"
    assert config["persistent"] is True
    signed_in = await (await client.get("/api/v1/clusters/alpha/config", headers=ADMIN)).json()
    assert signed_in["storage"] == config["storage"]
