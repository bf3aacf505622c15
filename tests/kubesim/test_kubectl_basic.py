"""kubectl against the simulator: the everyday commands."""

from __future__ import annotations

from tests.kubesim.conftest import Kubectl


def test_version_and_namespaces(kubectl: Kubectl) -> None:
    out = kubectl.run("version", "-o", "json").stdout
    assert '"minor": "32"' in out
    names = [n["metadata"]["name"] for n in kubectl.json("get", "namespaces")["items"]]
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= set(names)
