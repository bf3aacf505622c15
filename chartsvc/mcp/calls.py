"""Every tool's call by operationId: the chart-side tools and the release tools."""

from __future__ import annotations

from collections.abc import Mapping

from chartsvc.mcp import chart_calls, release_calls
from chartsvc.mcp.services import Call

CALLS: Mapping[str, Call] = {**chart_calls.CALLS, **release_calls.CALLS}
