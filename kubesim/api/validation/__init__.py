"""The apiserver's per-kind validation (``pkg/apis/*/validation``) for the built-in kinds served.

``kind_causes`` answers every field error an object has, worded and pathed as kube-apiserver
words them; ``decode_error`` answers what a real server refuses before validation even runs (a
quantity that does not parse is a 400 from decoding, not a 422). Both run on writes only: reads
and lists never pay for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesim.api.validation import field, policy, services, workloads
from kubesim.api.validation.podspec import pod_spec
from kubesim.machinery import quantity

Obj = dict[str, Any]
Cause = field.Cause


def _pod(obj: Obj) -> list[Cause]:
    return pod_spec(obj.get("spec"), "spec")


def _pod_template(obj: Obj) -> list[Cause]:
    template = field.mapping(obj.get("template"))
    causes = field.labels(field.get(template, "metadata", "labels"), "template.metadata.labels")
    return causes + pod_spec(template.get("spec"), "template.spec")


RULES: dict[tuple[str, str], Callable[[Obj], list[Cause]]] = {
    ("", "pods"): _pod,
    ("", "podtemplates"): _pod_template,
    ("", "services"): services.service,
    ("", "persistentvolumeclaims"): policy.pvc,
    ("apps", "deployments"): workloads.deployment,
    ("apps", "replicasets"): workloads.replicaset,
    ("apps", "statefulsets"): workloads.statefulset,
    ("apps", "daemonsets"): workloads.daemonset,
    ("batch", "jobs"): workloads.job,
    ("batch", "cronjobs"): workloads.cronjob,
    ("networking.k8s.io", "ingresses"): services.ingress,
    ("networking.k8s.io", "networkpolicies"): services.network_policy,
    ("autoscaling", "horizontalpodautoscalers"): policy.hpa,
    ("policy", "poddisruptionbudgets"): policy.pdb,
    ("rbac.authorization.k8s.io", "roles"): policy.role,
    ("rbac.authorization.k8s.io", "clusterroles"): policy.role,
    ("rbac.authorization.k8s.io", "rolebindings"): policy.binding,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): policy.binding,
    ("scheduling.k8s.io", "priorityclasses"): policy.priority_class,
    ("apiregistration.k8s.io", "apiservices"): policy.api_service,
}
_UPDATE_RULES: dict[tuple[str, str], Callable[[Obj, Obj], list[Cause]]] = {
    ("rbac.authorization.k8s.io", "rolebindings"): policy.binding_update,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): policy.binding_update,
    ("scheduling.k8s.io", "priorityclasses"): policy.priority_class_update,
}


def kind_causes(group_resource: tuple[str, str], obj: Obj, old: Obj | None) -> list[Cause]:
    """Every field error of ``obj`` (replacing ``old`` on an update) under its kind's rules."""
    rule = RULES.get(group_resource)
    causes = rule(obj) if rule is not None else []
    update_rule = _UPDATE_RULES.get(group_resource)
    if old is not None and update_rule is not None:
        causes += update_rule(old, obj)
    return causes


def _quantities(obj: Obj) -> list[Any]:
    """Every quantity the object carries where decoding parses one."""
    found: list[Any] = []
    specs: list[Any] = [obj.get("spec")]
    template = field.get(obj, "spec", "template", "spec")
    job_template = field.get(obj, "spec", "jobTemplate", "spec", "template", "spec")
    specs += [template, job_template]
    for spec in specs:
        for kind in ("initContainers", "containers"):
            for c in field.items(field.get(spec, kind)):
                for bucket in ("limits", "requests"):
                    found += field.mapping(field.get(c, "resources", bucket)).values()
    found += field.mapping(field.get(obj, "spec", "resources", "requests")).values()
    found += field.mapping(field.get(obj, "spec", "hard")).values()
    for claim in field.items(field.get(obj, "spec", "volumeClaimTemplates")):
        found += field.mapping(field.get(claim, "spec", "resources", "requests")).values()
    return found


def decode_error(obj: Obj) -> str | None:
    """Why decoding ``obj`` into its Go type fails (the text after "cannot be handled as"), or
    None when it decodes."""
    for value in _quantities(obj):
        why = quantity.syntax_error(value)
        if why is not None:
            return why
    return None
