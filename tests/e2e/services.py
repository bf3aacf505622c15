"""The three services as a new user starts them (``wharf.services``): default settings, a data dir
of their own, no cluster. Chartsvc runs in FULL mode with ``KEY``, and ``WRITE_HEADERS`` carry what
each service's access gate wants, so that a write reaches validation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import aiohttp
from aiohttp import web

from common.config import load_settings
from wharf.services import SERVICES as ROWS

KEY = "front-door-key"
ADMIN_PASSWORD = "pw-for-tests"
#: Headers a caller sends so that the access gate lets a write through to validation.
WRITE_HEADERS = {
    "chartsvc": {"X-API-Key": KEY},
    "results": {},
    "console": {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)},
}
SETTINGS = {
    "chartsvc": (
        "chartsvc.data-dir={tmp}/chartsvc",
        "chartsvc.rest.temp-dir={tmp}/tmp",
        "chartsvc.security.mode=FULL",
        f"chartsvc.security.api-key={KEY}",
    ),
    "results": ("results.data-dir={tmp}/results",),
    "console": (
        "console.data-dir={tmp}/console",
        "console.clusters.impersonate=off",
        f"console.security.admin.password={ADMIN_PASSWORD}",
    ),
}


def _factory(name: str) -> Callable[[Path], web.Application]:
    def make(tmp: Path) -> web.Application:
        row = ROWS[name]
        overrides = [item.replace("{tmp}", str(tmp)) for item in SETTINGS[name]]
        return row.create_app(load_settings(row.settings, overrides=overrides), {})

    return make


SERVICES: dict[str, Callable[[Path], web.Application]] = {name: _factory(name) for name in SETTINGS}
