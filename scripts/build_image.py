"""Build Wharf's container image: one image for all three services (``IMAGE serve results``),
non-root, with a health check (``wharf probe``).

With a working container engine (docker or podman) it builds ``deploy/container/Containerfile``.
Without one it assembles the same image itself, in two stages, and writes it as an OCI image
layout in a tar archive (``podman load``, ``skopeo copy oci-archive:...`` and registries take it):

1. the runtime root file system: Debian's minimal base with Python 3.11, made by ``mmdebstrap``
   from the Debian archive (installed with apt-get when missing);
2. a build root with the venv tools, where ``/opt/wharf`` gets a venv with Wharf installed from
   this checkout; only ``/opt/wharf`` is taken from it, as the second layer.

Usage: ``python3 scripts/build_image.py [--output wharf-image.oci.tar] [--engine auto|none]``.
Run as root (mmdebstrap makes device nodes and changes owners). This module must not be imported
by the services.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUITE = "bookworm"
USER = "10001:10001"
STATE = "var/lib/wharf"
PORTS = (8080, 8081, 8082)
#: What the image's source tree needs to install (the rest of the checkout stays out).
SOURCES = (
    "pyproject.toml",
    "README.md",
    "wharf",
    "common",
    "kubeclient",
    "kubesim",
    "chartsvc",
    "results",
    "console",
    "spec",
)
#: gpg (GnuPG's binary, without agent or network daemon) reads chartsvc.security.keyring.
RUNTIME_PACKAGES = ("python3", "ca-certificates", "gpg")
BUILD_PACKAGES = ("python3", "python3-venv", "ca-certificates")
HOST_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
#: Commands in a build root see none of this host's environment (pip settings, paths).
CLEAN_ENV = "env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root PIP_NO_CACHE_DIR=1"
#: Left out of the runtime layer: documentation, manuals, locales and apt's package lists.
EXCLUDE = ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/locale/*", "/usr/share/info/*")


def media(kind: str) -> str:
    return f"application/vnd.oci.image.{kind}.v1+json"


LAYER_MEDIA = "application/vnd.oci.image.layer.v1.tar+gzip"


def engine() -> str | None:
    """docker or podman when one answers (a CLI without its daemon does not count)."""
    for name in ("podman", "docker"):
        if (
            shutil.which(name)
            and subprocess.run([name, "info"], capture_output=True, check=False).returncode == 0
        ):
            return name
    return None


def version() -> str:
    for line in (ROOT / "pyproject.toml").read_text().splitlines():
        if line.startswith("version = "):
            return line.split('"')[1]
    raise SystemExit("no version in pyproject.toml")


def mmdebstrap(target: Path, packages: Iterable[str], *hooks: str) -> None:
    if shutil.which("mmdebstrap") is None:
        subprocess.run(["apt-get", "install", "-y", "-qq", "mmdebstrap"], check=True)
    command = ["mmdebstrap", "--variant=minbase", "--include=" + ",".join(packages)]
    command += [f"--dpkgopt=path-exclude={pattern}" for pattern in EXCLUDE]
    command += ['--aptopt=Acquire::Languages "none"']
    command += [f"--customize-hook={hook}" for hook in hooks]
    command += ['--customize-hook=rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*']
    subprocess.run([*command, SUITE, str(target)], check=True)


def build_venv(work: Path) -> Path:
    """The build stage: a root with the venv tools; ``/opt/wharf`` installed in it from here."""
    source = work / "src"
    source.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, source / name)
    build = work / "build"
    # The download trusts what this host trusts (a proxy's CA, say); only the build root sees it.
    mmdebstrap(
        build,
        BUILD_PACKAGES,
        f'cp -a {source} "$1"/src',
        f'cp {HOST_CA_BUNDLE} "$1"/tmp/host-ca.crt',
        f'chroot "$1" {CLEAN_ENV} python3 -m venv /opt/wharf',
        f'chroot "$1" {CLEAN_ENV} PIP_CERT=/tmp/host-ca.crt /opt/wharf/bin/pip install /src',
        f'chroot "$1" {CLEAN_ENV} /opt/wharf/bin/pip uninstall -y pip',
    )
    return build / "opt" / "wharf"


def app_layer(venv: Path, out: Path) -> None:
    """``/opt/wharf`` (root-owned, read-only to the service) and the state directory."""
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        for directory in ("opt", STATE.rsplit("/", 1)[0]):
            tar.addfile(_directory(directory, owner=0, mode=0o755))
        tar.add(venv, arcname="opt/wharf", filter=_normalised)
        tar.addfile(_directory(STATE, owner=10001, mode=0o700))


def _directory(name: str, *, owner: int, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, mode, owner, owner
    return info


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = 0
    return info


def image_config(diff_ids: list[str], *, tag: str) -> dict[str, Any]:
    created = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "created": created,
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "User": USER,
            "Entrypoint": ["/opt/wharf/bin/wharf"],
            "Cmd": ["--help"],
            "Env": [
                "PATH=/opt/wharf/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                f"HOME=/{STATE}",
                "PYTHONDONTWRITEBYTECODE=1",
                # glibc's allocator: memory a burst of connections took goes back afterwards
                "PYTHONMALLOC=malloc",
            ],
            "WorkingDir": f"/{STATE}",
            "ExposedPorts": {f"{port}/tcp": {} for port in PORTS},
            # Docker's extension of the config; engines that know it run the check.
            "Healthcheck": {
                "Test": ["CMD", "/opt/wharf/bin/wharf", "probe"],
                "Interval": 30_000_000_000,
                "Timeout": 5_000_000_000,
                "StartPeriod": 20_000_000_000,
                "Retries": 3,
            },
            "Labels": {
                "org.opencontainers.image.title": "wharf",
                "org.opencontainers.image.version": tag.rsplit(":", 1)[-1],
                "org.opencontainers.image.licenses": "Apache-2.0",
            },
        },
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [
            {"created": created, "created_by": f"mmdebstrap {SUITE} minbase + python3"},
            {"created": created, "created_by": "venv /opt/wharf with wharf installed"},
        ],
    }


def write_layout(out: Path, layers: list[Path], *, tag: str) -> str:
    """An OCI image layout (``oci-layout``, ``index.json``, ``blobs/sha256``) as a tar archive at
    ``out``, from uncompressed layer tars, bottom first; returns the manifest's digest."""
    blobs: dict[str, bytes] = {}

    def blob(data: bytes) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return digest

    descriptors, diff_ids = [], []
    for layer in layers:
        raw = layer.read_bytes()
        diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
        packed = gzip.compress(raw, compresslevel=6, mtime=0)
        descriptors.append({"mediaType": LAYER_MEDIA, "digest": blob(packed), "size": len(packed)})
    config = _json(image_config(diff_ids, tag=tag))
    manifest = _json(
        {
            "schemaVersion": 2,
            "mediaType": media("manifest"),
            "config": {"mediaType": media("config"), "digest": blob(config), "size": len(config)},
            "layers": descriptors,
        }
    )
    manifest_digest = blob(manifest)
    index = {
        "schemaVersion": 2,
        "mediaType": media("index"),
        "manifests": [
            {
                "mediaType": media("manifest"),
                "digest": manifest_digest,
                "size": len(manifest),
                "annotations": {"org.opencontainers.image.ref.name": tag.rsplit(":", 1)[-1]},
            }
        ],
    }
    files = {
        "oci-layout": _json({"imageLayoutVersion": "1.0.0"}),
        "index.json": _json(index),
        **{f"blobs/sha256/{d.removeprefix('sha256:')}": data for d, data in blobs.items()},
    }
    _write_tar(out, files)
    return manifest_digest


def _json(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


def _write_tar(out: Path, files: Mapping[str, bytes]) -> None:
    with tarfile.open(out, "w") as tar:
        for directory in ("blobs", "blobs/sha256"):
            tar.addfile(_directory(directory, owner=0, mode=0o755))
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))


def build_without_engine(out: Path, tag: str) -> str:
    if os.geteuid() != 0:
        raise SystemExit("building without a container engine needs root (for mmdebstrap)")
    with tempfile.TemporaryDirectory(prefix="wharf-image-") as tmp:
        work = Path(tmp)
        runtime = work / "runtime.tar"
        mmdebstrap(runtime, RUNTIME_PACKAGES)
        app = work / "app.tar"
        app_layer(build_venv(work), app)
        return write_layout(out, [runtime, app], tag=tag)


def web_assets() -> None:
    """The console's terminal emulator (xterm.js), fetched and checked against its pinned hashes
    by the project's install step into ``console/web/static/vendor/``, which both ways of
    building copy from this checkout."""
    command = ["bash", "-c", "source scripts/_env.sh && ensure_web_assets"]
    subprocess.run(command, cwd=ROOT, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=ROOT / "wharf-image.oci.tar")
    parser.add_argument("--tag", default=f"wharf:{version()}")
    parser.add_argument("--engine", choices=["auto", "none"], default="auto")
    args = parser.parse_args()
    web_assets()
    found = engine() if args.engine == "auto" else None
    if found is not None:
        containerfile = ROOT / "deploy" / "container" / "Containerfile"
        command = [found, "build", "-f", str(containerfile), "-t", args.tag, str(ROOT)]
        return subprocess.run(command, check=False).returncode
    digest = build_without_engine(args.output, args.tag)
    size = args.output.stat().st_size / 1e6
    print(f"{args.tag}: {args.output} ({size:.0f} MB), manifest {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
