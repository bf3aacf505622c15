"""Deterministic, real-looking log text for simulated programs.

Each flavor (nginx, redis, postgres, coredns, a Go/klog component, a JSON-logging app) has a
startup banner and a steady stream of lines; crashing and OOM-killed programs say why before they
die. Line ``k`` of a run is a pure function of the run's seed and ``k`` (and its own timestamp), so
reading a log twice, or after a restart of the simulator, gives the same text.
"""

from __future__ import annotations

import hashlib
import random
import time

PATHS = (
    "/",
    "/api/v1/items",
    "/api/v1/items/42",
    "/api/v1/orders",
    "/healthz",
    "/metrics",
    "/static/app.js",
    "/login",
)
AGENTS = (
    "kube-probe/1.32",
    "Mozilla/5.0 (X11; Linux x86_64)",
    "curl/8.5.0",
    "Go-http-client/1.1",
    "python-requests/2.32",
)


def _rng(seed: str, k: int) -> random.Random:
    digest = hashlib.blake2b(f"{seed}#{k}".encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))  # noqa: S311 -- repeatable text, not secrets


def _ts(t: float, fmt: str) -> str:
    """``strftime`` plus ``{ms}`` for milliseconds."""
    millis = f"{int(t * 1000) % 1000:03d}"
    return time.strftime(fmt.replace("{ms}", "@MS@"), time.gmtime(t)).replace("@MS@", millis)


# Startup banners: the timestamp format (``_ts``), the release an untagged image stands for, and
# the lines, with ``{stamp}``, ``{release}`` and ``{program}`` (the image's last path segment).
_BANNERS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "nginx": (
        "%Y/%m/%d %H:%M:%S",
        "1.27.3",
        (
            "/docker-entrypoint.sh: /docker-entrypoint.d/ is not empty, will attempt to perform configuration",
            "/docker-entrypoint.sh: Looking for shell scripts in /docker-entrypoint.d/",
            "/docker-entrypoint.sh: Launching /docker-entrypoint.d/10-listen-on-ipv6-by-default.sh",
            "10-listen-on-ipv6-by-default.sh: info: Enabled listen on IPv6 in /etc/nginx/conf.d/default.conf",
            "/docker-entrypoint.sh: Configuration complete; ready for start up",
            '{stamp} [notice] 1#1: using the "epoll" event method',
            "{stamp} [notice] 1#1: nginx/{release}",
            "{stamp} [notice] 1#1: start worker processes",
        ),
    ),
    "redis": (
        "%d %b %Y %H:%M:%S.{ms}",
        "7.4.1",
        (
            "1:C {stamp} * oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
            "1:C {stamp} * Redis version={release}, bits=64, pid=1, just started",
            "1:M {stamp} * Server initialized",
            "1:M {stamp} * Ready to accept connections tcp",
        ),
    ),
    "postgres": (
        "%Y-%m-%d %H:%M:%S.{ms} UTC",
        "16.4",
        (
            "{stamp} [1] LOG:  starting PostgreSQL {release} on x86_64-pc-linux-gnu",
            '{stamp} [1] LOG:  listening on IPv4 address "0.0.0.0", port 5432',
            "{stamp} [1] LOG:  database system is ready to accept connections",
        ),
    ),
    "coredns": (
        "",
        "",
        (
            ".:53",
            "[INFO] plugin/reload: Running configuration SHA512 = 591cf3287c1d4cb6cc25ad6a0b5e5d4d4b4f6c3c",
            "CoreDNS-1.11.3",
            "linux/amd64, go1.21.11, a6338e9",
        ),
    ),
    "klog": (
        "%m%d %H:%M:%S.{ms}000",
        "",
        (
            "I{stamp}       1 main.go:42] Starting {program}",
            "I{stamp}       1 server.go:161] Serving securely on [::]:10250",
        ),
    ),
    "shell": ("", "", ()),
}


def startup(flavor: str, image: str, t: float) -> list[str]:
    program = image.rsplit("/", 1)[-1]
    version = image.rsplit(":", 1)[-1] if ":" in program else "latest"
    if flavor not in _BANNERS:
        return [
            _app_line(t, "INFO", "starting server", f'"version":"{version}","addr":":8080"'),
            _app_line(t, "INFO", "connected to dependencies", '"db":"ok","cache":"ok"'),
        ]
    stamp_format, default_release, lines = _BANNERS[flavor]
    # The image tag when it is a version number, else the release that tag stands for.
    release = version if version[0].isdigit() else default_release
    stamp = _ts(t, stamp_format)
    return [line.format(stamp=stamp, release=release, program=program) for line in lines]


def _app_line(t: float, level: str, msg: str, extra: str) -> str:
    stamp = _ts(t, "%Y-%m-%dT%H:%M:%S.{ms}Z")
    return f'{{"time":"{stamp}","level":"{level}","msg":"{msg}",{extra}}}'


def steady(flavor: str, seed: str, k: int, t: float) -> str:
    r = _rng(seed, k)
    ip = f"10.244.{r.randint(1, 3)}.{r.randint(2, 60)}"
    path = r.choice(PATHS)
    status = r.choices((200, 200, 200, 201, 304, 404, 500), k=1)[0]
    if flavor == "nginx":
        stamp = _ts(t, "%d/%b/%Y:%H:%M:%S +0000")
        method = "GET" if r.random() < 0.8 else "POST"
        return f'{ip} - - [{stamp}] "{method} {path} HTTP/1.1" {status} {r.randint(150, 9000)} "-" "{r.choice(AGENTS)}" "-"'
    if flavor == "redis":
        stamp = _ts(t, "%d %b %Y %H:%M:%S.{ms}")
        return r.choice(
            (
                f"1:M {stamp} * {r.randint(1, 500)} changes in 60 seconds. Saving...",
                f"1:M {stamp} * Background saving started by pid {r.randint(20, 900)}",
                f"1:M {stamp} * Background saving terminated with success",
                f"{r.randint(20, 900)}:C {stamp} * DB saved on disk",
            )
        )
    if flavor == "postgres":
        stamp = _ts(t, "%Y-%m-%d %H:%M:%S.{ms} UTC")
        return r.choice(
            (
                f"{stamp} [{r.randint(30, 99)}] LOG:  checkpoint starting: time",
                f"{stamp} [{r.randint(30, 99)}] LOG:  checkpoint complete: wrote {r.randint(1, 90)} buffers ({r.random():.1f}%); 0 WAL file(s) added, 0 removed, 0 recycled",
                f"{stamp} [{r.randint(100, 999)}] LOG:  connection received: host={ip} port={r.randint(30000, 60000)}",
            )
        )
    if flavor == "coredns":
        name = r.choice(
            (
                "api.shop.svc.cluster.local.",
                "redis.shop.svc.cluster.local.",
                "kubernetes.default.svc.cluster.local.",
            )
        )
        return f'[INFO] {ip}:{r.randint(30000, 60000)} - {r.randint(1, 65535)} "A IN {name} udp 52 false 512" NOERROR qr,aa,rd 106 0.000{r.randint(100, 999)}s'
    if flavor == "klog":
        stamp = _ts(t, "%m%d %H:%M:%S.{ms}000")
        return f'I{stamp}       1 controller.go:{r.randint(90, 400)}] "Synced" resource="{r.choice(("nodes", "pods", "endpoints"))}" duration="{r.randint(1, 90)}ms"'
    level = "WARN" if status >= 500 else "INFO"
    extra = f'"method":"GET","path":"{path}","status":{status},"duration_ms":{r.randint(1, 250)},"request_id":"{r.getrandbits(48):012x}"'
    return _app_line(t, level, "request completed", extra)


def crash(seed: str, t: float) -> list[str]:
    r = _rng(seed, -1)
    port = r.choice((5432, 6379, 3306, 9092))
    return [
        _app_line(
            t,
            "ERROR",
            "dependency check failed",
            f'"target":"10.96.{r.randint(1, 200)}.{r.randint(2, 250)}:{port}","error":"connect: connection refused"',
        ),
        f"panic: failed to connect to backend: dial tcp 10.96.0.{r.randint(2, 250)}:{port}: connect: connection refused",
        "",
        "goroutine 1 [running]:",
        "main.main()",
        "\t/src/cmd/server/main.go:57 +0x2a5",
    ]


def oom(seed: str, t: float, k: int) -> str:
    return _app_line(t, "INFO", "cache warm-up", f'"chunk":{k},"allocated_mb":{64 * k}')


def completion(seed: str, t: float, argv: tuple[str, ...]) -> list[str]:
    r = _rng(seed, -2)
    what = " ".join(argv) if argv else "job"
    return [
        _app_line(t, "INFO", "starting", f'"cmd":"{what[:60]}"'),
        _app_line(t, "INFO", "processed batch", f'"records":{r.randint(100, 5000)}'),
        _app_line(t, "INFO", "done", '"exit":0'),
    ]
