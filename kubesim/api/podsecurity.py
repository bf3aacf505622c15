"""The PodSecurity admission plugin: a namespace's ``pod-security.kubernetes.io/*`` labels.

``enforce`` refuses a pod that violates its level (403: ``pods "x" is forbidden: violates
PodSecurity "restricted:latest": ...``); ``warn`` answers a ``Warning`` (``would violate
PodSecurity ...``); the pod templates of workloads are checked against both and only warned about,
as the plugin does (their controllers' pods are then refused). ``audit`` writes audit annotations
on a real server and does nothing here. The checks are the Pod Security Standards' as
``k8s.io/pod-security-admission/policy`` words them, for the fields Wharf's users meet: host
namespaces, privileged, capabilities, hostPath and other volume types, host ports,
allowPrivilegeEscalation, runAsNonRoot, runAsUser=0 and seccomp. AppArmor, SELinux, procMount,
sysctls and Windows host processes are not checked; every version label is read as ``latest``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kubesim.api.core import Core
from kubesim.machinery import warnings
from kubesim.machinery.status import KubeError

Obj = dict[str, Any]
PREFIX = "pod-security.kubernetes.io/"
LEVELS = ("privileged", "baseline", "restricted")
#: Kinds whose pod template is checked (and only warned about), and where the template is.
TEMPLATES: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "deployments"): ("spec", "template"),
    ("apps", "replicasets"): ("spec", "template"),
    ("apps", "statefulsets"): ("spec", "template"),
    ("apps", "daemonsets"): ("spec", "template"),
    ("batch", "jobs"): ("spec", "template"),
    ("batch", "cronjobs"): ("spec", "jobTemplate", "spec", "template"),
    ("", "replicationcontrollers"): ("spec", "template"),
    ("", "podtemplates"): ("template",),
}
_BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
        "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
    }
)  # fmt: skip
_RESTRICTED_VOLUMES = (
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret",
)  # fmt: skip


def admit_pod(objs: Core, pod: Obj) -> None:
    """Refuse a new pod its namespace's ``enforce`` level forbids; warn for its ``warn`` level."""
    labels = _labels(objs, pod["metadata"].get("namespace", ""))
    spec = pod.get("spec") or {}
    enforce = _level(labels, "enforce")
    if enforce is not None:
        found = violations(spec, enforce)
        if found:
            name = pod["metadata"].get("name", "")
            raise KubeError(
                403,
                f'pods "{name}" is forbidden: violates PodSecurity "{enforce}:latest": {found}',
                details={"name": name, "kind": "pods"},
            )
    _warn(labels, spec, ("warn",))


def admit_template(objs: Core, group: str, plural: str, obj: Obj) -> None:
    """Warn for a workload whose pod template its namespace's levels would refuse."""
    path = TEMPLATES.get((group, plural))
    if path is None:
        return
    template: Any = obj
    for key in path:
        template = template.get(key) if isinstance(template, dict) else None
    if not isinstance(template, dict):
        return
    labels = _labels(objs, obj["metadata"].get("namespace", ""))
    _warn(labels, template.get("spec") or {}, ("enforce", "warn"))


def _labels(objs: Core, namespace: str) -> dict[str, str]:
    found = objs.store.get(("", "namespaces"), "", namespace) if namespace else None
    labels = (found or {}).get("metadata", {}).get("labels") or {}
    return {k: v for k, v in labels.items() if k.startswith(PREFIX)}


def _level(labels: dict[str, str], mode: str) -> str | None:
    level = labels.get(PREFIX + mode)
    return level if level in ("baseline", "restricted") else None


def _warn(labels: dict[str, str], spec: Obj, modes: tuple[str, ...]) -> None:
    for level in dict.fromkeys(filter(None, (_level(labels, m) for m in modes))):
        found = violations(spec, level)
        if found:
            warnings.warn(f'would violate PodSecurity "{level}:latest": {found}')


# --- the checks ---------------------------------------------------------------------------------

Check = Callable[[Obj], str | None]


def violations(spec: Obj, level: str) -> str:
    """The policy's words for what ``spec`` violates at ``level`` ("" when nothing)."""
    checks = _RESTRICTED if level == "restricted" else _BASELINE
    return ", ".join(f"{title} ({detail})" for title, check in checks if (detail := check(spec)))


def _containers(spec: Obj) -> Iterator[Obj]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from (c for c in spec.get(key) or [] if isinstance(c, dict))


def _named(names: list[str], noun: str = "container") -> str:
    quoted = ", ".join(f'"{n}"' for n in names)
    return f"{noun} {quoted}" if len(names) == 1 else f"{noun}s {quoted}"


def _context(container: Obj) -> Obj:
    found = container.get("securityContext")
    return found if isinstance(found, dict) else {}


def _host_namespaces(spec: Obj) -> str | None:
    on = [f"{k}=true" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k) is True]
    return ", ".join(on) or None


def _privileged(spec: Obj) -> str | None:
    bad = [c.get("name", "") for c in _containers(spec) if _context(c).get("privileged") is True]
    return f"{_named(bad)} must not set securityContext.privileged=true" if bad else None


def _added(container: Obj) -> list[str]:
    caps = _context(container).get("capabilities") or {}
    return [str(c) for c in caps.get("add") or []]


def _capabilities_baseline(spec: Obj) -> str | None:
    bad = {c.get("name", ""): [a for a in _added(c) if a not in _BASELINE_CAPABILITIES]
           for c in _containers(spec)}  # fmt: skip
    bad = {name: caps for name, caps in bad.items() if caps}
    if not bad:
        return None
    caps = sorted({cap for found in bad.values() for cap in found})
    return (
        f"{_named(list(bad))} must not include "
        + ", ".join(f'"{c}"' for c in caps)
        + " in securityContext.capabilities.add"
    )


def _capabilities_restricted(spec: Obj) -> str | None:
    not_dropped, adding = [], {}
    for c in _containers(spec):
        caps = _context(c).get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            not_dropped.append(c.get("name", ""))
        extra = [a for a in _added(c) if a != "NET_BIND_SERVICE"]
        if extra:
            adding[c.get("name", "")] = extra
    details = []
    if not_dropped:
        details.append(f'{_named(not_dropped)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        caps = sorted({cap for found in adding.values() for cap in found})
        details.append(
            f"{_named(list(adding))} must not include "
            + ", ".join(f'"{c}"' for c in caps)
            + " in securityContext.capabilities.add"
        )
    return "; ".join(details) or None


def _volume_type(volume: Obj) -> str:
    return next((k for k in volume if k != "name"), "")


def _host_path_volumes(spec: Obj) -> str | None:
    bad = [v.get("name", "") for v in spec.get("volumes") or [] if "hostPath" in v]
    return _named(bad, "volume") if bad else None


def _restricted_volumes(spec: Obj) -> str | None:
    bad = [v for v in spec.get("volumes") or [] if _volume_type(v) not in _RESTRICTED_VOLUMES]
    if not bad:
        return None
    kinds = list(dict.fromkeys(_volume_type(v) for v in bad))
    verb, noun = ("uses", "type") if len(bad) == 1 else ("use", "types")
    kinds_text = ", ".join(f'"{k}"' for k in kinds)
    names = [v.get("name", "") for v in bad]
    return f"{_named(names, 'volume')} {verb} restricted volume {noun} {kinds_text}"


def _host_ports(spec: Obj) -> str | None:
    names, ports = [], []
    for c in _containers(spec):
        used = [p["hostPort"] for p in c.get("ports") or [] if p.get("hostPort")]
        if used:
            names.append(c.get("name", ""))
            ports += [str(p) for p in used]
    if not names:
        return None
    verb = "uses" if len(names) == 1 else "use"
    noun = "hostPort" if len(ports) == 1 else "hostPorts"
    return f"{_named(names)} {verb} {noun} {', '.join(ports)}"


def _allow_privilege_escalation(spec: Obj) -> str | None:
    bad = [c.get("name", "") for c in _containers(spec)
           if _context(c).get("allowPrivilegeEscalation") is not False]  # fmt: skip
    return f"{_named(bad)} must set securityContext.allowPrivilegeEscalation=false" if bad else None


def _pod_context(spec: Obj) -> Obj:
    found = spec.get("securityContext")
    return found if isinstance(found, dict) else {}


def _run_as_non_root(spec: Obj) -> str | None:
    pod = _pod_context(spec).get("runAsNonRoot")
    if pod is False:
        return "pod must not set securityContext.runAsNonRoot=false"
    explicit_false = [c.get("name", "") for c in _containers(spec)
                      if _context(c).get("runAsNonRoot") is False]  # fmt: skip
    if explicit_false:
        return f"{_named(explicit_false)} must not set securityContext.runAsNonRoot=false"
    if pod is True:
        return None
    unset = [c.get("name", "") for c in _containers(spec)
             if _context(c).get("runAsNonRoot") is not True]  # fmt: skip
    return f"pod or {_named(unset)} must set securityContext.runAsNonRoot=true" if unset else None


def _run_as_user(spec: Obj) -> str | None:
    if _pod_context(spec).get("runAsUser") == 0:
        return "pod must not set runAsUser=0"
    bad = [c.get("name", "") for c in _containers(spec) if _context(c).get("runAsUser") == 0]
    return f"{_named(bad)} must not set runAsUser=0" if bad else None


def _seccomp_type(context: Obj) -> str | None:
    profile = context.get("seccompProfile")
    return profile.get("type") if isinstance(profile, dict) else None


def _seccomp_baseline(spec: Obj) -> str | None:
    if _seccomp_type(_pod_context(spec)) == "Unconfined":
        return 'pod must not set securityContext.seccompProfile.type to "Unconfined"'
    bad = [c.get("name", "") for c in _containers(spec)
           if _seccomp_type(_context(c)) == "Unconfined"]  # fmt: skip
    if bad:
        return f'{_named(bad)} must not set securityContext.seccompProfile.type to "Unconfined"'
    return None


def _seccomp_restricted(spec: Obj) -> str | None:
    allowed = ("RuntimeDefault", "Localhost")
    pod = _seccomp_type(_pod_context(spec))
    if pod is not None and pod not in allowed:
        return f'pod must not set securityContext.seccompProfile.type to "{pod}"'
    unset = []
    for c in _containers(spec):
        mine = _seccomp_type(_context(c))
        if mine is not None and mine not in allowed:
            return (
                f"{_named([c.get('name', '')])} must not set "
                f'securityContext.seccompProfile.type to "{mine}"'
            )
        if mine is None and pod is None:
            unset.append(c.get("name", ""))
    if unset:
        return (
            f"pod or {_named(unset)} must set securityContext.seccompProfile.type to "
            '"RuntimeDefault" or "Localhost"'
        )
    return None


#: In the policy's order (its check ids); a restricted check replaces the baseline one it overrides.
_BASELINE: list[tuple[str, Check]] = [
    ("non-default capabilities", _capabilities_baseline),
    ("host namespaces", _host_namespaces),
    ("hostPath volumes", _host_path_volumes),
    ("hostPort", _host_ports),
    ("privileged", _privileged),
    ("seccompProfile", _seccomp_baseline),
]
_RESTRICTED: list[tuple[str, Check]] = [
    ("allowPrivilegeEscalation != false", _allow_privilege_escalation),
    ("unrestricted capabilities", _capabilities_restricted),
    ("host namespaces", _host_namespaces),
    ("hostPort", _host_ports),
    ("privileged", _privileged),
    ("restricted volume types", _restricted_volumes),
    ("runAsNonRoot != true", _run_as_non_root),
    ("runAsUser=0", _run_as_user),
    ("seccompProfile", _seccomp_restricted),
]
