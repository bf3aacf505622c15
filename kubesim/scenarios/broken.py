"""The demo's ``broken`` namespace: one workload per failure mode a console must explain."""

from __future__ import annotations

from kubesim.controllers.client import Client
from kubesim.scenarios.build import (
    container,
    create,
    deployment,
    http_probe,
    job,
    resources,
    service,
)


def load_broken(client: Client) -> None:
    claim = {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "reports"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "fast-ssd",
            "resources": {"requests": {"storage": "10Gi"}},
        },
    }
    create(
        client,
        "broken",
        deployment("crashloop", [container("app", "ghcr.io/wharf-demo/crashloop:1.0", 8080)]),
        deployment(
            "bad-image", [container("app", "ghcr.io/wharf-demo/does-not-exist:0.0.1", 8080)]
        ),
        deployment(
            "memory-hog",
            [
                container(
                    "app",
                    "ghcr.io/wharf-demo/oom-eater:2.1",
                    8080,
                    resources=resources("50m", "32Mi", limit_memory="64Mi"),
                )
            ],
        ),
        deployment(
            "too-big", [container("app", "nginx:1.27.3", 80, resources=resources("16", "64Gi"))]
        ),
        deployment(
            "not-ready", [container("app", "nginx:1.27.3", 80, readinessProbe=http_probe("/fail"))]
        ),
        service("not-ready", 80),
        service("orphan", 80, selector="ghost"),
        job(
            "failing-job",
            "echo connecting to warehouse; echo 'error: warehouse unreachable' >&2; exit 2",
            backoffLimit=2,
        ),
        claim,
    )
