"""The ``demo`` scenario: a small shop that works, a namespace of things that do not, and extras.

* ``kube-system``: CoreDNS (with the ``kube-dns`` Service at 10.96.0.10), kube-proxy, metrics-server.
* ``shop``: nginx frontend, an API, a distroless payments service (no shell to exec into), Redis and Postgres StatefulSets with claims, Services, an
  Ingress, an HPA, two PodDisruptionBudgets, a finished migration Job, a CronJob every five
  minutes and a suspended one, RBAC, a NetworkPolicy, Widgets (a CRD with printer columns) and a
  Gateway with an HTTPRoute (Gateway-API-like CRDs).
* ``broken``: one workload per failure mode -- CrashLoopBackOff, ImagePullBackOff, OOMKilled,
  unschedulable Pending, failing readiness (and its Service without ready endpoints), a Job past
  its backoff limit, a Service selecting nothing, a PVC that cannot bind.
* ``monitoring``: a node-exporter DaemonSet, Grafana, and Prometheus (its ``prometheus`` Service
  answers the query API from the cluster's own usage).
"""

from __future__ import annotations

from kubesim.controllers.client import Client
from kubesim.controllers.events import Recorder
from kubesim.scenarios import crds
from kubesim.scenarios.broken import load_broken
from kubesim.scenarios.build import create
from kubesim.scenarios.shop import load_shop
from kubesim.scenarios.system import load_monitoring, load_system


def load(client: Client, recorder: Recorder) -> None:
    for name in ("shop", "broken", "monitoring"):
        create(
            client,
            "",
            {"kind": "Namespace", "metadata": {"name": name, "labels": {"wharf.dev/demo": "true"}}},
        )
    create(
        client,
        "",
        {
            "kind": "IngressClass",
            "apiVersion": "networking.k8s.io/v1",
            "metadata": {"name": "nginx"},
            "spec": {"controller": "k8s.io/ingress-nginx"},
        },
    )
    load_system(client)
    load_shop(client)
    load_broken(client)
    load_monitoring(client)
    crds.load(client)
