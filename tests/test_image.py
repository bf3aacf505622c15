"""The container image: the OCI layout scripts/build_image.py writes (digests, layers, a non-root
config with a health check) and the Containerfile engines build from."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import io
import json
import tarfile
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def build_image() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_image", ROOT / "scripts/build_image.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def layer(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_the_layout_is_a_valid_oci_image(build_image: ModuleType, tmp_path: Path) -> None:
    base = layer(tmp_path / "base.tar", {"usr/bin/python3": b"#!python"})
    app = layer(tmp_path / "app.tar", {"opt/wharf/bin/wharf": b"#!wharf"})
    out = tmp_path / "image.oci.tar"
    digest = build_image.write_layout(out, [base, app], tag="wharf:9.9.9")
    with tarfile.open(out) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]

    def blob(digest: str) -> bytes:
        data = files[f"blobs/sha256/{digest.removeprefix('sha256:')}"]
        assert "sha256:" + hashlib.sha256(data).hexdigest() == digest
        return data

    assert json.loads(files["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    [entry] = json.loads(files["index.json"])["manifests"]
    assert entry["digest"] == digest
    assert entry["annotations"]["org.opencontainers.image.ref.name"] == "9.9.9"
    manifest = json.loads(blob(digest))
    assert manifest["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
    config = json.loads(blob(manifest["config"]["digest"]))
    unpacked = [gzip.decompress(blob(d["digest"])) for d in manifest["layers"]]
    assert unpacked == [base.read_bytes(), app.read_bytes()]
    assert config["rootfs"]["diff_ids"] == [
        "sha256:" + hashlib.sha256(raw).hexdigest() for raw in unpacked
    ]
    settings = config["config"]
    assert settings["User"] == "10001:10001"  # not root
    assert settings["Entrypoint"] == ["/opt/wharf/bin/wharf"]
    assert settings["Healthcheck"]["Test"] == ["CMD", "/opt/wharf/bin/wharf", "probe"]
    assert set(settings["ExposedPorts"]) == {"8080/tcp", "8081/tcp", "8082/tcp"}
    assert "PYTHONMALLOC=malloc" in settings["Env"]  # memory given back after a burst


def test_the_app_layer_keeps_code_root_owned_and_state_private(
    build_image: ModuleType, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "wharf").write_text("#!wharf")
    out = tmp_path / "app.tar"
    build_image.app_layer(venv, out)
    with tarfile.open(out) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert members["opt/wharf/bin/wharf"].uid == 0
    state = members["var/lib/wharf"]
    assert (state.uid, state.mode) == (10001, 0o700)


def test_the_containerfile_is_multi_stage_non_root_and_checked() -> None:
    lines = (ROOT / "deploy/container/Containerfile").read_text().splitlines()
    stages = [line for line in lines if line.startswith("FROM ")]
    assert len(stages) == 2
    assert "COPY --from=build /opt/wharf /opt/wharf" in lines
    assert "USER 10001:10001" in lines
    assert any(line.startswith("HEALTHCHECK ") and '"probe"' in line for line in lines)
    assert 'ENTRYPOINT ["wharf"]' in lines
    [env] = [line for line in lines if line.startswith("ENV ")]
    assert "PYTHONMALLOC=malloc" in env.split()


def test_the_image_gets_every_package_the_project_installs(build_image: ModuleType) -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in config["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert packages <= set(build_image.SOURCES)
    copied = {
        line.split()[1]
        for line in (ROOT / "deploy/container/Containerfile").read_text().splitlines()
        if line.startswith("COPY ") and "--from" not in line
    }
    assert packages <= copied


def test_the_runtime_has_gpg_for_the_provenance_keyring(build_image: ModuleType) -> None:
    """chartsvc reads its keyring with gpg: both ways of building put it in the runtime stage."""
    text = (ROOT / "deploy/container/Containerfile").read_text()
    runtime = text.rsplit("\nFROM ", 1)[1]
    assert "apt-get install -y --no-install-recommends gpg" in runtime
    assert "gpg" in build_image.RUNTIME_PACKAGES
