"""What every ``wharf`` command shares: logging set-up and the settings options.

The command itself (argv, the service table, ``serve``) lives in :mod:`wharf.cli`, the composition
root; a service's own subcommands (``<service>/commands.py``) use these helpers so every command
reads settings and logs the same way. Only the commands read the environment.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import TypeVar

from common.app import RequestIdFilter
from common.config import load_settings

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
#: Libraries whose DEBUG lines carry data, not events: aiosqlite logs every statement with its
#: parameters (session CSRF values, token hashes), so it stays at INFO whatever the level asked.
QUIET_LOGGERS = ("aiosqlite",)

S = TypeVar("S")


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.INFO, root.level))


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


def load_command_settings(settings_cls: type[S], args: argparse.Namespace) -> S:
    """``settings_cls`` from defaults, ``--config``, the environment and ``--set``."""
    return load_settings(
        settings_cls, config_file=args.config, environ=os.environ, overrides=args.overrides
    )
