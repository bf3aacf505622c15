"""``helm install`` and ``helm upgrade`` through helm-c, with Helm's client-side OpenAPI pass off.

Helm 4 builds every write's objects with kubectl's validator, which, when the API server supports
server-side field validation (every Kubernetes release Helm 4 supports), validates nothing itself:
it defers to the server, and Helm then sends the writes as server-side apply with
``fieldValidation=Strict`` (or, for a release first installed with client-side apply, as plain
writes the server checks under its own default). Reaching that decision costs the fetch and parse
of the cluster's OpenAPI document on every call: measured against the simulator, 48 of an
install's 68 ms of CPU and 90 of an upgrade's 130. Turning the pass off
(``disable_openapi_validation``, ``helm install --disable-openapi-validation``) changes no outcome,
which ``tests/chartsvc/test_releases_errors.py`` checks: an unknown field is still refused by the
cluster with its own message.

helm_python does not expose the option, so ``write`` calls helm-c directly with the arguments
``Config.install``/``Config.upgrade`` pass, plus the option. That reaches into helm_python's
private call layer (pinned to 0.2.x in ``pyproject.toml``); when the layer is missing (a future
helm_python) the public methods are used instead, with the pass back on.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import attrs
import helm_python as helm

try:
    from helm_python import _native

    _DIRECT = all(
        hasattr(obj, name)
        for obj, name in (
            (_native, "call_string"),
            (helm.Config, "_raw"),
            (helm.Config, "_chart_args"),
            (helm.Config, "_context_arg"),
        )
    )
except ImportError:  # pragma: no cover - only with a helm_python other than the pinned one
    _DIRECT = False

#: The option added to every write: see the module docstring for why it changes no outcome.
SKIP_CLIENT_VALIDATION = {"disable_openapi_validation": True}

Action = Literal["install", "upgrade"]


@attrs.frozen
class WriteOptions:
    """The ``helm install``/``helm upgrade`` options a write sets beyond chart, name and values.

    A Helm CLI option the service comes to offer is a field here and an entry in
    :meth:`helm_options`, under the name helm-c reads (the one ``helm_python.Config.install``
    sends: ``timeout_seconds``, ``wait``, ``create_namespace``, ``description``, ...).
    """

    dry_run: bool = False
    """Server-side dry run: rendered and sent to the API server with ``dryRun=All``; nothing is
    stored or changed (``helm install --dry-run=server``)."""

    def helm_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self.dry_run:
            options["dry_run"] = "server"
        return options


def write(
    action: Action,
    config: helm.Config,
    chart: helm.Chart,
    name: str,
    values: dict[str, Any] | None,
    *,
    namespace: str,
    options: WriteOptions,
) -> dict[str, Any]:
    """``helm install`` or ``helm upgrade`` of ``chart`` as release ``name``: Helm's release
    summary. An upgrade with ``values`` None reuses the release's values (Helm's CLI default)."""
    given = {"namespace": namespace, **options.helm_options()}
    if not _DIRECT:
        method = config.install if action == "install" else config.upgrade
        public = {"timeout" if k == "timeout_seconds" else k: v for k, v in given.items()}
        return method(chart, name, values, **public)
    handle, reference = config._chart_args(chart)
    payload = _native.call_string(
        f"helm_{action}",
        config._raw(),
        config._context_arg(None),
        handle,
        reference,
        name,
        None if values is None else json.dumps(values),
        json.dumps({**given, **SKIP_CLIENT_VALIDATION}),
    )
    summary: dict[str, Any] = json.loads(payload)
    return summary
