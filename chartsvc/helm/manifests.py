"""Rendered templates joined the way ``helm template`` prints them.

Kinds in Helm's install order (``releaseutil.InstallOrder``), unknown kinds after them by name, hooks
(test pods and the like) last, each document under a ``# Source:`` line; NOTES.txt is left out. The
kind and hook marker are read with regular expressions, not a YAML parse: a parse per document would
cost as much as the render. This module only formats; it never renders.
"""

from __future__ import annotations

import re

# Helm's releaseutil.InstallOrder: the order `helm template` prints kinds in.
_INSTALL_ORDER = [
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
]
_KIND_RANK = {kind: rank for rank, kind in enumerate(_INSTALL_ORDER)}
_DOC_SPLIT = re.compile(r"(?:^|\s*\n)---\s*")
_KIND = re.compile(r"^kind:\s*['\"]?([A-Za-z0-9]+)", re.MULTILINE)
_HOOK = re.compile(r"['\"]?helm\.sh/hook['\"]?\s*:")


def text(rendered: dict[str, str]) -> str:
    """Join rendered files the way ``helm template`` prints them: install order, hooks last."""
    docs: list[tuple[int, int, str, str, str]] = []
    for path in sorted(rendered):
        if path.endswith("NOTES.txt"):
            continue
        source = rendered[path]
        # Substring tests first: most files hold one document and no hook, and the regexes cost
        # more than the rest of the join.
        for doc in _DOC_SPLIT.split(source) if "---" in source else (source,):
            body = doc.strip()
            if not body:
                continue
            kind_match = _KIND.search(body)
            kind = kind_match.group(1) if kind_match else ""
            hook = 1 if "helm.sh/hook" in body and _HOOK.search(body) else 0
            docs.append((hook, _KIND_RANK.get(kind, len(_KIND_RANK)), kind, path, body))
    docs.sort(key=lambda d: (d[0], d[1], d[2] if d[1] == len(_KIND_RANK) else "", d[3]))
    return "".join(f"---\n# Source: {path}\n{body}\n" for _, _, _, path, body in docs)
