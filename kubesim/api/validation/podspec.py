"""``ValidatePodSpec``: the rules every pod and pod template meets, in the apiserver's order.

Volumes (names unique DNS labels), containers (names unique across init and app containers, an
image, a known pull policy, ports with IANA names and valid numbers, mounts naming a declared
volume at unique paths, probes and lifecycle hooks with exactly one handler, resources whose
requests fit their limits, user and group ids in range), then restartPolicy, dnsPolicy,
nodeSelector, the pod's security context, tolerations and topology spread constraints. Each
volume has exactly one source.
"""

from __future__ import annotations

from typing import Any

from kubesim.api.validation import field as f
from kubesim.machinery import quantity

Cause = f.Cause
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
PROTOCOLS = ("SCTP", "TCP", "UDP")
RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
_MESSAGE_POLICIES = ("FallbackToLogsOnError", "File")
_STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_TOLERATION_OPERATORS = ("Equal", "Exists")
_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "PreferNoSchedule")


# validateVolumeSource's order; the path names it reports where they differ from the JSON key.
_VOLUME_SOURCES = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
)
_SOURCE_PATHS = {"cephfs": "cephFS", "downwardAPI": "downwarAPI"}  # sic, upstream's spelling
_MAX_ID = 2147483647
_ID_RANGE = f"must be between 0 and {_MAX_ID}, inclusive"  # validation.InclusiveRangeError
_SCHEDULE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")


def _volume_source(vol: Any, path: str) -> list[Cause]:
    """``validateVolumeSource``: exactly one source; each one past the first is refused."""
    given = [k for k in _VOLUME_SOURCES if f.get(vol, k) is not None]
    if not given:
        return [f.required(path, "must specify a volume type")]
    return [
        f.forbidden(f"{path}.{_SOURCE_PATHS.get(k, k)}", "may not specify more than 1 volume type")
        for k in given[1:]
    ]


def _volumes(spec: Any, path: str) -> tuple[set[str], list[Cause]]:
    names: set[str] = set()
    causes: list[Cause] = []
    for i, vol in enumerate(f.items(f.get(spec, "volumes"))):
        causes += _volume_source(vol, f"{path}.volumes[{i}]")
        at = f"{path}.volumes[{i}].name"
        name = f.get(vol, "name")
        if not name:
            causes.append(f.required(at))
            continue
        causes += f.invalid_each(at, name, f.dns1123_label(str(name)))
        if name in names:
            causes.append(f.duplicate(at, name))
        names.add(str(name))
    return names, causes


def _ports(container: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(f.items(f.get(container, "ports"))):
        at = f"{path}.ports[{i}]"
        name = f.get(port, "name")
        if name:
            msgs = f.port_name(str(name))
            if msgs:
                causes += f.invalid_each(f"{at}.name", name, msgs)
            elif name in names:
                causes.append(f.duplicate(f"{at}.name", name))
            names.add(str(name))
        number = f.get(port, "containerPort")
        if not number:
            causes.append(f.required(f"{at}.containerPort"))
        else:
            causes += f.invalid_each(f"{at}.containerPort", number, f.port_number(number))
        host = f.get(port, "hostPort")
        if host:
            causes += f.invalid_each(f"{at}.hostPort", host, f.port_number(host))
        causes += f.one_of(port, "protocol", at, PROTOCOLS)
    return causes


def _mounts(container: Any, path: str, volumes: set[str]) -> list[Cause]:
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, mount in enumerate(f.items(f.get(container, "volumeMounts"))):
        at = f"{path}.volumeMounts[{i}]"
        name = f.get(mount, "name") or ""
        if not name:
            causes.append(f.required(f"{at}.name"))
        if name not in volumes:
            causes.append(f.not_found(f"{at}.name", name))
        mount_path = f.get(mount, "mountPath") or ""
        if not mount_path:
            causes.append(f.required(f"{at}.mountPath"))
        if mount_path and mount_path in seen:
            causes.append(f.invalid(f"{at}.mountPath", mount_path, "must be unique"))
        seen.add(mount_path)
    return causes


def handler(value: Any, path: str, kinds: tuple[str, ...]) -> list[Cause]:
    """``validateHandler``: exactly one of ``kinds``; an httpGet or tcpSocket names a valid port."""
    causes: list[Cause] = []
    count = 0
    for kind in kinds:
        action = f.get(value, kind)
        if action is None:
            continue
        if count:
            causes.append(f.forbidden(f"{path}.{kind}", "may not specify more than 1 handler type"))
            continue
        count += 1
        if kind == "exec" and not f.items(f.get(action, "command")):
            causes.append(f.required(f"{path}.exec.command"))
        if kind in ("httpGet", "tcpSocket"):
            causes += f.port_num_or_name(f.get(action, "port"), f"{path}.{kind}.port")
        if kind == "httpGet":
            causes += f.one_of(action, "scheme", f"{path}.httpGet", ("HTTP", "HTTPS"))
    if not count:
        causes.append(f.required(path, "must specify a handler type"))
    return causes


_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_HOOK_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
_PROBE_COUNTS = (
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
)


def _probes(container: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for name in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = f.get(container, name)
        if probe is None:
            continue
        at = f"{path}.{name}"
        causes += handler(probe, at, _PROBE_HANDLERS)
        for key in _PROBE_COUNTS:
            causes += f.non_negative(probe, key, at)
        success = f.get(probe, "successThreshold")
        if name != "readinessProbe" and success is not None and success != 1:
            causes.append(f.invalid(f"{at}.successThreshold", success, "must be 1"))
    for hook in ("postStart", "preStop"):
        value = f.get(container, "lifecycle", hook)
        if value is not None:
            causes += handler(value, f"{path}.lifecycle.{hook}", _HOOK_HANDLERS)
    return causes


def _resource_name(name: str, path: str) -> list[Cause]:
    if name in _STANDARD_RESOURCES or name.startswith("hugepages-") or "/" in name:
        return f.invalid_each(path, name, f.qualified_name(name))
    return [f.invalid(path, name, "must be a standard resource for containers")]


def resources(value: Any, path: str) -> list[Cause]:
    """``ValidateResourceRequirements``: names, non-negative amounts, requests within limits."""
    limits, requests = f.mapping(f.get(value, "limits")), f.mapping(f.get(value, "requests"))
    causes: list[Cause] = []
    for kind, amounts in (("limits", limits), ("requests", requests)):
        for name, amount in amounts.items():
            at = f"{path}.{kind}[{name}]"
            causes += _resource_name(str(name), at)
            if quantity.parse(amount) < 0:
                causes.append(f.invalid(at, str(amount), f.NON_NEGATIVE))
            over = name in limits and quantity.parse(amount) > quantity.parse(limits[name])
            if kind == "requests" and over:
                causes.append(
                    f.invalid(
                        f"{path}.requests",
                        str(amount),
                        f"must be less than or equal to {name} limit of {limits[name]}",
                    )
                )
    return causes


def _env(container: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, var in enumerate(f.items(f.get(container, "env"))):
        if not f.get(var, "name"):
            causes.append(f.required(f"{path}.env[{i}].name"))
    return causes


def _container(c: Any, path: str, volumes: set[str]) -> list[Cause]:
    """``validateContainerCommon``, in its order."""
    causes = f.name(c, "name", path, f.dns1123_label)
    if not f.get(c, "image"):
        causes.append(f.required(f"{path}.image"))
    causes += f.one_of(c, "terminationMessagePolicy", path, _MESSAGE_POLICIES)
    causes += _ports(c, path)
    causes += _env(c, path)
    causes += _mounts(c, path, volumes)
    policy = f.get(c, "imagePullPolicy")
    if policy is not None and policy not in PULL_POLICIES:
        causes.append(f.not_supported(f"{path}.imagePullPolicy", policy, PULL_POLICIES))
    causes += resources(f.get(c, "resources"), f"{path}.resources")
    return causes + _ids(f.get(c, "securityContext"), f"{path}.securityContext")


def _ids(context: Any, path: str) -> list[Cause]:
    """``IsValidUserID``/``IsValidGroupID`` on a security context's user and group ids."""
    causes: list[Cause] = []
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        value = f.get(context, key)
        if isinstance(value, int) and not 0 <= value <= _MAX_ID:
            causes.append(f.invalid(f"{path}.{key}", value, _ID_RANGE))
    for i, gid in enumerate(f.items(f.get(context, "supplementalGroups"))):
        if isinstance(gid, int) and not 0 <= gid <= _MAX_ID:
            at = f"{path}.supplementalGroups[{i}]"
            causes.append(f.invalid(at, gid, _ID_RANGE))
    return causes


def _spread(spec: Any, path: str) -> list[Cause]:
    """``validateTopologySpreadConstraints``: skew, key, action, no repeats, minDomains."""
    causes: list[Cause] = []
    constraints = f.items(f.get(spec, "topologySpreadConstraints"))
    for i, c in enumerate(constraints):
        at = f"{path}.topologySpreadConstraints[{i}]"
        skew, key, action = (
            f.get(c, "maxSkew"),
            f.get(c, "topologyKey"),
            f.get(c, "whenUnsatisfiable"),
        )
        if not isinstance(skew, int) or skew <= 0:
            causes.append(f.invalid(f"{at}.maxSkew", skew or 0, "must be greater than zero"))
        if not key:
            causes.append(f.required(f"{at}.topologyKey", "can not be empty"))
        if action not in _SCHEDULE_ACTIONS:
            causes.append(
                f.not_supported(f"{at}.whenUnsatisfiable", action or "", _SCHEDULE_ACTIONS)
            )
        if any(
            (f.get(o, "topologyKey"), f.get(o, "whenUnsatisfiable")) == (key, action)
            for o in constraints[i + 1 :]
        ):
            at_pair = f"{at}.{{topologyKey, whenUnsatisfiable}}"
            causes.append(f.duplicate(at_pair, f.Go(f"{{{key}, {action}}}")))
        domains = f.get(c, "minDomains")
        if isinstance(domains, int):
            if domains <= 0:
                causes.append(f.invalid(f"{at}.minDomains", domains, "must be greater than zero"))
            if action != "DoNotSchedule":
                message = (
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                )
                causes.append(f.invalid(f"{at}.minDomains", domains, message))
    return causes


def _containers(spec: Any, path: str, volumes: set[str]) -> list[Cause]:
    """App containers, then init containers; names unique across both."""
    causes: list[Cause] = []
    if not f.items(f.get(spec, "containers")):
        causes.append(f.required(f"{path}.containers"))
    seen: set[str] = set()
    for kind in ("containers", "initContainers"):
        for i, c in enumerate(f.items(f.get(spec, kind))):
            at = f"{path}.{kind}[{i}]"
            causes += _container(c, at, volumes)
            name = f.get(c, "name")
            if name and name in seen:
                causes.append(f.duplicate(f"{at}.name", name))
            seen.add(str(name))
            causes += _probes(c, at)
    return causes


def _tolerations(spec: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, t in enumerate(f.items(f.get(spec, "tolerations"))):
        at = f"{path}.tolerations[{i}]"
        key = f.get(t, "key")
        if key:
            causes += f.invalid_each(f"{at}.key", key, f.qualified_name(str(key)))
        op = f.get(t, "operator")
        if op == "Exists" and f.get(t, "value"):
            causes.append(
                f.invalid(f"{at}.operator", op, "value must be empty when `operator` is 'Exists'")
            )
        causes += f.one_of(t, "operator", at, _TOLERATION_OPERATORS)
        causes += f.one_of(t, "effect", at, _TAINT_EFFECTS)
    return causes


def pod_spec(spec: Any, path: str, *, restart: tuple[str, ...] = RESTART_POLICIES) -> list[Cause]:
    """Every cause ``spec`` (at ``path``) has; ``restart``: the restart policies allowed here."""
    if not isinstance(spec, dict):
        return [f.required(path)]
    volumes, causes = _volumes(spec, path)
    causes += _containers(spec, path, volumes)
    policy = spec.get("restartPolicy")
    if policy is not None and policy not in restart:
        causes.append(f.not_supported(f"{path}.restartPolicy", policy, restart))
    causes += f.one_of(spec, "dnsPolicy", path, _DNS_POLICIES)
    causes += f.labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    causes += _ids(spec.get("securityContext"), f"{path}.securityContext")
    causes += _tolerations(spec, path)
    return causes + _spread(spec, path)
