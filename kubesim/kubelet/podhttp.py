"""What a simulated container port answers: a small HTTP server that describes its pod.

Port-forwards and in-cluster ``wget``/``curl`` reach this. An ``nginx`` image serves its site as
nginx does: ``/usr/share/nginx/html`` (the image's welcome page, or what a volume mounts there)
with ``index.html`` for directories and nginx's own 404 page for anything else. Any other image
answers every path with 200 and the pod's identity (JSON, or HTML for a browser); a health path
returns 503 while the container is not ready, and a path containing ``fail`` always 503, so probes
and smoke tests behave believably. The server speaks HTTP/1.1 and closes the connection after each
response (``Connection: close``).
"""

from __future__ import annotations

import html
import json
import posixpath
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote

from kubesim.kubelet.behaviour import image_name
from kubesim.kubelet.image import Lookup, site_reader
from kubesim.shell.host import HttpReply

Obj = dict[str, Any]
Files = Callable[[str], bytes | None]
MAX_HEAD = 64 * 1024
HEALTH = ("/healthz", "/readyz", "/livez", "/health", "/ready")
SITE_ROOT = "/usr/share/nginx/html"
_TYPES = {
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".js": "application/javascript",
    ".json": "application/json",
    ".txt": "text/plain",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}


def declared_port(pod: Obj, port: int) -> Obj | None:
    """The container that declares ``containerPort: port``, if any."""
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("containerPort") == port:
                return dict(c)
    return None


def files_of(pod: Obj, port: int, lookup: Lookup) -> Files | None:
    """A reader of the filesystem of the container declaring ``port``, if any."""
    container = declared_port(pod, port)
    return site_reader(pod, container, lookup) if container is not None else None


def container_ready(pod: Obj, name: str) -> bool:
    for s in (pod.get("status") or {}).get("containerStatuses") or []:
        if s.get("name") == name:
            return bool(s.get("ready"))
    return False


def _nginx_version(image: str) -> str:
    tag = image.rsplit("/", 1)[-1].partition(":")[2].split("-", 1)[0]
    return tag if re.fullmatch(r"\d+\.\d+\.\d+", tag) else "1.27.3"


def _headers(ctype: str, body: bytes, server: str) -> tuple[tuple[str, str], ...]:
    return (
        ("Server", server),
        ("Date", time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())),
        ("Content-Type", ctype),
        ("Content-Length", str(len(body))),
        ("Connection", "close"),
    )


def _static(image: str, method: str, path: str, files: Files, address: str) -> HttpReply:
    """nginx's default server: files under the site root, ``index.html`` for a directory."""
    server = f"nginx/{_nginx_version(image)}"
    route = posixpath.normpath("/" + unquote(path.split("?", 1)[0]))
    candidates = [route, posixpath.join(route, "index.html")]
    body = next((b for b in (files(SITE_ROOT + c) for c in candidates) if b is not None), None)
    if body is None:
        body = (
            "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n"
            "<center><h1>404 Not Found</h1></center>\r\n"
            f"<hr><center>{server}</center>\r\n</body>\r\n</html>\r\n"
        ).encode()
        reply = _headers("text/html", body, server)
        return HttpReply(404, "Not Found", reply, b"" if method == "HEAD" else body, address)
    name = route if files(SITE_ROOT + route) is not None else "index.html"
    ctype = _TYPES.get(posixpath.splitext(name)[1], "application/octet-stream")
    reply = _headers(ctype, body, server)
    return HttpReply(200, "OK", reply, b"" if method == "HEAD" else body, address)


def answer(
    pod: Obj,
    port: int,
    method: str,
    path: str,
    headers: dict[str, str],
    *,
    address: str = "",
    files: Files | None = None,
) -> HttpReply:
    """The reply of the container declaring ``port``; ``files`` reads its filesystem (for the
    images that serve files)."""
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    container = declared_port(pod, port) or {}
    image = str(container.get("image", ""))
    if files is not None and image_name(image) == "nginx":
        return _static(image, method, path, files, address)
    name = str(container.get("name", ""))
    route = path.split("?", 1)[0]
    code, reason = 200, "OK"
    if "fail" in route or (route in HEALTH and name and not container_ready(pod, name)):
        code, reason = 503, "Service Unavailable"
    pod_info = {
        "name": meta["name"],
        "namespace": meta.get("namespace", ""),
        "uid": meta.get("uid", ""),
        "node": spec.get("nodeName", ""),
        "ip": status.get("podIP", ""),
        "labels": meta.get("labels") or {},
    }
    info: Obj = {
        "message": f"Hello from {meta['name']}" if code == 200 else "unavailable",
        "pod": pod_info,
        "container": {"name": name, "image": container.get("image", ""), "port": port},
        "request": {
            "method": method,
            "path": path,
            "host": headers.get("host", ""),
            "userAgent": headers.get("user-agent", ""),
        },
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "server": "wharf-kubesim",
    }
    if "text/html" in headers.get("accept", ""):
        rows = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
            for k, v in pod_info.items()
        )
        body = (
            f"<!DOCTYPE html>\n<html><head><title>{html.escape(meta['name'])}</title></head><body>"
            f"<h1>{html.escape(str(info['message']))}</h1><table>{rows}</table>"
            f"<p>{html.escape(name)} on port {port} ({html.escape(str(container.get('image', '')))})</p></body></html>\n"
        ).encode()
        ctype = "text/html; charset=utf-8"
    else:
        body = (json.dumps(info, indent=2) + "\n").encode()
        ctype = "application/json"
    reply_headers = (
        ("Content-Type", ctype),
        ("Content-Length", str(len(body))),
        ("Server", "wharf-kubesim"),
        ("Date", time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())),
        ("Connection", "close"),
    )
    return HttpReply(code, reason, reply_headers, b"" if method == "HEAD" else body, address)


def encode(reply: HttpReply) -> bytes:
    head = f"HTTP/1.1 {reply.status} {reply.reason}\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in reply.headers
    )
    return head.encode() + b"\r\n" + reply.body


async def serve(
    read: Callable[[], Awaitable[bytes]],
    write: Callable[[bytes], Awaitable[None]],
    pod: Obj,
    port: int,
    files: Files | None = None,
) -> None:
    """Answer one HTTP request arriving on a byte stream (a port-forward), then return.

    ``read`` returns ``b""`` at end of stream. Anything that is not an HTTP request gets a 400.
    """
    buf = b""
    while b"\r\n\r\n" not in buf and len(buf) < MAX_HEAD:
        chunk = await read()
        if not chunk:
            if not buf:
                return
            break
        buf += chunk
    head, _, _ = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        body = b"400 Bad Request\n"
        await write(
            b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\nConnection: close\r\n\r\n"
            + body
        )
        return
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    await write(encode(answer(pod, port, parts[0], parts[1], headers, files=files)))
