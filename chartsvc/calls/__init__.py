"""One implementation per chart-service operation, by operationId, for every door.

A call is ``(services, validated arguments) -> Reply``: it reads the ``Validated`` the spec produced
(for a multipart operation the HTTP door puts the read :class:`~chartsvc.calls.form.ChartForm` in its
``body``), calls one domain function and encodes with ``chartsvc.encoders``. The HTTP routes
(``chartsvc.http.routes``) and the MCP tools (``chartsvc.mcp``) run exactly these, so both doors answer
with the same status and body. Nothing else belongs in a call: a call that needs more means domain
logic, which belongs in the domain. This package knows nothing of aiohttp's responses nor of MCP.
"""

from __future__ import annotations

from collections.abc import Mapping

from chartsvc.calls import charts, releases, repos
from chartsvc.calls.base import Call, Reply, Services

CALLS: Mapping[str, Call] = {**charts.CALLS, **repos.CALLS, **releases.CALLS}

__all__ = ["CALLS", "Call", "Reply", "Services"]
