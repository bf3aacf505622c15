"""Access and token reviews (``authorization.k8s.io``, ``authentication.k8s.io``): create-only,
never stored, answered at once from the same RBAC decisions that guard every request (``rbac``).

``kubectl auth can-i`` (SelfSubjectAccessReview, SelfSubjectRulesReview) and ``kubectl auth
whoami`` (SelfSubjectReview) answer for the caller -- the impersonated identity when there is one;
SubjectAccessReview and LocalSubjectAccessReview for the user they name; a TokenReview
authenticates any token the simulator accepts.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kubesim.api import rbac
from kubesim.api.rbac import Request, UserInfo
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.status import bad_request, invalid
from kubesim.store import Store

Obj = dict[str, Any]
GROUPS = ("authentication.k8s.io", "authorization.k8s.io")


def is_review(rt: ResourceType) -> bool:
    return rt.group in GROUPS


def review(
    rt: ResourceType,
    namespace: str,
    body: Any,
    *,
    caller: UserInfo,
    authenticate: Callable[[str], UserInfo | None],
    store: Store,
) -> Obj:
    """The review ``body`` with its ``status`` filled in, as the apiserver returns it (201)."""
    if not isinstance(body, dict):
        raise bad_request(f"the body must be a {rt.api_version} {rt.kind}")
    out = copy.deepcopy(body)
    out["apiVersion"], out["kind"] = rt.api_version, rt.kind
    meta = out.setdefault("metadata", {})
    if rt.namespaced:
        meta["namespace"] = namespace
    spec: Obj = out["spec"] if isinstance(out.get("spec"), dict) else {}
    if rt.kind == "SelfSubjectReview":
        out["status"] = {"userInfo": caller.as_status()}
    elif rt.kind == "TokenReview":
        user = authenticate(str(spec.get("token", "")))
        out["status"] = (
            {"authenticated": True, "user": user.as_status()}
            if user is not None
            else {"authenticated": False, "error": "invalid bearer token"}
        )
        out.setdefault("spec", {})["token"] = ""  # never echo a credential
    elif rt.kind == "SelfSubjectRulesReview":
        out["status"] = rbac.rules_review(store, caller, str(spec.get("namespace") or ""))
    else:
        user = caller if rt.kind == "SelfSubjectAccessReview" else _subject(rt, spec)
        allowed, reason = rbac.decide(store, user, _request(rt, spec, namespace))
        out["status"] = {"allowed": allowed, **({"reason": reason} if reason else {})}
    return out


def _subject(rt: ResourceType, spec: Obj) -> UserInfo:
    name, groups = str(spec.get("user") or ""), [str(g) for g in spec.get("groups") or []]
    if not name and not groups:
        raise _invalid(rt, "spec.user", "at least one of user or group must be specified")
    extra = tuple((str(k), tuple(str(x) for x in v)) for k, v in (spec.get("extra") or {}).items())
    return UserInfo(name, tuple(groups), uid=str(spec.get("uid") or ""), extra=extra)


def _request(rt: ResourceType, spec: Obj, namespace: str) -> Request:
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (resource is None) == (non_resource is None):
        raise _invalid(
            rt,
            "spec.resourceAttributes",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )
    if isinstance(non_resource, dict):
        return Request(str(non_resource.get("verb", "")), path=str(non_resource.get("path", "")))
    attrs = resource if isinstance(resource, dict) else {}
    asked = str(attrs.get("namespace") or "")
    if rt.kind == "LocalSubjectAccessReview" and asked != namespace:
        raise bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    return Request(
        str(attrs.get("verb", "")),
        asked,
        str(attrs.get("group", "")),
        str(attrs.get("resource", "")),
        str(attrs.get("subresource", "")),
        str(attrs.get("name", "")),
    )


def _invalid(rt: ResourceType, field: str, why: str) -> Exception:
    cause = {
        "reason": "FieldValueInvalid",
        "message": f'Invalid value: "null": {why}',
        "field": field,
    }
    return invalid(rt.group, rt.kind, "", [cause])
