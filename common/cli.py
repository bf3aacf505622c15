"""The ``wharf`` command: serve a service, run the cluster simulator, and service admin commands.

This is the only module that reads argv and the environment. Services are found by name
(``<service>.app.create_app`` and ``<service>.settings.Settings``) through importlib, so ``common``
keeps importing no service, and a service that is not part of this build is reported, not crashed on.
A service may add its own subcommands in ``<service>/commands.py`` (``register(subparsers)``).
"""

from __future__ import annotations

import argparse
import enum
import errno
import importlib
import importlib.util
import inspect
import os
import socket
import sys
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from aiohttp import web

from common import systemd
from common.app import wharf_version
from common.config import SERVICE_SECTIONS, ConfigError, describe, load_settings
from common.logs import AccessLogger, configure_logging

DEFAULT_PORTS = {"chartsvc": 8080, "results": 8081, "console": 8082}
#: Seconds in-flight requests get to finish after SIGTERM before the server stops anyway.
SHUTDOWN_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 3.0


def service_available(service: str) -> bool:
    try:
        return importlib.util.find_spec(f"{service}.app") is not None
    except ModuleNotFoundError:
        return False


def settings_args(parser: argparse.ArgumentParser) -> None:
    """The options every command that reads settings takes: ``--config`` and ``--set``."""
    parser.add_argument("--config", type=Path, help="YAML settings file")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one setting (repeatable), e.g. chartsvc.security.mode=FULL",
    )


def load_service_settings(service: str, args: argparse.Namespace) -> Any:
    """Settings of ``service`` from defaults, ``--config``, the environment and ``--set``."""
    settings_cls = importlib.import_module(f"{service}.settings").Settings
    return load_settings(
        settings_cls, config_file=args.config, environ=os.environ, overrides=args.overrides
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wharf",
        description="Wharf: chartsvc (Helm over HTTP and MCP), results (test results and "
        "coverage), console (multi-cluster Kubernetes console), and a cluster simulator.",
    )
    parser.add_argument("--version", action="version", version=f"wharf {wharf_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sub.add_parser("version", help="print the version").set_defaults(func=_version)
    sub.add_parser(
        "config-docs", help="print every setting of every service as Markdown"
    ).set_defaults(func=_config_docs)
    serve = sub.add_parser("serve", help="run a service")
    serve.add_argument("service", choices=SERVICE_SECTIONS)
    settings_args(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, help="port (8080 chartsvc, 8081 results, 8082 console)")
    serve.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    serve.add_argument(
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="text lines, or one JSON object per line for log shippers",
    )
    serve.set_defaults(func=_serve)
    probe = sub.add_parser(
        "probe",
        help="exit 0 when a service on this host answers its liveness check (health checks)",
    )
    probe.add_argument(
        "--port", type=int, action="append", help="port(s); default 8080, 8081, 8082"
    )
    probe.set_defaults(func=_probe)
    # Parsed by the simulator itself (see main); listed here so --help shows it.
    sub.add_parser("kubesim", help="run the Kubernetes API server simulator (--help for options)")
    for service in SERVICE_SECTIONS:
        module = _optional_module(f"{service}.commands")
        if module is not None:
            module.register(sub)
    return parser


def _optional_module(name: str) -> ModuleType | None:
    try:
        if importlib.util.find_spec(name) is None:
            return None
    except ModuleNotFoundError:
        return None
    return importlib.import_module(name)


def _version(_: argparse.Namespace) -> int:
    print(f"wharf {wharf_version()}")
    return 0


def config_docs() -> str:
    """docs/configuration.md: every setting, its type, default and meaning (a test keeps it current)."""
    lines = [
        "# Configuration",
        "",
        "Every setting of every service. Sources, later ones winning: the defaults below, the YAML file",
        "given with `--config` (nested or dotted keys), the environment (upper case, `.` and `-` as `_`:",
        "`CHARTSVC_SECURITY_MODE`), and `--set key=value`. An unknown key or a bad value stops start-up",
        "with exit code 2. Generated by `wharf config-docs`.",
    ]
    for service in SERVICE_SECTIONS:
        module = _optional_module(f"{service}.settings")
        if module is None:
            continue
        lines += [
            "",
            f"## {service}",
            "",
            "| key | type | default | meaning |",
            "|---|---|---|---|",
        ]
        for info in describe(module.Settings):
            default = "(secret)" if info.secret else _show_default(info.default)
            doc = info.doc.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{info.key}` | {info.type_name} | {default} | {doc} |")
    return "\n".join(lines) + "\n"


def _show_default(value: Any) -> str:
    if value is None or value == ():
        return "—"
    shown = value.value if isinstance(value, enum.Enum) else value
    return f"`{shown}`"


def _config_docs(_: argparse.Namespace) -> int:
    sys.stdout.write(config_docs())
    return 0


def _serve(args: argparse.Namespace) -> int:
    if _optional_module(f"{args.service}.settings") is None:
        print(f"wharf: service {args.service} is not part of this build", file=sys.stderr)
        return 2
    settings = load_service_settings(args.service, args)  # bad settings stop start-up first
    if not service_available(args.service):
        print(f"wharf: service {args.service} is not part of this build", file=sys.stderr)
        return 2
    port = args.port if args.port is not None else DEFAULT_PORTS[args.service]
    if port_in_use(args.host, port):  # before any state opens
        return _port_taken(args.host, port)
    configure_logging(args.log_level, json_lines=args.log_format == "json")
    app = create_service_app(args.service, settings)

    def announce(_: str) -> None:
        print(f"{args.service} listening on http://{_url_host(args.host)}:{port}", flush=True)
        systemd.notify("READY=1", os.environ)

    async def stopping(_: web.Application) -> None:
        systemd.notify("STOPPING=1", os.environ)

    app.on_shutdown.insert(0, stopping)

    try:
        web.run_app(
            app,
            host=args.host,
            port=port,
            access_log_class=AccessLogger,
            shutdown_timeout=SHUTDOWN_TIMEOUT_S,
            handle_signals=True,
            print=announce,
        )
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        return _port_taken(args.host, port)  # taken between the check and the bind
    return 0


def port_in_use(host: str, port: int) -> bool:
    """Whether something listens on ``host:port`` (a bind as the server makes it fails)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def _port_taken(host: str, port: int) -> int:
    print(
        f"wharf: {_url_host(host)}:{port} is already in use by another program; "
        "stop it or choose another port with --port",
        file=sys.stderr,
    )
    return 1


def _probe(args: argparse.Namespace) -> int:
    """The container image's health check: one image serves any of the three services, so by
    default any default port that answers ``UP`` will do."""
    for port in args.port or DEFAULT_PORTS.values():
        url = f"http://127.0.0.1:{port}/actuator/health/liveness"
        try:
            with urllib.request.urlopen(url, timeout=PROBE_TIMEOUT_S) as resp:
                if resp.status == 200:
                    return 0
        except OSError:
            continue
    print("wharf: no service answered its liveness check", file=sys.stderr)
    return 1


def create_service_app(service: str, settings: Any) -> web.Application:
    """``<service>.app.create_app(settings)``, as ``serve`` builds it; for service commands too."""
    create_app: Callable[..., web.Application] = importlib.import_module(
        f"{service}.app"
    ).create_app
    # A service that reads the environment (KUBECONFIG, HOME) says so by taking it.
    if "environ" in inspect.signature(create_app).parameters:
        return create_app(settings, environ=dict(os.environ))
    return create_app(settings)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _kubesim(argv: list[str]) -> int:
    module = _optional_module("common.kubesim.cli")
    if module is None:
        print("wharf: the cluster simulator is not part of this build", file=sys.stderr)
        return 2
    configure_logging("INFO")
    result: int = module.main(argv)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["kubesim"]:
        return _kubesim(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
    except ConfigError as exc:
        print(f"wharf: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return result


if __name__ == "__main__":
    sys.exit(main())
