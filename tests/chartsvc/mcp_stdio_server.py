"""A test-only stdio MCP server: ``wharf mcp`` plus the loopback allow-list the in-process tests use.

The outbound address guard is widened only in code (no setting feeds it), so a test whose stdio
server must reach the loopback fakes (hub, chart repository) launches this module instead of
``wharf mcp``: the same settings options and the same ``serve_stdio``, with ``address_allow``.
Run as ``python -m tests.chartsvc.mcp_stdio_server --set key=value ...`` from the repository root.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress

from chartsvc.app import create_app
from chartsvc.mcp.stdio import serve_stdio
from chartsvc.settings import Settings
from common.cli import configure_logging, load_command_settings, settings_args

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    settings_args(parser)
    settings = load_command_settings(Settings, parser.parse_args())
    configure_logging("WARNING")
    # environ={}: the cluster comes from chartsvc.kube.kubeconfig only, never from the test's home.
    asyncio.run(serve_stdio(create_app(settings, address_allow=LOOPBACK, environ={})))


if __name__ == "__main__":
    main()
