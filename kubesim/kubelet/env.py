"""A container's environment, resolved as the kubelet does it.

``env`` (with ``$(VAR)`` references), ``envFrom`` ConfigMaps and Secrets, ``fieldRef``, the
``KUBERNETES_*`` variables and the Docker-style service links of every Service in the namespace.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from kubesim.kubelet.image import Lookup, field_value

Obj = dict[str, Any]
_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_FLAVOR_ENV = {
    "nginx": {"NGINX_VERSION": "1.27.3", "NJS_VERSION": "0.8.7", "PKG_RELEASE": "1~bookworm"},
    "redis": {
        "REDIS_VERSION": "7.4.1",
        "REDIS_DOWNLOAD_URL": "http://download.redis.io/releases/redis-7.4.1.tar.gz",
    },
    "postgres": {
        "PG_MAJOR": "16",
        "PG_VERSION": "16.4-1.pgdg120+2",
        "PGDATA": "/var/lib/postgresql/data",
    },
}


def container_env(
    pod: Obj, container: Obj, flavor: str, lookup: Lookup, services: list[Obj]
) -> dict[str, str]:
    ns = pod["metadata"]["namespace"]
    env: dict[str, str] = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOSTNAME": pod["metadata"]["name"],
        "HOME": "/root",
        **_FLAVOR_ENV.get(flavor, {}),
    }
    if (pod.get("spec") or {}).get("enableServiceLinks", True):
        for svc in services:
            env.update(_service_env(svc))
    env.update(
        _service_env(
            {
                "metadata": {"name": "kubernetes"},
                "spec": {
                    "clusterIP": "10.96.0.1",
                    "ports": [{"name": "https", "port": 443, "protocol": "TCP"}],
                },
            }
        )
    )
    for src in container.get("envFrom") or []:
        prefix = str(src.get("prefix") or "")
        if "configMapRef" in src:
            obj = lookup(("", "configmaps"), ns, str(src["configMapRef"].get("name", ""))) or {}
            env.update({prefix + k: str(v) for k, v in (obj.get("data") or {}).items()})
        if "secretRef" in src:
            obj = lookup(("", "secrets"), ns, str(src["secretRef"].get("name", ""))) or {}
            env.update(
                {
                    prefix + k: base64.b64decode(v).decode(errors="replace")
                    for k, v in (obj.get("data") or {}).items()
                }
            )
    for e in container.get("env") or []:
        name = str(e.get("name", ""))
        if "value" in e:
            env[name] = _REF.sub(
                lambda m: env.get(m.group(1), m.group(0)), str(e.get("value") or "")
            )
            continue
        src = e.get("valueFrom") or {}
        if "fieldRef" in src:
            env[name] = field_value(pod, str(src["fieldRef"].get("fieldPath", "")))
        elif "configMapKeyRef" in src:
            ref = src["configMapKeyRef"]
            obj = lookup(("", "configmaps"), ns, str(ref.get("name", ""))) or {}
            env[name] = str((obj.get("data") or {}).get(ref.get("key"), ""))
        elif "secretKeyRef" in src:
            ref = src["secretKeyRef"]
            obj = lookup(("", "secrets"), ns, str(ref.get("name", ""))) or {}
            raw = (obj.get("data") or {}).get(ref.get("key"))
            env[name] = base64.b64decode(raw).decode(errors="replace") if raw else ""
        elif "resourceFieldRef" in src:
            env[name] = "0"
    return env


def _service_env(svc: Obj) -> dict[str, str]:
    spec = svc.get("spec") or {}
    ip = spec.get("clusterIP")
    ports = spec.get("ports") or []
    if not ip or ip == "None" or not ports:
        return {}
    base = svc["metadata"]["name"].upper().replace("-", "_")
    first = ports[0]
    out = {
        f"{base}_SERVICE_HOST": ip,
        f"{base}_SERVICE_PORT": str(first.get("port")),
        f"{base}_PORT": f"tcp://{ip}:{first.get('port')}",
    }
    for p in ports:
        proto = str(p.get("protocol", "TCP"))
        key = f"{base}_PORT_{p.get('port')}_{proto}"
        out.update(
            {
                key: f"{proto.lower()}://{ip}:{p.get('port')}",
                f"{key}_PROTO": proto.lower(),
                f"{key}_PORT": str(p.get("port")),
                f"{key}_ADDR": ip,
            }
        )
        if p.get("name"):
            out[f"{base}_SERVICE_PORT_{str(p['name']).upper().replace('-', '_')}"] = str(
                p.get("port")
            )
    return out
