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
from collections.abc import Mapping
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


DryRun = Literal["none", "client", "server"]
Wait = Literal["none", "watcher", "legacy"]


def _dry_run(value: bool | str | None) -> DryRun:
    """``true`` is a server-side dry run (what the service always did), ``false``/None none."""
    if value is True:
        return "server"
    if value in ("client", "server"):
        return "client" if value == "client" else "server"
    return "none"


@attrs.frozen
class WriteOptions:
    """The ``helm install``/``helm upgrade`` options a write sets beyond chart, name and values,
    as Helm 4's CLI names them. :meth:`helm_options` sends each under the name helm-c reads; helm-c
    refuses an option the action does not have, so install-only and upgrade-only ones go only with
    their action.
    """

    dry_run_mode: DryRun = attrs.field(default="none", converter=_dry_run)
    """``server``: rendered and sent to the API server with ``dryRun=All``, nothing stored or
    changed (``--dry-run=server``); ``client``: rendered without the cluster's validation."""
    wait: Wait = "none"
    """``watcher`` (kstatus watches) or ``legacy`` (polling) wait until the objects are ready;
    ``none`` is Helm 4's ``hookOnly`` default (only hooks are waited for)."""
    timeout: int | None = None
    """Seconds to wait for hooks and, with ``wait``, readiness (Helm's default: 300)."""
    rollback_on_failure: bool = False
    """``--rollback-on-failure`` (Helm 3's ``--atomic``): undo a failed install or upgrade."""
    description: str | None = None
    labels: Mapping[str, str] = attrs.field(factory=dict)
    force: bool = False
    """``--force-replace``: replace objects instead of patching them; sent with client-side apply,
    which replacement needs."""
    force_conflicts: bool = False
    """``--force-conflicts``: server-side apply takes over the fields another manager set (a
    ``kubectl scale``'s replicas, say) instead of failing on the conflict; not with ``force``."""
    skip_crds: bool = False
    create_namespace: bool = False
    """install only: create the release namespace when it is missing."""
    reset_values: bool = False
    """upgrade only: the chart's defaults and the given values only, nothing of the release's."""
    reuse_values: bool = False
    """upgrade only: the given values merged over the release's."""
    reset_then_reuse_values: bool = False
    """upgrade only: as ``reuse_values``, but the new chart's defaults underneath."""
    max_history: int | None = None
    """upgrade only: revisions kept (older ones are deleted); Helm's default 10 on the CLI."""

    @property
    def dry_run(self) -> bool:
        return self.dry_run_mode != "none"

    def _wait(self) -> str | None:
        if self.wait != "none":
            return self.wait
        # Undoing a failed write needs to know it failed: as Helm, rollback-on-failure waits.
        return "watcher" if self.rollback_on_failure else None

    def helm_options(self, action: Action = "install") -> dict[str, Any]:
        options: dict[str, Any] = {
            "dry_run": self.dry_run_mode if self.dry_run else None,
            "wait": self._wait(),
            "timeout_seconds": self.timeout,
            "rollback_on_failure": self.rollback_on_failure,
            "description": self.description,
            "labels": dict(self.labels) or None,
            "skip_crds": self.skip_crds,
        }
        if self.force:
            options |= {"force_replace": True, "server_side_apply": "false"}
        if self.force_conflicts:
            options["force_conflicts"] = True
        if action == "install":
            options["create_namespace"] = self.create_namespace
        else:
            options |= {
                "reset_values": self.reset_values,
                "reuse_values": self.reuse_values,
                "reset_then_reuse_values": self.reset_then_reuse_values,
                "max_history": self.max_history,
            }
        return {k: v for k, v in options.items() if v not in (None, False)}


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
    given = {"namespace": namespace, **options.helm_options(action)}
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
