"""CustomResourceDefinitions: validation, status, and serving their resources at run time.

When a CRD is written its versions are registered (discovery, OpenAPI and routing follow the
registry); when it is removed they are unregistered and its custom resources deleted.
"""

from __future__ import annotations

import re
from typing import Any

from kubesim.api import crvalidation
from kubesim.api.core import Core
from kubesim.machinery.meta import now
from kubesim.machinery.registry import ResourceType, Subresource
from kubesim.machinery.status import KubeError, invalid

Obj = dict[str, Any]
CRD_GR = ("apiextensions.k8s.io", "customresourcedefinitions")
VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
SUB_VERBS = ("get", "patch", "update")


def _is_crd(rt: ResourceType) -> bool:
    return rt.group_resource == CRD_GR


def validate(rt: ResourceType, obj: Obj) -> None:
    if rt.crd is not None:
        crvalidation.validate(rt, obj, version_schema(rt.crd, rt.version))
        return
    if not _is_crd(rt):
        return
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    name = obj["metadata"].get("name", "")
    causes: list[dict[str, str]] = []

    def need(cond: bool, field: str, message: str) -> None:
        if not cond:
            causes.append({"reason": "FieldValueInvalid", "message": message, "field": field})

    need(bool(spec.get("group")), "spec.group", "Required value")
    need(bool(names.get("plural")), "spec.names.plural", "Required value")
    need(bool(names.get("kind")), "spec.names.kind", "Required value")
    need(
        spec.get("scope") in ("Namespaced", "Cluster"),
        "spec.scope",
        f'Unsupported value: "{spec.get("scope", "")}": supported values: "Cluster", "Namespaced"',
    )
    need(
        name == f"{names.get('plural')}.{spec.get('group')}",
        "metadata.name",
        f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group',
    )
    versions = spec.get("versions") or []
    need(
        bool(versions),
        "spec.versions",
        "Invalid value: must have exactly one version marked as storage version",
    )
    need(
        sum(1 for v in versions if v.get("storage")) == 1,
        "spec.versions",
        "Invalid value: must have exactly one version marked as storage version",
    )
    if causes:
        raise invalid(rt.group, rt.kind, name, causes)


def accepted_names(spec: Obj) -> Obj:
    names = dict(spec.get("names") or {})
    names.setdefault("singular", str(names.get("kind", "")).lower())
    names.setdefault("listKind", f"{names.get('kind', '')}List")
    return names


def before_commit(objs: Core, rt: ResourceType, old: Obj | None, obj: Obj) -> None:
    if not _is_crd(rt) or obj["metadata"].get("deletionTimestamp"):
        return
    spec = obj["spec"]
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    stored = list((old or {}).get("status", {}).get("storedVersions") or [])
    if storage not in stored:
        stored.append(storage)
    at = (old or {}).get("status", {}).get("conditions", [{}])[0].get("lastTransitionTime", now())
    obj["status"] = {
        "acceptedNames": accepted_names(spec),
        "conditions": [
            {
                "lastTransitionTime": at,
                "message": "no conflicts found",
                "reason": "NoConflicts",
                "status": "True",
                "type": "NamesAccepted",
            },
            {
                "lastTransitionTime": at,
                "message": "the initial names have been accepted",
                "reason": "InitialNamesAccepted",
                "status": "True",
                "type": "Established",
            },
        ],
        "storedVersions": stored,
    }


def resource_types(crd: Obj) -> list[ResourceType]:
    spec = crd["spec"]
    names = accepted_names(spec)
    out = []
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        subs = []
        declared = version.get("subresources") or {}
        if "scale" in declared:
            subs.append(Subresource("scale", "Scale", SUB_VERBS, "autoscaling", "v1"))
        if "status" in declared:
            subs.append(Subresource("status", names["kind"], SUB_VERBS))
        out.append(
            ResourceType(
                group=spec["group"],
                version=version["name"],
                plural=names["plural"],
                singular=names["singular"],
                kind=names["kind"],
                namespaced=spec["scope"] == "Namespaced",
                verbs=VERBS,
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                subresources=tuple(subs),
                list_kind=names["listKind"],
                crd=crd,
            )
        )
    return out


def after_commit(objs: Core, rt: ResourceType, obj: Obj) -> None:
    if not _is_crd(rt) or obj["metadata"].get("deletionTimestamp"):
        return
    spec = obj["spec"]
    plural = spec["names"]["plural"]
    objs.registry.unregister(spec["group"], plural)
    objs.registry.register(resource_types(obj))


def after_remove(objs: Core, rt: ResourceType, gone: Obj) -> None:
    if not _is_crd(rt):
        return
    spec = gone["spec"]
    group, plural = spec["group"], spec["names"]["plural"]
    objs.store.drop_group_resource((group, plural))
    objs.registry.unregister(group, plural)


def version_schema(crd: Obj, version: str) -> Obj | None:
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            schema = (v.get("schema") or {}).get("openAPIV3Schema")
            return schema if isinstance(schema, dict) else None
    return None


_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_order(version: str) -> tuple[int, int, int, int, str]:
    """Kube-aware version order (apimachinery's ``CompareKubeAwareVersionStrings``): GA above
    beta above alpha, higher numbers above lower, and anything not kube-like below them all."""
    m = _KUBE_VERSION.match(version)
    if m is None:
        return (0, 0, 0, 0, version)
    stability = {"alpha": 1, "beta": 2, None: 3}[m.group(2)]
    return (1, stability, int(m.group(1)), int(m.group(3) or 0), "")


def deprecation_warning(crd: Obj, version: str) -> str | None:
    """What a request to a deprecated version answers in its ``Warning`` header: the version's own
    ``deprecationWarning``, else apiextensions-apiserver's default (``defaultDeprecationWarning``:
    "<group>/<version> <Kind> is deprecated; use <group>/<newest served> <Kind>")."""
    spec = crd["spec"]
    versions = spec.get("versions") or []
    this = next((v for v in versions if v.get("name") == version), None)
    if this is None or not this.get("deprecated"):
        return None
    if isinstance(this.get("deprecationWarning"), str):
        return str(this["deprecationWarning"])
    group, kind = spec["group"], spec["names"]["kind"]
    message = f"{group}/{version} {kind} is deprecated"
    newer = [
        v["name"]
        for v in versions
        if v.get("served") and not v.get("deprecated")
        and version_order(version) < version_order(v["name"])
    ]  # fmt: skip
    if newer:
        message += f"; use {group}/{max(newer, key=version_order)} {kind}"
    return message


def check_conversion(crd: Obj, obj: Obj) -> None:
    """Between versions, a custom resource changes only its apiVersion (``strategy: None``). A CRD
    whose ``conversion.strategy`` is ``Webhook`` needs its webhook for that, which the simulator
    never calls: the request fails as a real server's does when the webhook cannot be reached."""
    conversion = crd["spec"].get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return
    kind = crd["spec"]["names"]["kind"]
    raise KubeError(
        500,
        f"conversion webhook for {obj.get('apiVersion')}, Kind={kind} failed: "
        "the Wharf cluster simulator does not call conversion webhooks",
        reason="InternalError",
    )


def selectable_fields(crd: Obj, version: str) -> frozenset[str]:
    """A version's ``selectableFields`` (GA in 1.32) as field selector labels: ``.spec.color`` ->
    ``spec.color``."""
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            paths = (f.get("jsonPath") for f in v.get("selectableFields") or [])
            return frozenset(p.lstrip(".") for p in paths if isinstance(p, str) and p)
    return frozenset()


def printer_columns(crd: Obj, version: str) -> list[Obj]:
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return list(v.get("additionalPrinterColumns") or [])
    return []
