"""The one table of chart-service operations: id, method, path, group, mutating flag and summary.

Everything that must agree on "is this a write?" reads this table: the access gate
(``chartsvc.gate``), the OpenAPI document (summaries, ``x-mutating``, the 401/403 responses, added at
load time by :func:`annotate_spec`) and MCP tool registration (``chartsvc.mcp``: the tool name is the
operationId, its description the summary, its annotations the ``hints`` here; mutating tools exist
only where mutations are enabled). Declaring an operation here does not register a route: the release
group is declared ahead of its implementation so that the gate covers it the moment it lands. This
module knows nothing of aiohttp.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class Hints:
    """What an agent may assume about an operation (the MCP tool annotations)."""

    read_only: bool
    destructive: bool = False  # false: the operation only adds to what exists
    idempotent: bool = True  # repeating the same call changes nothing more


READS = Hints(read_only=True)
REFRESHES = Hints(read_only=False)  # rewrites local caches (repository indexes) only
ADDS = Hints(read_only=False, idempotent=False)
ADDS_ONCE = Hints(read_only=False)  # a repeat finds the same thing there and leaves it
REPLACES = Hints(read_only=False, destructive=True, idempotent=False)
REMOVES = Hints(read_only=False, destructive=True)


@attrs.frozen
class Operation:
    operation_id: str
    method: str
    path: str  # relative to the base path, as in the spec
    group: str
    summary: str
    mutating: bool = False
    hints: Hints = READS
    # Operations whose input or output is a chart archive stay HTTP-only: a tool names charts by
    # chartRef and answers JSON or text, never server-local paths or base64 archives.
    tool: bool = True
    progress: bool = False  # long-running: the tool reports MCP progress while it works


def _op(
    op_id: str,
    route: str,
    group: str,
    summary: str,
    *,
    mutating: bool = False,
    hints: Hints = READS,
    tool: bool = True,
    progress: bool = False,
) -> Operation:
    method, path = route.split(" ", 1)
    return Operation(op_id, method, path, group, summary, mutating, hints, tool, progress)


OPERATIONS: tuple[Operation, ...] = (
    # releases: declared for the gate; implemented by the release issue.
    _op("listReleases", "GET /releases", "releases", "List releases in a namespace"),
    _op("getReleaseStatus", "GET /releases/{name}", "releases", "Show a release's status"),
    _op(
        "installRelease",
        "POST /releases",
        "releases",
        "Install a chart",
        mutating=True,
        hints=ADDS,
        progress=True,
    ),
    _op(
        "installReleaseUpload",
        "POST /releases/upload",
        "releases",
        "Install an uploaded chart archive",
        mutating=True,
        hints=ADDS,
        tool=False,
    ),
    _op(
        "upgradeRelease",
        "PUT /releases/{name}",
        "releases",
        "Upgrade a release",
        mutating=True,
        hints=REPLACES,
        progress=True,
    ),
    _op(
        "upgradeReleaseUpload",
        "POST /releases/{name}/upgrade/upload",
        "releases",
        "Upgrade a release from an uploaded chart archive",
        mutating=True,
        hints=REPLACES,
        tool=False,
    ),
    _op(
        "uninstallRelease",
        "DELETE /releases/{name}",
        "releases",
        "Uninstall a release",
        mutating=True,
        hints=REMOVES,
    ),
    _op("getReleaseHistory", "GET /releases/{name}/history", "releases", "A release's revisions"),
    _op(
        "rollbackRelease",
        "POST /releases/{name}/rollback",
        "releases",
        "Roll a release back to a revision",
        mutating=True,
        hints=REPLACES,
        progress=True,
    ),
    _op(
        "testRelease",
        "POST /releases/{name}/test",
        "releases",
        "Run a release's test hooks",
        mutating=True,
        hints=ADDS,
        progress=True,
    ),
    _op("getReleaseValues", "GET /releases/{name}/values", "releases", "A release's values"),
    _op(
        "getReleaseManifest",
        "GET /releases/{name}/manifest",
        "releases",
        "A release's rendered manifest",
    ),
    _op("getReleaseNotes", "GET /releases/{name}/notes", "releases", "A release's notes"),
    _op("getReleaseHooks", "GET /releases/{name}/hooks", "releases", "A release's hooks"),
    _op(
        "getReleaseResources",
        "GET /releases/{name}/resources",
        "releases",
        "Status of a release's resources",
    ),
    # charts
    _op(
        "templateChart",
        "POST /charts/template",
        "charts",
        "Render a chart from a repository or OCI reference",
    ),
    _op(
        "templateChartUpload",
        "POST /charts/template/upload",
        "charts",
        "Render an uploaded chart archive",
        tool=False,
    ),
    _op(
        "createChart",
        "POST /charts/create",
        "charts",
        "Scaffold a new chart (helm create)",
        tool=False,
    ),
    _op("showChart", "GET /charts/show", "charts", "Show chart metadata, values, README and CRDs"),
    _op("showChartValues", "GET /charts/show/values", "charts", "Show a chart's default values"),
    _op("showChartReadme", "GET /charts/show/readme", "charts", "Show a chart's README"),
    _op("showChartMetadata", "GET /charts/show/chart", "charts", "Show a chart's Chart.yaml"),
    _op(
        "showChartCrds",
        "GET /charts/show/crds",
        "charts",
        "Show a chart's custom resource definitions",
    ),
    # repositories
    _op(
        "addRepository",
        "POST /repos",
        "repos",
        "Add a chart repository",
        mutating=True,
        hints=ADDS_ONCE,
    ),
    _op("listRepositories", "GET /repos", "repos", "List configured repositories"),
    _op(
        "removeRepository",
        "DELETE /repos/{name}",
        "repos",
        "Remove a chart repository",
        mutating=True,
        hints=REMOVES,
    ),
    _op(
        "updateRepository",
        "POST /repos/{name}/update",
        "repos",
        "Download a repository's index",
        hints=REFRESHES,
        progress=True,
    ),
    _op(
        "listRepositoryCharts",
        "GET /repos/{name}/charts",
        "repos",
        "List a repository's charts (latest version of each)",
    ),
    _op(
        "listChartVersions",
        "GET /repos/{name}/charts/{chart}/versions",
        "repos",
        "List a chart's versions, newest first",
    ),
    _op(
        "pullChart",
        "POST /repos/pull",
        "repos",
        "Download a chart archive (repository or OCI)",
        tool=False,
    ),
    _op(
        "updateAllRepositories",
        "POST /repos/update-all",
        "repos",
        "Download every repository's index",
        hints=REFRESHES,
        progress=True,
    ),
    _op(
        "pushChart",
        "POST /repos/push",
        "repos",
        "Push a chart archive to an OCI registry",
        mutating=True,
        hints=ADDS,
        tool=False,
    ),
    # hub and dependencies
    _op("searchHub", "GET /hub/search", "hub", "Search Artifact Hub for charts"),
    _op(
        "resolveDependencies",
        "POST /dependencies/resolve",
        "dependencies",
        "Resolve a chart's dependencies into Chart.lock content",
    ),
)

BY_ID: Mapping[str, Operation] = {op.operation_id: op for op in OPERATIONS}
MUTATING: frozenset[str] = frozenset(op.operation_id for op in OPERATIONS if op.mutating)

_GATE_RESPONSES = {
    "401": {"$ref": "#/components/responses/Unauthorized"},
    "403": {"$ref": "#/components/responses/Forbidden"},
}
# The contract gives every operation these; an operation's own entries for them win.
_SHARED_RESPONSES = {
    "400": {"$ref": "#/components/responses/BadRequest"},
    "404": {"$ref": "#/components/responses/NotFound"},
    "500": {"$ref": "#/components/responses/ServerError"},
}


def is_mutating(operation_id: str | None) -> bool:
    return operation_id in MUTATING


def annotate_spec(document: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the spec with each operation's summary, tag, ``x-mutating``, the shared 400/404/500
    and, on mutating operations, 401/403 from here.

    Raises ValueError for an operation the table does not declare, so the two cannot drift.
    """
    out = copy.deepcopy(dict(document))
    for path, item in out.get("paths", {}).items():
        for method, node in item.items():
            if method == "parameters":
                continue
            op = BY_ID.get(node.get("operationId", ""))
            if op is None or (op.method, op.path) != (method.upper(), path):
                raise ValueError(f"{method.upper()} {path} is not declared in chartsvc.operations")
            node["summary"] = op.summary
            node.setdefault("tags", [op.group])
            node["x-mutating"] = op.mutating
            node["responses"] = {**_SHARED_RESPONSES, **node.get("responses", {})}
            if op.mutating:
                node["responses"] = {**node.get("responses", {}), **_GATE_RESPONSES}
                node["security"] = [{"ApiKey": []}]
    return out
