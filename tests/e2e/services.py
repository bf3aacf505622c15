"""The three services as a new user starts them: default settings, a data dir of their own, no
cluster. Chartsvc runs in FULL mode with ``KEY``, and ``WRITE_HEADERS`` carry what each
service's access gate wants, so that a write reaches validation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aiohttp import BasicAuth, web

from chartsvc.app import create_app as chartsvc_app
from chartsvc.settings import Settings as ChartsvcSettings
from common.config import load_settings
from console.app import create_app as console_app
from console.settings import Settings as ConsoleSettings
from results.app import create_app as results_app
from results.settings import Settings as ResultsSettings

KEY = "front-door-key"
ADMIN_PASSWORD = "pw-for-tests"
#: Headers a caller sends so that the access gate lets a write through to validation.
WRITE_HEADERS = {
    "chartsvc": {"X-API-Key": KEY},
    "results": {},
    "console": {"Authorization": BasicAuth("admin", ADMIN_PASSWORD).encode()},
}


def chartsvc(tmp: Path) -> web.Application:
    sets = [
        f"chartsvc.data-dir={tmp / 'chartsvc'}",
        f"chartsvc.rest.temp-dir={tmp / 'tmp'}",
        "chartsvc.security.mode=FULL",
        f"chartsvc.security.api-key={KEY}",
    ]
    return chartsvc_app(load_settings(ChartsvcSettings, overrides=sets), environ={})


def results(tmp: Path) -> web.Application:
    sets = [f"results.data-dir={tmp / 'results'}"]
    return results_app(load_settings(ResultsSettings, overrides=sets))


def console(tmp: Path) -> web.Application:
    sets = [
        f"console.data-dir={tmp / 'console'}",
        f"console.security.admin.password={ADMIN_PASSWORD}",
    ]
    return console_app(load_settings(ConsoleSettings, overrides=sets), environ={})


SERVICES: dict[str, Callable[[Path], web.Application]] = {
    "chartsvc": chartsvc,
    "results": results,
    "console": console,
}
