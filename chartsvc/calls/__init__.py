"""One implementation per chart-service operation, by operationId, for every door.

A call is ``(services, validated arguments) -> Reply``: it reads the ``Validated`` the spec produced
(for a multipart operation the HTTP door puts the read :class:`~chartsvc.calls.form.ChartForm` in its
``body``), calls one domain function and encodes with ``chartsvc.encoders``. The HTTP routes
(``chartsvc.http.routes``) and the MCP tools (``chartsvc.mcp``) run exactly these, so both doors answer
with the same status and body. Nothing else belongs in a call: a call that needs more means domain
logic, which belongs in the domain. This package knows nothing of aiohttp's responses nor of MCP.
"""

from __future__ import annotations

# Imported for what they do on import: each files its calls in CALLS.
from chartsvc.calls import charts, releases, repos  # noqa: F401
from chartsvc.calls.base import CALLS, Call, Reply, Services

__all__ = ["CALLS", "Call", "Reply", "Services"]
