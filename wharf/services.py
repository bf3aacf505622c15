"""The services ``wharf`` serves: a literal table, one row per service.

Each row holds the service's settings class, its default port, how to add its own subcommands, and
how to build its application. The application factory is imported when it is called, not when this
module is: ``wharf results gate`` should not pay for importing the Helm engine or the console.
Every factory has the same shape, ``create_app(settings, *, environ=...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

import chartsvc.commands
import chartsvc.settings
import console.commands
import console.settings
import results.commands
import results.settings


@dataclass(frozen=True, slots=True)
class Service:
    name: str
    port: int
    settings: type[Any]
    register_commands: Callable[[Any], None]
    create_app: Callable[[Any, Mapping[str, str]], web.Application]


def _chartsvc_app(settings: Any, environ: Mapping[str, str]) -> web.Application:
    from chartsvc.app import create_app

    return create_app(settings, environ=environ)


def _results_app(settings: Any, environ: Mapping[str, str]) -> web.Application:
    from results.app import create_app

    return create_app(settings, environ=environ)


def _console_app(settings: Any, environ: Mapping[str, str]) -> web.Application:
    from console.app import create_app

    return create_app(settings, environ=environ)


SERVICES: Mapping[str, Service] = {
    "chartsvc": Service(
        "chartsvc", 8080, chartsvc.settings.Settings, chartsvc.commands.register, _chartsvc_app
    ),
    "results": Service(
        "results", 8081, results.settings.Settings, results.commands.register, _results_app
    ),
    "console": Service(
        "console", 8082, console.settings.Settings, console.commands.register, _console_app
    ),
}
