"""Wharf's own Helm chart (deploy/helm/wharf), templated and installed by chartsvc into the
simulator, and the objects it made read back with kubectl: images, probes, security contexts,
state, secrets and the console's RBAC."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from kubesim import Simulator
from tests.chartsvc.fixtures_cluster import install_upload, namespace, releases, sim, upload_form
from tests.typing_support import Client

__all__ = ["namespace", "releases", "sim"]

CHART = Path(__file__).resolve().parents[2] / "deploy" / "helm" / "wharf"
SERVICES = {"chartsvc": 8080, "console": 8082, "results": 8081}
API = "/api/v1"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return Path(helm.package(CHART, destination=tmp_path_factory.mktemp("chart"))).read_bytes()


async def kubectl(sim: Simulator, cache: Path, *args: str) -> Any:
    command = ["kubectl", f"--kubeconfig={sim.kubeconfig_path}", f"--cache-dir={cache}", *args]
    done = await asyncio.to_thread(
        subprocess.run, [*command, "-o", "json"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_template_with_a_service_monitor(releases: Client, archive: bytes) -> None:
    request = {"releaseName": "w", "values": {"serviceMonitor": {"enabled": True}}}
    resp = await releases.post(f"{API}/charts/template/upload", data=upload_form(archive, request))
    assert resp.status == 200, await resp.text()
    docs = [d for d in yaml.safe_load_all(await resp.text()) if d]
    monitors = [d for d in docs if d["kind"] == "ServiceMonitor"]
    assert sorted(m["metadata"]["name"] for m in monitors) == [f"w-{s}" for s in SERVICES]
    for monitor in monitors:
        assert monitor["spec"]["endpoints"] == [
            {"port": "http", "path": "/actuator/prometheus", "interval": "30s"}
        ]
    plain = await releases.post(
        f"{API}/charts/template/upload", data=upload_form(archive, {"releaseName": "w"})
    )
    assert (
        "ServiceMonitor" not in await plain.text()
    )  # off by default: it needs the operator's CRDs


async def test_install_into_the_cluster(
    releases: Client, archive: bytes, namespace: str, sim: Simulator, tmp_path: Path
) -> None:
    values = {"secrets": {"chartsvcApiKey": "k-123"}, "image": {"tag": "1.2.3"}}
    resp = await install_upload(releases, archive, namespace, "wharf", values=values)
    assert resp.status == 201, await resp.text()
    get = ("get", "-n", namespace, "-l", "app.kubernetes.io/instance=wharf")
    deployments = (await kubectl(sim, tmp_path, *get, "deployments"))["items"]
    assert sorted(d["metadata"]["name"] for d in deployments) == [f"wharf-{s}" for s in SERVICES]
    for deployment in deployments:
        service = deployment["metadata"]["labels"]["app.kubernetes.io/component"]
        pod = deployment["spec"]["template"]["spec"]
        [container] = pod["containers"]
        assert container["image"] == "wharf:1.2.3"
        assert container["args"][:2] == ["serve", service]
        assert container["livenessProbe"]["httpGet"]["path"] == "/actuator/health/liveness"
        assert container["readinessProbe"]["httpGet"]["path"] == "/actuator/health/readiness"
        assert container["ports"] == [
            {"name": "http", "containerPort": SERVICES[service], "protocol": "TCP"}
        ]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert container["securityContext"] == {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        }
        assert pod["automountServiceAccountToken"] is (service == "console")
        claim = next(v for v in pod["volumes"] if v["name"] == "state")
        assert claim["persistentVolumeClaim"]["claimName"] == f"wharf-{service}"
    claims = (await kubectl(sim, tmp_path, *get, "persistentvolumeclaims"))["items"]
    assert len(claims) == 3
    [secret] = (await kubectl(sim, tmp_path, *get, "secrets"))["items"]
    assert set(secret["data"]) == {"CHARTSVC_SECURITY_API_KEY"}
    services = (await kubectl(sim, tmp_path, *get, "services"))["items"]
    assert {s["metadata"]["name"]: s["spec"]["ports"][0]["port"] for s in services} == {
        f"wharf-{s}": port for s, port in SERVICES.items()
    }

    role = await kubectl(sim, tmp_path, "get", "clusterrole", "wharf-console")
    verbs = {verb for rule in role["rules"] for verb in rule["verbs"]}
    assert verbs == {"get", "list", "watch"}  # read-only unless console.rbac.write
    binding = await kubectl(sim, tmp_path, "get", "clusterrolebinding", "wharf-console")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "wharf-console", "namespace": namespace}
    ]
    console = next(d for d in deployments if d["metadata"]["name"] == "wharf-console")
    assert console["spec"]["template"]["spec"]["serviceAccountName"] == "wharf-console"
