"""Kubeconfig handling as kubectl does it: merging, precedence, file references, extraction."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

import kubeclient


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


FIRST = """
apiVersion: v1
kind: Config
current-context: a
clusters:
- name: c1
  cluster: {server: "https://one:6443", certificate-authority: ca.crt}
users:
- name: u1
  user: {token: first-token}
contexts:
- name: a
  context: {cluster: c1, user: u1, namespace: team-a}
- name: shared
  context: {cluster: c1, user: u1}
"""

SECOND = """
apiVersion: v1
kind: Config
current-context: b
clusters:
- name: c2
  cluster: {server: "https://two:6443", insecure-skip-tls-verify: true}
- name: c1
  cluster: {server: "https://shadowed:6443"}
users:
- name: u2
  user: {tokenFile: token.txt}
contexts:
- name: b
  context: {cluster: c2, user: u2}
- name: shared
  context: {cluster: c2, user: u2}
"""


@pytest.fixture
def two_files(tmp_path: Path) -> list[Path]:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    (tmp_path / "one" / "ca.crt").write_bytes(b"CA-BYTES")
    (tmp_path / "two" / "token.txt").write_text("second-token\n")
    return [write(tmp_path / "one" / "config", FIRST), write(tmp_path / "two" / "config", SECOND)]


def test_default_paths_follow_kubectl(tmp_path: Path) -> None:
    assert kubeclient.default_paths({"HOME": "/home/x"}) == [Path("/home/x/.kube/config")]
    assert kubeclient.default_paths({"KUBECONFIG": "/a:/b", "HOME": "/h"}) == [
        Path("/a"),
        Path("/b"),
    ]
    assert kubeclient.default_paths({}) == []


def test_merge_first_definition_wins(two_files: list[Path], tmp_path: Path) -> None:
    config = kubeclient.load([*two_files, tmp_path / "missing"])
    assert config is not None
    assert config.current_context == "a"
    names = [c.name for c in config.contexts()]
    assert names == ["a", "shared", "b"]
    shared = next(c for c in config.contexts() if c.name == "shared")
    assert (shared.cluster, shared.server) == ("c1", "https://one:6443")
    assert config.sources == tuple(str(p) for p in two_files)


def test_file_references_resolve_against_their_own_file(two_files: list[Path]) -> None:
    config = kubeclient.load(two_files)
    assert config is not None
    one = config.for_context("a")
    cluster = one["clusters"][0]["cluster"]
    assert base64.b64decode(cluster["certificate-authority-data"]) == b"CA-BYTES"
    assert "certificate-authority" not in cluster
    two = config.for_context("b")  # a token file stays a file, to be re-read when it changes
    assert two["users"][0]["user"]["tokenFile"] == str(two_files[1].parent / "token.txt")
    assert two["current-context"] == "b"
    assert [c["name"] for c in two["clusters"]] == ["c2"]


def test_no_file_means_no_config(tmp_path: Path) -> None:
    assert kubeclient.load([tmp_path / "nope"]) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not: [valid", "not valid YAML"),
        ("kind: Pod\n", "not a kubeconfig"),
        ("clusters: {a: 1}\n", "clusters must be a list"),
    ],
)
def test_unusable_kubeconfig_is_a_400(text: str, message: str) -> None:
    with pytest.raises(kubeclient.KubeConfigError, match=message) as info:
        kubeclient.parse(text)
    assert info.value.status == 400


def test_missing_context_cluster_or_user(two_files: list[Path]) -> None:
    config = kubeclient.parse(FIRST.replace("server:", "nothing:"))
    with pytest.raises(kubeclient.KubeConfigError, match="no context named 'zz'"):
        config.for_context("zz")
    with pytest.raises(kubeclient.KubeConfigError, match="has no server"):
        config.for_context("a")
    dangling = kubeclient.parse(FIRST.replace("user: u1, namespace", "user: ghost, namespace"))
    with pytest.raises(kubeclient.KubeConfigError, match="ghost"):
        dangling.for_context("a")


def test_repr_never_shows_credentials(two_files: list[Path]) -> None:
    config = kubeclient.load(two_files)
    assert "first-token" not in repr(config)


def test_cluster_errors_keep_status_and_message() -> None:
    class ApiError(Exception):
        status = 422
        reason = "Unprocessable Entity"
        body = b'{"kind":"Status","message":"admission webhook denied the request: no"}'

    err = kubeclient.cluster_error(ApiError())
    assert (err.status, err.code) == (422, "cluster-refused")
    assert "admission webhook denied" in err.detail
    unreachable = kubeclient.cluster_error(ConnectionRefusedError())
    assert unreachable.status == 502
