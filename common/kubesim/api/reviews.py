"""Access and token reviews (``authorization.k8s.io``, ``authentication.k8s.io``): create-only,
never stored, answered at once.

The simulator has one credential and no RBAC enforcement: RBAC objects are stored and served but
never consulted. The reviews say exactly that -- the token holder may do everything -- so
``kubectl auth can-i`` and ``kubectl auth whoami`` answer as they would for a cluster admin, and a
TokenReview authenticates the simulator's token and the ServiceAccount tokens it issued.
"""

from __future__ import annotations

import copy
import hmac
from collections.abc import Callable
from typing import Any

from common.kubesim.machinery.registry import ResourceType
from common.kubesim.machinery.status import bad_request

Obj = dict[str, Any]
GROUPS = ("authentication.k8s.io", "authorization.k8s.io")
USER = {"username": "kubesim-admin", "groups": ["system:masters", "system:authenticated"]}
REASON = "the Wharf cluster simulator authorizes every request made with its token"
_ALL_RULES = {
    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    "incomplete": False,
}


def is_review(rt: ResourceType) -> bool:
    return rt.group in GROUPS


def review(
    rt: ResourceType,
    namespace: str,
    body: Any,
    token: str | None,
    service_account: Callable[[str], Obj | None] = lambda _: None,
    *,
    caller: Obj | None = None,
) -> Obj:
    """The review ``body`` with its ``status`` filled in, as the apiserver returns it (201)."""
    if not isinstance(body, dict):
        raise bad_request(f"the body must be a {rt.api_version} {rt.kind}")
    out = copy.deepcopy(body)
    out["apiVersion"], out["kind"] = rt.api_version, rt.kind
    meta = out.setdefault("metadata", {})
    if rt.namespaced:
        meta["namespace"] = namespace
    if rt.kind == "SelfSubjectReview":
        out["status"] = {"userInfo": caller or dict(USER)}
    elif rt.kind == "TokenReview":
        given = str((out.get("spec") or {}).get("token", ""))
        ok = token is None or hmac.compare_digest(given.encode(), token.encode())
        account = None if ok else service_account(given)
        out["status"] = (
            {"authenticated": True, "user": account or dict(USER)}
            if ok or account
            else {"authenticated": False, "error": "invalid bearer token"}
        )
        out.setdefault("spec", {})["token"] = ""  # never echo a credential
    elif rt.kind == "SelfSubjectRulesReview":
        out["status"] = copy.deepcopy(_ALL_RULES)
    else:
        out["status"] = {"allowed": True, "reason": REASON}
    return out
