"""The console's own errors: the contract's error table, as subclasses of ``common.errors``.

Each carries the contract's ``code``; ``cluster-refused`` comes from ``kubeclient.cluster_error``
(it keeps the cluster's own status), ``invalid-request`` from the foundation's ``BadRequest``.
Messages name what was wrong and never echo a kubeconfig or any other credential.
"""

from __future__ import annotations

from common.errors import BadRequest, Conflict, Forbidden, NotFound


class UnknownCluster(NotFound, code="unknown-cluster"):
    def __init__(self, cluster_id: str) -> None:
        super().__init__(f"no cluster with id {cluster_id!r}; GET /api/v1/clusters lists them")
        self.cluster_id = cluster_id


class InvalidCluster(BadRequest, code="invalid-cluster"):
    """A cluster definition that cannot work, refused before anything is registered or stored."""


class ClusterConflict(Conflict, code="cluster-conflict"): ...


class PortForwardFailed(BadRequest, code="port-forward-failed"): ...


class AiUnavailable(Conflict, code="ai-unavailable"):
    def __init__(self) -> None:
        super().__init__("no LLM is configured (console.ai.*); nothing was sent or spent")


class HelmFailed(BadRequest, code="helm-failed"): ...


class AdminRequired(Forbidden, code="admin-required"):
    """An operation the spec marks ``x-admin-only`` asked by a person outside the admin groups."""

    def __init__(self, groups: tuple[str, ...]) -> None:
        names = ", ".join(groups) or "(none configured)"
        super().__init__(
            f"this operation needs a person in the admin group ({names}; "
            "console.security.admin.groups)"
        )
