"""RBAC: who may do what, decided as kube-apiserver's authorizers decide it.

Identities come from ``http.auth`` (the admin token, ServiceAccount tokens, the users a simulator is
given, and whoever they impersonate). ``system:masters`` may do everything, as the apiserver's
privileged-group authorizer lets it; everyone else is allowed exactly what the Roles and
ClusterRoles bound to them grant (``rbac.authorization.k8s.io/v1`` objects in the store, read on
every decision, so a binding takes effect at once). Aggregated ClusterRoles are evaluated as the
union of the ClusterRoles their selectors pick. ``populate`` seeds the bootstrap roles and bindings
a real cluster starts with.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from kubesim.machinery.selectors import label_matcher
from kubesim.machinery.status import KubeError, qualified
from kubesim.store import Store

Obj = dict[str, Any]
RBAC = "rbac.authorization.k8s.io"
MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
SA_PREFIX = "system:serviceaccount:"


@attrs.frozen
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def as_status(self) -> Obj:
        """The ``userInfo`` of a review, as the apiserver writes it."""
        out: Obj = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra}
        return out


@attrs.frozen
class Request:
    """authorizer.Attributes: a resource request, or a non-resource one when ``path`` is set."""

    verb: str
    namespace: str = ""
    group: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""

    @property
    def is_resource(self) -> bool:
        return not self.path


ADMIN = UserInfo("kubesim-admin", (MASTERS, AUTHENTICATED))
"""Whoever holds the simulator's own token: a cluster admin, as kind's kubeconfig user is."""


def service_account(name: str) -> tuple[str, str] | None:
    """(namespace, name) when ``name`` is a ServiceAccount's user name."""
    if not name.startswith(SA_PREFIX):
        return None
    namespace, sep, account = name[len(SA_PREFIX) :].partition(":")
    return (namespace, account) if sep and namespace and account and ":" not in account else None


# --- decisions ----------------------------------------------------------------------------------


def decide(store: Store, user: UserInfo, req: Request) -> tuple[bool, str]:
    """(allowed, reason): the reason names the binding that allowed it, as RBAC's does."""
    if MASTERS in user.groups:
        return True, ""
    for binding, role, subject in _bindings(store, user, req.namespace):
        for rule in _rules(store, role, binding):
            if _allows(rule, req):
                return True, _reason(binding, subject)
    return False, ""


def allowed(store: Store, user: UserInfo, req: Request) -> bool:
    return decide(store, user, req)[0]


def check(store: Store, user: UserInfo, req: Request) -> None:
    """Raise the apiserver's 403 unless ``user`` may make ``req``."""
    if not allowed(store, user, req):
        raise forbidden(user, req)


def forbidden(user: UserInfo, req: Request) -> KubeError:
    who = f'User "{user.name}" cannot {req.verb}'
    if not req.is_resource:
        return KubeError(403, f'forbidden: {who} path "{req.path}"', details={})
    resource = f"{req.resource}/{req.subresource}" if req.subresource else req.resource
    where = f'in the namespace "{req.namespace}"' if req.namespace else "at the cluster scope"
    why = f'{who} resource "{resource}" in API group "{req.group}" {where}'
    what = qualified(req.group, req.resource)
    details: Obj = {"name": req.name} if req.name else {}
    if req.group:
        details["group"] = req.group
    details["kind"] = req.resource
    message = (
        f'{what} "{req.name}" is forbidden: {why}' if req.name else f"{what} is forbidden: {why}"
    )
    return KubeError(403, message, details=details)


def rules_review(store: Store, user: UserInfo, namespace: str) -> Obj:
    """The ``status`` of a SelfSubjectRulesReview in ``namespace``."""
    if MASTERS in user.groups:
        resource_rules = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
        non_resource = [{"verbs": ["*"], "nonResourceURLs": ["*"]}]
        return {
            "resourceRules": resource_rules,
            "nonResourceRules": non_resource,
            "incomplete": False,
        }
    resource_rules, non_resource = [], []
    for binding, role, _ in _bindings(store, user, namespace):
        for rule in _rules(store, role, binding):
            if rule.get("nonResourceURLs"):
                non_resource.append(
                    {
                        "verbs": list(rule.get("verbs") or []),
                        "nonResourceURLs": list(rule["nonResourceURLs"]),
                    }
                )
            else:
                out = {k: list(rule.get(k) or []) for k in ("verbs", "apiGroups", "resources")}
                if rule.get("resourceNames"):
                    out["resourceNames"] = list(rule["resourceNames"])
                resource_rules.append(out)
    return {"resourceRules": resource_rules, "nonResourceRules": non_resource, "incomplete": False}


def _bindings(
    store: Store, user: UserInfo, namespace: str
) -> Iterator[tuple[Obj, Obj | None, Obj]]:
    """(binding, role or None when missing, the subject that matched) that apply to ``user``."""
    found = [(b, "") for b in store.list((RBAC, "clusterrolebindings"), None)]
    if namespace:
        found += [(b, namespace) for b in store.list((RBAC, "rolebindings"), namespace)]
    for binding, ns in found:
        subject = _subject(binding, user, ns)
        if subject is None:
            continue
        ref = binding.get("roleRef") or {}
        if ref.get("kind") == "Role" and ns:
            role = store.get((RBAC, "roles"), ns, str(ref.get("name", "")))
        elif ref.get("kind") == "ClusterRole":
            role = store.get((RBAC, "clusterroles"), "", str(ref.get("name", "")))
        else:
            role = None
        yield binding, role, subject


def _subject(binding: Obj, user: UserInfo, namespace: str) -> Obj | None:
    subjects: list[Obj] = [s for s in binding.get("subjects") or [] if isinstance(s, dict)]
    for subject in subjects:
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "User" and name == user.name:
            return subject
        if kind == "Group" and name in user.groups:
            return subject
        if kind == "ServiceAccount":
            ns = subject.get("namespace") or namespace
            if user.name == f"{SA_PREFIX}{ns}:{name}":
                return subject
    return None


def _rules(store: Store, role: Obj | None, binding: Obj) -> list[Obj]:
    if role is None:
        return []
    aggregation = role.get("aggregationRule")
    if isinstance(aggregation, dict) and aggregation.get("clusterRoleSelectors"):
        return _aggregated(store, aggregation["clusterRoleSelectors"])
    return [r for r in role.get("rules") or [] if isinstance(r, dict)]


def _aggregated(store: Store, selectors: list[Obj]) -> list[Obj]:
    rules: list[Obj] = []
    for selector in selectors:
        labels = ",".join(f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items())
        match = label_matcher(labels)
        for role in store.list((RBAC, "clusterroles"), None):
            if labels and match(role) and not role.get("aggregationRule"):
                rules += [r for r in role.get("rules") or [] if r not in rules]
    return rules


def _allows(rule: Obj, req: Request) -> bool:
    verbs = rule.get("verbs") or []
    if "*" not in verbs and req.verb not in verbs:
        return False
    if not req.is_resource:
        return any(
            url == "*" or url == req.path or (url.endswith("*") and req.path.startswith(url[:-1]))
            for url in rule.get("nonResourceURLs") or []
        )
    groups = rule.get("apiGroups") or []
    if "*" not in groups and req.group not in groups:
        return False
    wanted = f"{req.resource}/{req.subresource}" if req.subresource else req.resource
    resources = rule.get("resources") or []
    if not any(
        r in ("*", wanted) or (bool(req.subresource) and r == f"*/{req.subresource}")
        for r in resources
    ):
        return False
    names = rule.get("resourceNames") or []
    return not names or req.name in names


def _reason(binding: Obj, subject: Obj) -> str:
    """RBAC's ``allowed by`` description of the binding and subject that granted a request."""
    meta, ref = binding["metadata"], binding.get("roleRef") or {}
    namespace = meta.get("namespace") or ""
    name = f"{meta['name']}/{namespace}" if namespace else meta["name"]
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    if subject.get("kind") == "ServiceAccount":
        who = f'ServiceAccount "{subject["name"]}/{subject.get("namespace") or namespace}"'
    else:
        who = f'{subject.get("kind")} "{subject.get("name")}"'
    return f'RBAC: allowed by {kind} "{name}" of {ref.get("kind")} "{ref.get("name")}" to {who}'


# --- the bootstrap policy -----------------------------------------------------------------------

_READ = ["get", "list", "watch"]
_WRITE = ["create", "delete", "deletecollection", "patch", "update"]
_VIEWABLE: dict[str, list[str]] = {
    "": [
        "configmaps",
        "endpoints",
        "persistentvolumeclaims",
        "persistentvolumeclaims/status",
        "pods",
        "pods/log",
        "pods/status",
        "replicationcontrollers",
        "replicationcontrollers/scale",
        "replicationcontrollers/status",
        "serviceaccounts",
        "services",
        "services/status",
        "bindings",
        "events",
        "limitranges",
        "namespaces/status",
        "resourcequotas",
        "resourcequotas/status",
        "namespaces",
    ],
    "apps": [
        "controllerrevisions",
        "daemonsets",
        "daemonsets/status",
        "deployments",
        "deployments/scale",
        "deployments/status",
        "replicasets",
        "replicasets/scale",
        "replicasets/status",
        "statefulsets",
        "statefulsets/scale",
        "statefulsets/status",
    ],
    "autoscaling": ["horizontalpodautoscalers", "horizontalpodautoscalers/status"],
    "batch": ["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
    "discovery.k8s.io": ["endpointslices"],
    "networking.k8s.io": ["ingresses", "ingresses/status", "networkpolicies"],
    "policy": ["poddisruptionbudgets", "poddisruptionbudgets/status"],
}
_EDITABLE: dict[str, list[str]] = {
    "": [
        "configmaps",
        "endpoints",
        "persistentvolumeclaims",
        "pods",
        "replicationcontrollers",
        "replicationcontrollers/scale",
        "secrets",
        "serviceaccounts",
        "services",
        "pods/attach",
        "pods/exec",
        "pods/portforward",
        "pods/proxy",
        "pods/eviction",
        "serviceaccounts/token",
    ],
    "apps": [
        "daemonsets",
        "deployments",
        "deployments/rollback",
        "deployments/scale",
        "replicasets",
        "replicasets/scale",
        "statefulsets",
        "statefulsets/scale",
    ],
    "autoscaling": ["horizontalpodautoscalers"],
    "batch": ["cronjobs", "jobs"],
    "discovery.k8s.io": ["endpointslices"],
    "networking.k8s.io": ["ingresses", "networkpolicies"],
    "policy": ["poddisruptionbudgets"],
}
_DISCOVERY_URLS = [
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
]
_PUBLIC_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]


def _by_group(table: dict[str, list[str]], verbs: list[str]) -> list[Obj]:
    return [{"apiGroups": [g], "resources": r, "verbs": verbs} for g, r in table.items()]


def _aggregate(*names: str) -> dict[str, str]:
    return {f"rbac.authorization.k8s.io/aggregate-to-{n}": "true" for n in names}


def _cluster_role(
    name: str, rules: list[Obj], labels: dict[str, str] | None = None, **extra: Any
) -> Obj:
    meta = {
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults", **(labels or {})},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    }
    return {"metadata": meta, "rules": rules, **extra}


def _binding(name: str, role: str, *groups: str) -> Obj:
    meta = {
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    }
    subjects = [{"apiGroup": RBAC, "kind": "Group", "name": g} for g in groups]
    return {
        "metadata": meta,
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    }


def bootstrap() -> list[tuple[str, Obj]]:
    """The bootstrap ClusterRoles and ClusterRoleBindings (plural, body) a fresh cluster has: a
    subset of kube-apiserver's, with the user-facing ``cluster-admin``/``admin``/``edit``/``view``
    aggregated as upstream does."""
    view = _by_group(_VIEWABLE, _READ)
    edit = [
        *_by_group(_EDITABLE, _WRITE),
        {"apiGroups": [""], "resources": ["secrets"], "verbs": _READ},
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]},
    ]
    admin = [
        {"apiGroups": [RBAC], "resources": ["rolebindings", "roles"], "verbs": _READ + _WRITE},
        {
            "apiGroups": ["authorization.k8s.io"],
            "resources": ["localsubjectaccessreviews"],
            "verbs": ["create"],
        },
    ]

    def aggregated(name: str) -> Obj:
        selector = {"matchLabels": _aggregate(name)}
        return {"clusterRoleSelectors": [selector]}

    roles = [
        _cluster_role(
            "cluster-admin",
            [
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ],
        ),
        _cluster_role("admin", view + edit + admin, aggregationRule=aggregated("admin")),
        _cluster_role("edit", view + edit, _aggregate("admin"), aggregationRule=aggregated("edit")),
        _cluster_role(
            "view", view, _aggregate("admin", "edit"), aggregationRule=aggregated("view")
        ),
        _cluster_role("system:aggregate-to-admin", admin, _aggregate("admin")),
        _cluster_role("system:aggregate-to-edit", edit, _aggregate("admin", "edit")),
        _cluster_role("system:aggregate-to-view", view, _aggregate("admin", "edit", "view")),
        _cluster_role(
            "system:basic-user",
            [
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["selfsubjectreviews"],
                    "verbs": ["create"],
                },
            ],
        ),
        _cluster_role("system:discovery", [{"nonResourceURLs": _DISCOVERY_URLS, "verbs": ["get"]}]),
        _cluster_role(
            "system:public-info-viewer", [{"nonResourceURLs": _PUBLIC_URLS, "verbs": ["get"]}]
        ),
    ]
    bindings = [
        _binding("cluster-admin", "cluster-admin", MASTERS),
        _binding("system:basic-user", "system:basic-user", AUTHENTICATED),
        _binding("system:discovery", "system:discovery", AUTHENTICATED),
        _binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            AUTHENTICATED,
            "system:unauthenticated",
        ),
    ]
    return [("clusterroles", r) for r in roles] + [("clusterrolebindings", b) for b in bindings]
