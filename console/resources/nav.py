"""The left-nav registry: a cluster's listable kinds sorted into the console's categories.

Built-in kinds have a fixed category and order (Lens's and the original console's layout); custom
kinds go to "Custom Resources" grouped by API group, except the Gateway API's kinds, which get their
own category when ``gateway.networking.k8s.io`` is served, and the VerticalPodAutoscaler, which
joins Autoscaling. Pure: it reads a :class:`Catalog`, never a cluster.
"""

from __future__ import annotations

import attrs

from console.resources.catalog import GATEWAY_GROUP, VPA_GROUP, Catalog, Kind

CATEGORIES = (
    ("cluster", "Cluster"),
    ("workloads", "Workloads"),
    ("autoscaling", "Autoscaling"),
    ("config", "Config"),
    ("network", "Network"),
    ("gateway", "Gateway"),
    ("storage", "Storage"),
    ("access-control", "Access Control"),
    ("custom-resources", "Custom Resources"),
)
# (group, plural) → category, in display order within each category: the built-in kinds and
# the Gateway API's.
_KNOWN: dict[tuple[str, str], str] = {
    ("", "namespaces"): "cluster",
    ("", "nodes"): "cluster",
    ("", "events"): "cluster",
    ("apiregistration.k8s.io", "apiservices"): "cluster",
    ("certificates.k8s.io", "certificatesigningrequests"): "cluster",
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): "cluster",
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): "cluster",
    ("", "componentstatuses"): "cluster",
    ("", "pods"): "workloads",
    ("apps", "deployments"): "workloads",
    ("apps", "daemonsets"): "workloads",
    ("apps", "statefulsets"): "workloads",
    ("apps", "replicasets"): "workloads",
    ("", "replicationcontrollers"): "workloads",
    ("batch", "jobs"): "workloads",
    ("batch", "cronjobs"): "workloads",
    ("", "podtemplates"): "workloads",
    ("apps", "controllerrevisions"): "workloads",
    ("autoscaling", "horizontalpodautoscalers"): "autoscaling",
    (VPA_GROUP, "verticalpodautoscalers"): "autoscaling",
    ("", "configmaps"): "config",
    ("", "secrets"): "config",
    ("", "resourcequotas"): "config",
    ("", "limitranges"): "config",
    ("policy", "poddisruptionbudgets"): "config",
    ("scheduling.k8s.io", "priorityclasses"): "config",
    ("node.k8s.io", "runtimeclasses"): "config",
    ("coordination.k8s.io", "leases"): "config",
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): "config",
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): "config",
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): "config",
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): "config",
    ("", "services"): "network",
    ("", "endpoints"): "network",
    ("discovery.k8s.io", "endpointslices"): "network",
    ("networking.k8s.io", "ingresses"): "network",
    ("networking.k8s.io", "ingressclasses"): "network",
    ("networking.k8s.io", "networkpolicies"): "network",
    ("networking.k8s.io", "ipaddresses"): "network",
    ("networking.k8s.io", "servicecidrs"): "network",
    ("", "persistentvolumeclaims"): "storage",
    ("", "persistentvolumes"): "storage",
    ("storage.k8s.io", "storageclasses"): "storage",
    ("storage.k8s.io", "volumeattributesclasses"): "storage",
    ("storage.k8s.io", "volumeattachments"): "storage",
    ("storage.k8s.io", "csidrivers"): "storage",
    ("storage.k8s.io", "csinodes"): "storage",
    ("storage.k8s.io", "csistoragecapacities"): "storage",
    ("", "serviceaccounts"): "access-control",
    ("rbac.authorization.k8s.io", "roles"): "access-control",
    ("rbac.authorization.k8s.io", "rolebindings"): "access-control",
    ("rbac.authorization.k8s.io", "clusterroles"): "access-control",
    ("rbac.authorization.k8s.io", "clusterrolebindings"): "access-control",
    ("apiextensions.k8s.io", "customresourcedefinitions"): "custom-resources",
    (GATEWAY_GROUP, "gatewayclasses"): "gateway",
    (GATEWAY_GROUP, "gateways"): "gateway",
    (GATEWAY_GROUP, "httproutes"): "gateway",
    (GATEWAY_GROUP, "grpcroutes"): "gateway",
    (GATEWAY_GROUP, "tlsroutes"): "gateway",
    (GATEWAY_GROUP, "tcproutes"): "gateway",
    (GATEWAY_GROUP, "udproutes"): "gateway",
    (GATEWAY_GROUP, "referencegrants"): "gateway",
    (GATEWAY_GROUP, "backendtlspolicies"): "gateway",
}
_ORDER = {key: i for i, key in enumerate(_KNOWN)}
_GROUP_DEFAULT = {
    "networking.k8s.io": "network",
    "discovery.k8s.io": "network",
    "storage.k8s.io": "storage",
    "rbac.authorization.k8s.io": "access-control",
}


def category_of(kind: Kind) -> str:
    known = _KNOWN.get((kind.group, kind.resource))
    if known is not None:
        return known
    if kind.group == GATEWAY_GROUP:
        return "gateway"
    if kind.builtin:
        return _GROUP_DEFAULT.get(kind.group, "cluster")
    return "custom-resources"


@attrs.frozen
class Nav:
    categories: tuple[tuple[str, str, tuple[Kind, ...]], ...]


def build(catalog: Catalog) -> Nav:
    grouped: dict[str, list[Kind]] = {cid: [] for cid, _ in CATEGORIES}
    for kind in catalog.listable():
        grouped[category_of(kind)].append(kind)
    out = []
    for cid, label in CATEGORIES:
        kinds = sorted(grouped[cid], key=_sort_key)
        if kinds or cid not in ("gateway",):
            out.append((cid, label, tuple(kinds)))
    return Nav(categories=tuple(out))


def _sort_key(kind: Kind) -> tuple[int, str, str]:
    rank = _ORDER.get((kind.group, kind.resource), len(_ORDER))
    return (rank, kind.group, kind.kind)
