"""Helm releases on any cluster: the domain every door shares (chartsvc's routes and MCP tools, the
console's per-cluster Helm endpoints).

:class:`ReleaseService` installs, upgrades, rolls back, tests and uninstalls releases through
``chartsvc.helm`` and reads Helm's own records and the live objects with ``kubernetes-asyncio``; every
call takes the cluster as a :class:`ClusterTarget` (a kubeconfig and its context, or the in-cluster
account), never from settings; a call on one release names it as a :class:`ReleaseRef` (cluster,
namespace, name). It knows nothing of HTTP. A host builds one from the Helm adapter and a chart
source::

    helm = Helm(temp_dir=...)
    releases = ReleaseService(engine=helm.releases, charts=chart_source)
    target = ClusterTarget.from_kubeconfig(kube.parse(text), context)
    await releases.install(target, InstallRequest(release_name="web", chart_ref="repo/app"))
    await releases.status(ReleaseRef(target, "default", "web"))
    ...
    await releases.close(); helm.close()
"""

from __future__ import annotations

from chartsvc.clusters import ClusterTarget, ReleaseRef
from chartsvc.helm import (
    ClusterUnreachable,
    NamespaceNotFound,
    ReleaseExists,
    ReleaseFailed,
    ReleaseNotFound,
    RevisionNotFound,
    WriteOptions,
)
from chartsvc.releases.model import (
    DEFAULT_NAMESPACE,
    InstallRequest,
    InvalidNamespace,
    InvalidReleaseName,
    Release,
    ResourceStatus,
    TestResult,
    UpgradeRequest,
    check_namespace,
    check_release,
    check_release_name,
)
from chartsvc.releases.reads import ClusterReads
from chartsvc.releases.service import ChartSource, KeyedLocks, ReleaseService
from chartsvc.releases.stuck import StuckReleases

__all__ = [
    "DEFAULT_NAMESPACE",
    "ChartSource",
    "ClusterReads",
    "ClusterTarget",
    "ClusterUnreachable",
    "InstallRequest",
    "InvalidNamespace",
    "InvalidReleaseName",
    "KeyedLocks",
    "NamespaceNotFound",
    "Release",
    "ReleaseExists",
    "ReleaseFailed",
    "ReleaseNotFound",
    "ReleaseRef",
    "ReleaseService",
    "ResourceStatus",
    "RevisionNotFound",
    "StuckReleases",
    "TestResult",
    "UpgradeRequest",
    "WriteOptions",
    "check_namespace",
    "check_release",
    "check_release_name",
]
