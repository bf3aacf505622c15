"""The demo's infrastructure: CoreDNS, kube-proxy and metrics-server in ``kube-system``, and a
``monitoring`` namespace with node-exporter and Grafana."""

from __future__ import annotations

from kubesim.controllers.client import Client
from kubesim.scenarios.build import (
    container,
    create,
    daemonset,
    deployment,
    http_probe,
    resources,
    service,
)


def load_system(client: Client) -> None:
    dns = service("kube-dns", 53, 53, selector="coredns", clusterIP="10.96.0.10")
    dns["metadata"]["labels"] = {"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"}
    dns["spec"]["ports"] = [
        {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
        {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
        {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
    ]
    coredns = container(
        "coredns",
        "registry.k8s.io/coredns/coredns:v1.11.3",
        53,
        port_name="dns",
        resources=resources("100m", "70Mi", limit_memory="170Mi"),
        readinessProbe=http_probe("/ready", 8181),
        args=["-conf", "/etc/coredns/Corefile"],
    )
    tolerate_all = [{"operator": "Exists"}]
    create(
        client,
        "kube-system",
        dns,
        deployment("coredns", [coredns], replicas=2),
        daemonset(
            "kube-proxy",
            [
                container(
                    "kube-proxy",
                    "registry.k8s.io/kube-proxy:v1.32.4",
                    command=[
                        "/usr/local/bin/kube-proxy",
                        "--config=/var/lib/kube-proxy/config.conf",
                    ],
                )
            ],
            tolerations=tolerate_all,
        ),
        deployment(
            "metrics-server",
            [
                container(
                    "metrics-server",
                    "registry.k8s.io/metrics-server/metrics-server:v0.7.2",
                    10250,
                    port_name="https",
                    resources=resources("100m", "200Mi"),
                )
            ],
        ),
        service("metrics-server", 443, "https"),
    )


def load_monitoring(client: Client) -> None:
    exporter = container(
        "node-exporter",
        "prom/node-exporter:v1.8.2",
        9100,
        port_name="metrics",
        resources=resources("10m", "24Mi"),
    )
    grafana = container(
        "grafana",
        "grafana/grafana:11.3.0",
        3000,
        resources=resources("100m", "128Mi"),
        readinessProbe=http_probe("/api/health"),
    )
    # Answers the Prometheus query API from the cluster's own usage (kubelet.promql).
    prometheus = container(
        "prometheus",
        "quay.io/prometheus/prometheus:v2.54.1",
        9090,
        port_name="web",
        resources=resources("200m", "400Mi"),
        readinessProbe=http_probe("/-/ready", "web"),
    )
    create(
        client,
        "monitoring",
        daemonset("node-exporter", [exporter], tolerations=[{"operator": "Exists"}]),
        deployment("grafana", [grafana]),
        service("grafana", 3000),
        deployment("prometheus", [prometheus]),
        service("prometheus", 9090, "web"),
    )
