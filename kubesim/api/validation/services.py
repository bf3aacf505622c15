"""Service, Ingress and NetworkPolicy rules (``ValidateService``, ``ValidateIngressSpec``,
``ValidateNetworkPolicySpec``): ports named and numbered as the real server requires, no duplicate
ports, node ports only where the type has them, paths with a pathType, peers and policy types."""

from __future__ import annotations

import ipaddress
from typing import Any

from kubesim.api.validation import field as f
from kubesim.api.validation.podspec import PROTOCOLS

Cause = f.Cause
Obj = f.Obj
SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
_POLICY_TYPES = ("Ingress", "Egress")


def _service_port_key(port: Any) -> f.Go:
    """The ``core.ServicePort`` the duplicate check keys on: protocol and port only."""
    protocol, number = f.get(port, "protocol") or "", f.get(port, "port") or 0
    return f.Go(
        f'core.ServicePort{{Name:"", Protocol:{f.shown(protocol)}, AppProtocol:(*string)(nil), '
        f'Port:{number}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, '
        "NodePort:0}"
    )


def _service_ports(spec: Obj, kind: str) -> list[Cause]:
    ports = f.items(spec.get("ports"))
    causes: list[Cause] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"spec.ports[{i}]"
        name = f.get(port, "name") or ""
        if len(ports) > 1 and not name:
            causes.append(f.required(f"{at}.name"))
        elif name:
            causes += f.invalid_each(f"{at}.name", name, f.dns1123_label(str(name)))
            if name in names:
                causes.append(f.duplicate(f"{at}.name", name))
            names.add(str(name))
        number = f.get(port, "port")
        causes += f.invalid_each(f"{at}.port", number, f.port_number(number))
        causes += f.one_of(port, "protocol", at, PROTOCOLS)
        if f.get(port, "targetPort") is not None:
            causes += f.port_num_or_name(f.get(port, "targetPort"), f"{at}.targetPort")
        if kind == "ClusterIP" and f.get(port, "nodePort"):
            causes.append(
                f.forbidden(f"{at}.nodePort", "may not be used when `type` is 'ClusterIP'")
            )
    seen: set[tuple[Any, Any]] = set()
    node_ports: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        key = (f.get(port, "protocol"), f.get(port, "port"))
        if key in seen:
            causes.append(f.duplicate(f"spec.ports[{i}]", _service_port_key(port)))
        seen.add(key)
        node = f.get(port, "nodePort")
        if node:
            if (key[0], node) in node_ports:
                causes.append(f.duplicate(f"spec.ports[{i}]", node))
            node_ports.add((key[0], node))
    return causes


def service(obj: Obj) -> list[Cause]:
    spec = f.mapping(obj.get("spec"))
    kind = spec.get("type", "ClusterIP")
    causes: list[Cause] = []
    if kind not in SERVICE_TYPES:
        causes.append(f.not_supported("spec.type", kind, SERVICE_TYPES))
    if kind == "ExternalName":
        name = spec.get("externalName")
        if not name:
            causes.append(f.required("spec.externalName"))
        else:
            causes += f.invalid_each(
                "spec.externalName", name, f.dns1123_subdomain(str(name).rstrip("."))
            )
    elif not f.items(spec.get("ports")) and spec.get("clusterIP") != "None":
        causes.append(f.required("spec.ports"))
    causes += _service_ports(spec, kind)
    causes += f.labels(spec.get("selector"), "spec.selector")
    causes += f.one_of(spec, "sessionAffinity", "spec", ("ClientIP", "None"))
    return causes


def _backend(backend: Any, path: str) -> list[Cause]:
    service_ref, resource = f.get(backend, "service"), f.get(backend, "resource")
    if service_ref is not None and resource is not None:
        return [f.invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        return [] if f.get(resource, "kind") else [f.required(f"{path}.resource.kind")]
    if service_ref is None:
        return [f.invalid(path, "", "resource or service backend is required")]
    causes = f.name(service_ref, "name", f"{path}.service", f.dns1035_label)
    port_name, number = f.get(service_ref, "port", "name"), f.get(service_ref, "port", "number")
    if port_name and number:
        causes.append(f.invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        causes += f.invalid_each(f"{path}.service.port.name", port_name, f.port_name(port_name))
    elif number:
        causes += f.invalid_each(f"{path}.service.port.number", number, f.port_number(number))
    else:
        causes.append(f.required(path, "port name or number is required"))
    return causes


def _ingress_path(item: Any, path: str) -> list[Cause]:
    kind, value = f.get(item, "pathType"), f.get(item, "path") or ""
    if kind is None:
        return [f.required(f"{path}.pathType", "pathType must be specified")]
    causes: list[Cause] = []
    if kind not in _PATH_TYPES:
        causes.append(f.not_supported(f"{path}.pathType", kind, _PATH_TYPES))
    elif (kind != "ImplementationSpecific" or value) and not str(value).startswith("/"):
        causes.append(f.invalid(f"{path}.path", value, "must be an absolute path"))
    return causes + _backend(f.get(item, "backend"), f"{path}.backend")


def _host(host: str, path: str) -> list[Cause]:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return [f.invalid(path, host, "must be a DNS name, not an IP address")]
    name = host[2:] if host.startswith("*.") else host
    return f.invalid_each(path, host, f.dns1123_subdomain(name))


def ingress(obj: Obj) -> list[Cause]:
    spec = f.mapping(obj.get("spec"))
    rules = f.items(spec.get("rules"))
    causes: list[Cause] = []
    if not rules and spec.get("defaultBackend") is None:
        causes.append(
            f.invalid(
                "spec",
                f.Go("[]networking.IngressRule(nil)"),
                "either `defaultBackend` or `rules` must be specified",
            )
        )
    if spec.get("defaultBackend") is not None:
        causes += _backend(spec["defaultBackend"], "spec.defaultBackend")
    for i, rule in enumerate(rules):
        at = f"spec.rules[{i}]"
        if f.get(rule, "host"):
            causes += _host(str(f.get(rule, "host")), f"{at}.host")
        http = f.get(rule, "http")
        if http is None:
            continue
        paths = f.items(f.get(http, "paths"))
        if not paths:
            causes.append(f.required(f"{at}.http.paths"))
        for j, item in enumerate(paths):
            causes += _ingress_path(item, f"{at}.http.paths[{j}]")
    return causes


def _peers(peers: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, peer in enumerate(f.items(peers)):
        at = f"{path}[{i}]"
        kinds = [k for k in ("podSelector", "namespaceSelector", "ipBlock") if f.get(peer, k)]
        kinds += [k for k in ("podSelector", "namespaceSelector") if f.get(peer, k) == {}]
        if not kinds:
            causes.append(f.required(at, "must specify a peer"))
        elif len(kinds) > 1 and f.get(peer, "ipBlock") is not None:
            causes.append(f.forbidden(at, "may not specify both ipBlock and another peer"))
        for key in ("podSelector", "namespaceSelector"):
            causes += f.label_selector(f.get(peer, key), f"{at}.{key}")
        block = f.get(peer, "ipBlock")
        if block is not None and not f.get(block, "cidr"):
            causes.append(f.required(f"{at}.ipBlock.cidr"))
    return causes


def _policy_ports(ports: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    for i, port in enumerate(f.items(ports)):
        at = f"{path}[{i}]"
        causes += f.one_of(port, "protocol", at, PROTOCOLS)
        if f.get(port, "port") is not None:
            causes += f.port_num_or_name(f.get(port, "port"), f"{at}.port")
    return causes


def network_policy(obj: Obj) -> list[Cause]:
    spec = f.mapping(obj.get("spec"))
    causes = f.label_selector(spec.get("podSelector"), "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(f.items(spec.get(direction))):
            at = f"spec.{direction}[{i}]"
            causes += _policy_ports(f.get(rule, "ports"), f"{at}.ports")
            causes += _peers(f.get(rule, peers), f"{at}.{peers}")
    types = f.items(spec.get("policyTypes"))
    if len(types) > 2:
        body = ", ".join(f.shown(str(t)) for t in types)
        value = f.Go(f"&[]networking.PolicyType{{{body}}}")
        too_many = "may not specify more than two policyTypes"
        return [*causes, f.invalid("spec.policyTypes", value, too_many)]
    for i, kind in enumerate(types):
        if kind not in _POLICY_TYPES:
            causes.append(f.not_supported(f"spec.policyTypes[{i}]", kind, _POLICY_TYPES))
    return causes
