"""What a simulated container does, decided from its spec alone (so it is deterministic).

There are no real images, so the image name and the command select a behaviour:

* ``command``/``args`` that start with a shell (``sh -c ...``) or a command the built-in shell knows
  (``echo``, ``wget``, ``sleep``...) run as a real script: its output is the log, its exit status
  the container's (``exit 1`` crash-loops, ``wget svc:80`` in a Helm test passes or fails for real).
  A program the shell does not know (``nginx -g ...``, ``python app.py``) is opaque: it serves
  forever under ``restartPolicy: Always`` and runs to completion otherwise. A script as PID 1
  ignores SIGTERM unless it traps TERM (the kernel gives PID 1 no default action), so deleting its
  pod takes the whole grace period; opaque programs stop at once.
* Without a command, shell images (busybox, alpine, ubuntu...) run ``sh`` -- which exits at once
  without stdin, exactly like the real image -- and other images serve (or complete, in Jobs).
* Failure modes, for demos and tests, by image name or by the ``KUBESIM_MODE`` env var:
  ``crash``/``crashloop`` crash-loops with a log explaining why; ``oom`` is OOMKilled (exit 137);
  ``unready``/``not-ready`` never passes its readiness probe; an image named ``does-not-exist``,
  ``doesnotexist``, ``nonexistent`` or ``no-such-image`` (or a ``.invalid`` registry) cannot be
  pulled (ErrImagePull → ImagePullBackOff), and neither can a tag an official image never had:
  for the Docker Hub library images in ``_RELEASES`` a tag must be a version whose major the image
  has released (``nginx:1.27``, ``redis:7.4.1-alpine``; not ``nginx:9.9``) or a variant word
  (``latest``, ``alpine``, ``bookworm``, ``stable-alpine``...). Digests and other images always pull. A readiness probe on a path containing ``fail``, or an
  exec probe running ``false``/``exit 1``, fails too. An unschedulable pod needs nothing special:
  ask for more CPU or memory than a node has, or a ``nodeSelector`` no node matches. An image from
  a ``distroless`` repository has no shell: ``kubectl exec`` into it fails as it really does.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

import attrs

from kubesim.shell import COMMANDS

Obj = dict[str, Any]
SHELLS = ("sh", "bash", "ash", "dash")
SHELL_IMAGES = ("busybox", "alpine", "ubuntu", "debian", "bash", "curl", "netshoot", "toolbox")
MODES = ("serve", "complete", "crash", "oom", "script")
_PULL_FAILURES = ("does-not-exist", "doesnotexist", "nonexistent", "no-such-image")
# Docker Hub library images -> the first and last major version they have released.
_RELEASES = {
    "nginx": (1, 1),
    "httpd": (2, 2),
    "redis": (2, 8),
    "postgres": (8, 18),
    "mysql": (5, 9),
    "mariadb": (5, 11),
    "mongo": (3, 8),
    "memcached": (1, 1),
    "busybox": (1, 1),
    "alpine": (2, 3),
    "debian": (6, 13),
    "ubuntu": (10, 25),
    "python": (2, 3),
    "node": (0, 24),
    "golang": (1, 1),
}
_VARIANTS = frozenset(
    [
        "latest",
        "stable",
        "mainline",
        "lts",
        "current",
        "alpine",
        "slim",
        "bookworm",
        "bullseye",
        "buster",
        "trixie",
        "jammy",
        "noble",
        "focal",
        "musl",
        "glibc",
        "uclibc",
        "perl",
        "otel",
        "windowsservercore",
        "nanoserver",
    ]
)
_VERSION = re.compile(r"v?(\d+)(\.\d+){0,3}")
_TERM_TRAP = re.compile(r"\btrap\b.*\b(SIG)?(TERM|15)\b")
FLAVORS = {
    "nginx": "nginx",
    "httpd": "nginx",
    "apache": "nginx",
    "caddy": "nginx",
    "traefik": "nginx",
    "redis": "redis",
    "valkey": "redis",
    "memcached": "redis",
    "postgres": "postgres",
    "mysql": "postgres",
    "mariadb": "postgres",
    "mongo": "postgres",
    "coredns": "coredns",
    "kube-proxy": "klog",
    "metrics-server": "klog",
    "node-exporter": "klog",
    "prometheus": "klog",
    "kindnet": "klog",
}


@attrs.frozen
class Behaviour:
    mode: str
    flavor: str
    argv: tuple[str, ...] = ()
    pull_error: str = ""
    has_probe: bool = False
    ready: bool = True
    ignores_term: bool = False
    """PID 1 is a script without a TERM trap: SIGTERM does nothing, only SIGKILL stops it."""


def image_name(image: str) -> str:
    """``ghcr.io/acme/api:1.2`` → ``api``."""
    last = image.rsplit("/", 1)[-1]
    return last.split("@", 1)[0].split(":", 1)[0].lower()


def normalize_image(image: str) -> str:
    """The fully qualified reference containerd reports (``docker.io/library/nginx:latest``)."""
    ref = image
    first = ref.split("/", 1)[0]
    if "/" not in ref:
        ref = f"docker.io/library/{ref}"
    elif "." not in first and ":" not in first and first != "localhost":
        ref = f"docker.io/{ref}"
    last = ref.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in last:
        ref += ":latest"
    return ref


def flavor_of(name: str) -> str:
    """The flavor of an image name (see :func:`image_name`)."""
    for key, flavor in FLAVORS.items():
        if key in name:
            return flavor
    if any(s in name for s in SHELL_IMAGES):
        return "shell"
    return "app"


def _probe_fails(probe: Obj) -> bool:
    http = probe.get("httpGet") or {}
    if "fail" in str(http.get("path", "")):
        return True
    command = " ".join(str(a) for a in (probe.get("exec") or {}).get("command") or [])
    return command.strip() in ("false", "/bin/false") or "exit 1" in command


def classify(container: Obj, restart_policy: str) -> Behaviour:
    image = str(container.get("image") or "")
    name = image_name(image)
    flavor = "distroless" if "distroless" in image else flavor_of(name)
    env = {e.get("name"): e.get("value") for e in container.get("env") or [] if isinstance(e, dict)}
    wanted = str(env.get("KUBESIM_MODE") or "")
    probe = container.get("readinessProbe") or {}
    pull_error = ""
    registry = image.split("/", 1)[0] if "/" in image else ""
    if (
        any(p in name for p in _PULL_FAILURES)
        or registry.endswith(".invalid")
        or not _tag_exists(image)
    ):
        pull_error = _pull_message(image)
    argv = tuple(str(a) for a in (container.get("command") or []) + (container.get("args") or []))
    if wanted in MODES and wanted != "script":
        mode = wanted
    elif "crash" in name or wanted == "crashloop":
        mode = "crash"
    elif "oom" in name:
        mode = "oom"
    elif argv and (
        posixpath.basename(argv[0]) in SHELLS or posixpath.basename(argv[0]) in COMMANDS
    ):
        mode = "script"
    elif not argv and flavor == "shell":
        mode, argv = "script", ("sh",)
    else:
        mode = "serve" if restart_policy == "Always" else "complete"
    unready = "unready" in name or "not-ready" in name or wanted in ("unready", "not-ready")
    traps = _TERM_TRAP.search(" ".join(argv)) is not None
    return Behaviour(
        mode=mode,
        flavor=flavor,
        argv=argv,
        pull_error=pull_error,
        has_probe=bool(probe) or unready,
        ready=not unready and not (probe and _probe_fails(probe)),
        ignores_term=mode == "script" and not traps,
    )


def _tag_exists(image: str) -> bool:
    """Whether a library image's tag is one it could have (see the module docstring)."""
    ref = normalize_image(image)
    if "@" in ref or not ref.startswith("docker.io/library/"):
        return True
    repository, _, tag = ref[len("docker.io/library/") :].partition(":")
    releases = _RELEASES.get(repository)
    if releases is None:
        return True
    for part in tag.split("-"):
        version = _VERSION.fullmatch(part)
        if version is not None:
            if not releases[0] <= int(version.group(1)) <= releases[1]:
                return False
        elif part.rstrip("0123456789.") not in _VARIANTS:
            return False
    return True


def _pull_message(image: str) -> str:
    ref = normalize_image(image)
    return (
        f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and '
        f'unpack image "{ref}": failed to resolve reference "{ref}": {ref}: not found'
    )
