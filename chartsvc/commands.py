"""The chart service's ``wharf`` subcommands: ``wharf mcp`` serves its MCP tools over stdio.

It takes the same ``--config``/``--set`` settings as ``wharf serve chartsvc``. The MCP SDK is imported
only when the command runs, so other ``wharf`` commands do not pay for it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from chartsvc.settings import Settings
from common.cli import configure_logging, load_command_settings, settings_args


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve the chart service's MCP tools on stdin/stdout (for a locally launched agent)",
    )
    settings_args(parser)
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level (logs go to stderr; stdout carries the protocol)",
    )
    parser.set_defaults(func=_mcp)


def _mcp(args: argparse.Namespace) -> int:
    from chartsvc.app import create_app
    from chartsvc.mcp.stdio import serve_stdio

    settings = load_command_settings(Settings, args)
    configure_logging(args.log_level)
    asyncio.run(serve_stdio(create_app(settings, environ=dict(os.environ))))
    return 0
