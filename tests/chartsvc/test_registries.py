"""Registry credentials read from the config.json `helm registry login` writes."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from chartsvc.registries import RegistryConfigInvalid, read_credentials


def test_reads_auth_and_username_password_forms(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    auths = {
        "registry.example.com:5000": {"auth": base64.b64encode(b"alice:s3:cret").decode()},
        "https://index.docker.io/v1/": {"username": "bob", "password": "pw"},
        "broken.example.com": {"auth": "not base64!"},
        "nocolon.example.com": {"auth": base64.b64encode(b"justuser").decode()},
    }
    config.write_text(json.dumps({"auths": auths, "credsStore": "desktop"}))
    assert read_credentials(config) == {
        "registry.example.com:5000": ("alice", "s3:cret"),
        "index.docker.io": ("bob", "pw"),
    }


def test_absent_file_is_anonymous_and_garbage_is_an_error(tmp_path: Path) -> None:
    assert read_credentials(tmp_path / "missing.json") == {}
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(RegistryConfigInvalid) as failed:
        read_credentials(tmp_path / "bad.json")
    assert "bad.json" in failed.value.detail
