"""What a container starts with: its image's filesystem, its mounted volumes and its environment.

The filesystem is a plausible Linux root (``/bin`` with the shell's commands, ``/etc`` with the
files kubelet writes: ``hostname``, ``hosts``, ``resolv.conf``) plus the flavor's own files (nginx
config and html, a redis data dir...). Volumes are mounted from the cluster's objects: ConfigMap and
Secret keys become files, ``emptyDir`` and PVCs empty directories, and the service-account token
directory appears unless automounting is off. The environment resolves ``env``/``envFrom`` like the
kubelet, including ``fieldRef`` and service links.
"""

from __future__ import annotations

import base64
import posixpath
import re
from collections.abc import Callable
from typing import Any

from kubesim.shell import COMMANDS, FileSystem, FsError

Obj = dict[str, Any]
Lookup = Callable[[tuple[str, str], str, str], Obj | None]
# What a projected serviceAccountToken holds: the kubelet has no signing key, so the file is a
# well-formed JWT that authenticates nobody (programs in simulated pods do not call the API).
_TOKEN = (
    b"eyJhbGciOiJSUzI1NiIsImtpZCI6Imt1YmVzaW0ifQ"
    b".eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2ltdWxhdGVk"
)
_ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56
_DIRS = (
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "media",
    "mnt",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "srv",
    "sys",
    "tmp",
    "usr/bin",
    "usr/lib",
    "usr/local/bin",
    "usr/sbin",
    "usr/share",
    "var/cache",
    "var/lib",
    "var/log",
    "var/run",
    "var/tmp",
)
_USERS = {"nginx": (101, "nginx"), "redis": (999, "redis"), "postgres": (999, "postgres")}
_FLAVOR_FILES: dict[str, dict[str, str]] = {
    "nginx": {
        "/etc/nginx/nginx.conf": "user  nginx;\nworker_processes  auto;\n\nerror_log  /var/log/nginx/error.log notice;\npid        /var/run/nginx.pid;\n\nevents {\n    worker_connections  1024;\n}\n\nhttp {\n    include       /etc/nginx/mime.types;\n    default_type  application/octet-stream;\n    sendfile        on;\n    keepalive_timeout  65;\n    include /etc/nginx/conf.d/*.conf;\n}\n",
        "/etc/nginx/conf.d/default.conf": "server {\n    listen       80;\n    server_name  localhost;\n\n    location / {\n        root   /usr/share/nginx/html;\n        index  index.html index.htm;\n    }\n}\n",
        "/usr/share/nginx/html/index.html": "<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n<h1>Welcome to nginx!</h1>\n<p>If you see this page, the nginx web server is successfully installed and\nworking.</p>\n</body>\n</html>\n",
        "/usr/share/nginx/html/50x.html": "<!DOCTYPE html>\n<html>\n<head><title>Error</title></head>\n<body><h1>An error occurred.</h1></body>\n</html>\n",
    },
    "redis": {
        "/data/dump.rdb": "REDIS0011\xfa\tredis-ver\x057.4.1",
        "/usr/local/etc/redis/redis.conf": "appendonly no\nsave 60 1000\n",
    },
    "postgres": {
        "/var/lib/postgresql/data/PG_VERSION": "16\n",
        "/var/lib/postgresql/data/postgresql.conf": "listen_addresses = '*'\nmax_connections = 100\n",
    },
    "app": {
        "/app/config.yaml": "server:\n  port: 8080\nlog:\n  level: info\n  format: json\n",
        "/app/README.md": "# service\n\nBuilt by CI. See config.yaml.\n",
    },
}


def build_fs(pod: Obj, container: Obj, flavor: str, lookup: Lookup, started: float) -> FileSystem:
    fs = FileSystem(mtime=started)
    for d in _DIRS:
        fs.mkdir(d, parents=True)
    fs.lookup("/tmp").mode = 0o1777  # noqa: S108 -- the container's own (virtual) /tmp
    fs.lookup("/root").mode = 0o700
    for name in sorted(COMMANDS) if flavor != "distroless" else ():
        if name.isidentifier() or name == "[":
            fs.write(f"/bin/{name}", _ELF + name.encode(), mode=0o755)
    meta, status = pod["metadata"], pod.get("status") or {}
    uid, user = _USERS.get(flavor, (0, "root"))
    users_file = "root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    group = "root:x:0:\ndaemon:x:1:\nnogroup:x:65534:\n"
    if uid:
        users_file += f"{user}:x:{uid}:{uid}:{user}:/home/{user}:/bin/false\n"
        group += f"{user}:x:{uid}:\n"
    files = {
        "/etc/hostname": ((pod.get("spec") or {}).get("hostname") or meta["name"]) + "\n",
        "/etc/hosts": "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
        f"{status.get('podIP', '')}\t{meta['name']}\n",
        "/etc/resolv.conf": f"search {meta['namespace']}.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n",
        "/etc/passwd": users_file,
        "/etc/group": group,
        "/etc/os-release": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n',
        **_FLAVOR_FILES.get(flavor, {}),
    }
    for path, text in files.items():
        fs.mkdir(posixpath.dirname(path), parents=True)
        fs.write(
            path, text.encode("latin-1", errors="replace") if "\xfa" in text else text.encode()
        )
    for path in _FLAVOR_FILES.get(flavor, {}):
        for p in (path, posixpath.dirname(path)):
            fs.lookup(p).uid = fs.lookup(p).gid = uid if not p.startswith("/etc") else 0
    _mount_volumes(fs, pod, container, lookup)
    return fs


def site_reader(pod: Obj, container: Obj, lookup: Lookup) -> Callable[[str], bytes | None]:
    """Reads a file of ``container``'s filesystem as a web server in it would: the image's files
    and mounted volumes (a ConfigMap ``index.html``), built on the first read. Changes made inside
    the container with ``kubectl exec`` are not seen."""
    built: list[FileSystem] = []

    def read(path: str) -> bytes | None:
        if not built:
            built.append(build_fs(pod, container, "nginx", lookup, 0.0))
        try:
            node = built[0].lookup(path)
            return None if node.is_dir else built[0].read(path)
        except FsError:
            return None

    return read


def field_value(pod: Obj, path: str) -> str:
    """What a ``fieldRef`` to ``path`` reads from ``pod`` (env vars and downward API files)."""
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    m = re.match(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    return str(
        {
            "metadata.name": meta.get("name"),
            "metadata.namespace": meta.get("namespace"),
            "metadata.uid": meta.get("uid"),
            "spec.nodeName": spec.get("nodeName"),
            "spec.serviceAccountName": spec.get("serviceAccountName"),
            "status.podIP": status.get("podIP"),
            "status.hostIP": status.get("hostIP"),
        }.get(path)
        or ""
    )


def _mount_volumes(fs: FileSystem, pod: Obj, container: Obj, lookup: Lookup) -> None:
    spec = pod.get("spec") or {}
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    mounts = list(container.get("volumeMounts") or [])
    for m in mounts:
        volume = volumes.get(m.get("name"), {})
        path = str(m.get("mountPath") or "")
        if not path:
            continue
        content = _volume_files(volume, pod, lookup)
        try:
            if m.get("subPath"):
                data = content.get(m["subPath"])
                fs.mkdir(posixpath.dirname(path), parents=True)
                if data is not None:
                    fs.write(path, data)
                else:
                    fs.mkdir(path, parents=True)
                continue
            fs.mkdir(path, parents=True)
            source = volume.get("configMap") or volume.get("secret") or volume.get("projected")
            mode = int((source or {}).get("defaultMode") or 0o644)
            for rel, data in content.items():
                fs.mkdir(posixpath.dirname(posixpath.join(path, rel)), parents=True)
                fs.write(posixpath.join(path, rel), data, mode=mode)
        except FsError:
            continue


def _volume_files(volume: Obj, pod: Obj, lookup: Lookup) -> dict[str, bytes]:
    ns = pod["metadata"]["namespace"]
    if "projected" in volume:
        sources = list((volume["projected"] or {}).get("sources") or [])
    else:
        sources = [volume]
    out: dict[str, bytes] = {}
    for src in sources:
        if "configMap" in src:
            ref = src["configMap"] or {}
            obj = lookup(("", "configmaps"), ns, str(ref.get("name", ""))) or {}
            data = {k: str(v).encode() for k, v in (obj.get("data") or {}).items()}
            data.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
        elif "secret" in src:
            ref = src["secret"] or {}
            obj = (
                lookup(("", "secrets"), ns, str(ref.get("secretName") or ref.get("name") or ""))
                or {}
            )
            data = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
        elif "serviceAccountToken" in src:
            out[str((src["serviceAccountToken"] or {}).get("path") or "token")] = _TOKEN
            continue
        elif "downwardAPI" in src:
            for item in (src["downwardAPI"] or {}).get("items") or []:
                path = str((item.get("fieldRef") or {}).get("fieldPath", ""))
                out[str(item.get("path"))] = field_value(pod, path).encode()
            continue
        else:
            continue
        items = ref.get("items")
        if items:
            data = {str(i.get("path")): data[i.get("key")] for i in items if i.get("key") in data}
        out.update(data)
    return out
