"""Legacy and aggregated (``apidiscovery.k8s.io/v2``) discovery documents built from the registry.

Field names and order follow the real documents in kube-apiserver's ``api/discovery`` fixtures.
"""

from __future__ import annotations

from typing import Any

from kubesim.machinery.registry import Registry, ResourceType

Doc = dict[str, Any]
AGGREGATED_CONTENT_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def _gv(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


def api_versions(server_address: str) -> Doc:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def api_group_list(registry: Registry) -> Doc:
    groups = []
    for name, versions in registry.groups().items():
        if not name:
            continue
        entries = [{"groupVersion": _gv(name, v), "version": v} for v in versions]
        groups.append({"name": name, "versions": entries, "preferredVersion": entries[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, name: str) -> Doc | None:
    versions = registry.groups().get(name)
    if not versions or not name:
        return None
    entries = [{"groupVersion": _gv(name, v), "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": entries,
        "preferredVersion": entries[0],
    }


def _aliases(rt: ResourceType) -> Doc:
    """``shortNames`` and ``categories``, named alike in both discovery formats; left out when empty."""
    return {
        k: list(v) for k, v in (("shortNames", rt.short_names), ("categories", rt.categories)) if v
    }


def _legacy_entry(rt: ResourceType) -> Doc:
    entry: Doc = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": list(rt.verbs),
        **_aliases(rt),
    }
    if rt.storage_version_hash:
        entry["storageVersionHash"] = rt.storage_version_hash
    return entry


def api_resource_list(registry: Registry, group: str, version: str) -> Doc | None:
    types = registry.in_group_version(group, version)
    if not types:
        return None
    resources: list[Doc] = []
    for rt in sorted(types, key=lambda r: r.plural):
        resources.append(_legacy_entry(rt))
        for sub in rt.subresources:
            entry: Doc = {
                "name": f"{rt.plural}/{sub.name}",
                "singularName": "",
                "namespaced": rt.namespaced,
            }
            if sub.group or sub.version:
                entry["group"], entry["version"] = sub.group, sub.version
            entry["kind"], entry["verbs"] = sub.kind, list(sub.verbs)
            resources.append(entry)
    resources.sort(key=lambda e: e["name"])
    doc: Doc = {
        "kind": "APIResourceList",
        "groupVersion": _gv(group, version),
        "resources": resources,
    }
    if group:
        doc["apiVersion"] = "v1"
    return doc


def _aggregated_resource(rt: ResourceType) -> Doc:
    entry: Doc = {
        "resource": rt.plural,
        "responseKind": {"group": "", "kind": rt.kind, "version": ""},
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": list(rt.verbs),
        **_aliases(rt),
    }
    if rt.subresources:
        entry["subresources"] = [
            {
                "subresource": s.name,
                "responseKind": {"group": s.group, "kind": s.kind, "version": s.version},
                "verbs": list(s.verbs),
            }
            for s in sorted(rt.subresources, key=lambda s: s.name)
        ]
    return entry


def _aggregated_group(registry: Registry, name: str, versions: list[str]) -> Doc:
    return {
        "metadata": {"name": name},
        "versions": [
            {
                "version": v,
                "freshness": "Current",
                "resources": [
                    _aggregated_resource(rt)
                    for rt in sorted(registry.in_group_version(name, v), key=lambda r: r.plural)
                ],
            }
            for v in versions
        ],
    }


def aggregated(registry: Registry, *, core: bool) -> Doc:
    """``/api`` (``core=True``: the legacy group only) or ``/apis`` as an APIGroupDiscoveryList."""
    items = [
        _aggregated_group(registry, name, versions)
        for name, versions in registry.groups().items()
        if (name == "") == core
    ]
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }


def wants_aggregated(accept: str) -> bool:
    """True when the client lists the v2 discovery media type (before plain JSON, as clients do)."""
    for part in accept.split(","):
        params = {
            p.split("=", 1)[0].strip(): p.split("=", 1)[-1].strip()
            for p in part.split(";")[1:]
            if "=" in p
        }
        if (
            params.get("g") == "apidiscovery.k8s.io"
            and params.get("v") == "v2"
            and params.get("as") == "APIGroupDiscoveryList"
        ):
            return True
    return False
