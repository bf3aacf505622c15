"""The ``demo`` scenario: a small shop that works, a namespace of things that do not, and extras.

* ``kube-system``: CoreDNS (with the ``kube-dns`` Service at 10.96.0.10), kube-proxy, metrics-server.
* ``shop``: nginx frontend, an API, Redis and Postgres StatefulSets with claims, Services, an
  Ingress, an HPA, two PodDisruptionBudgets, a finished migration Job, a CronJob every five
  minutes and a suspended one, RBAC, a NetworkPolicy, Widgets (a CRD with printer columns) and a
  Gateway with an HTTPRoute (Gateway-API-like CRDs).
* ``broken``: one workload per failure mode -- CrashLoopBackOff, ImagePullBackOff, OOMKilled,
  unschedulable Pending, failing readiness (and its Service without ready endpoints), a Job past
  its backoff limit, a Service selecting nothing, a PVC that cannot bind.
* ``monitoring``: a node-exporter DaemonSet and Grafana.
"""

from __future__ import annotations

import base64

from common.kubesim.controllers.client import Client
from common.kubesim.controllers.events import Recorder
from common.kubesim.scenarios import crds
from common.kubesim.scenarios.build import (
    container,
    daemonset,
    deployment,
    http_probe,
    job_spec,
    pdb,
    resources,
    service,
    statefulset,
)
from common.kubesim.store import Obj

GR = {
    "Namespace": ("", "namespaces"),
    "ConfigMap": ("", "configmaps"),
    "Secret": ("", "secrets"),
    "Service": ("", "services"),
    "ServiceAccount": ("", "serviceaccounts"),
    "PersistentVolumeClaim": ("", "persistentvolumeclaims"),
    "Deployment": ("apps", "deployments"),
    "StatefulSet": ("apps", "statefulsets"),
    "DaemonSet": ("apps", "daemonsets"),
    "Job": ("batch", "jobs"),
    "CronJob": ("batch", "cronjobs"),
    "Ingress": ("networking.k8s.io", "ingresses"),
    "IngressClass": ("networking.k8s.io", "ingressclasses"),
    "NetworkPolicy": ("networking.k8s.io", "networkpolicies"),
    "HorizontalPodAutoscaler": ("autoscaling", "horizontalpodautoscalers"),
    "PodDisruptionBudget": ("policy", "poddisruptionbudgets"),
    "Role": ("rbac.authorization.k8s.io", "roles"),
    "RoleBinding": ("rbac.authorization.k8s.io", "rolebindings"),
    "StorageClass": ("storage.k8s.io", "storageclasses"),
}


def _create(client: Client, namespace: str, *objs: Obj) -> list[Obj]:
    return [client.create(GR[o["kind"]], namespace, o) for o in objs]


def load(client: Client, recorder: Recorder) -> None:
    for name in ("shop", "broken", "monitoring"):
        _create(
            client,
            "",
            {"kind": "Namespace", "metadata": {"name": name, "labels": {"wharf.dev/demo": "true"}}},
        )
    _create(
        client,
        "",
        {
            "kind": "StorageClass",
            "apiVersion": "storage.k8s.io/v1",
            "metadata": {
                "name": "standard",
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            },
            "provisioner": "rancher.io/local-path",
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
        },
        {
            "kind": "IngressClass",
            "apiVersion": "networking.k8s.io/v1",
            "metadata": {"name": "nginx"},
            "spec": {"controller": "k8s.io/ingress-nginx"},
        },
    )
    _system(client)
    _shop(client)
    _broken(client, recorder)
    _monitoring(client)
    crds.load(client)


def _system(client: Client) -> None:
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
    _create(
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


def _shop(client: Client) -> None:
    secret = {
        "kind": "Secret",
        "metadata": {"name": "shop-db"},
        "type": "Opaque",
        "data": {
            k: base64.b64encode(v.encode()).decode()
            for k, v in {"username": "shop", "password": "demo-only-password"}.items()
        },
    }
    config = {
        "kind": "ConfigMap",
        "metadata": {"name": "shop-config"},
        "data": {
            "LOG_LEVEL": "info",
            "FEATURE_RECOMMENDATIONS": "true",
            "app.yaml": "server:\n  port: 8080\ncache:\n  host: redis\n  ttl: 300\n",
        },
    }
    password = {
        "name": "DB_PASSWORD",
        "valueFrom": {"secretKeyRef": {"name": "shop-db", "key": "password"}},
    }
    frontend = container(
        "nginx",
        "nginx:1.27.3",
        80,
        resources=resources("50m", "64Mi", "200m", "128Mi"),
        readinessProbe=http_probe("/"),
    )
    api = container(
        "api",
        "ghcr.io/wharf-demo/shop-api:1.4.2",
        8080,
        envFrom=[{"configMapRef": {"name": "shop-config"}}],
        env=[password],
        resources=resources("100m", "128Mi", "500m", "256Mi"),
        readinessProbe=http_probe("/healthz"),
        volumeMounts=[{"name": "config", "mountPath": "/etc/shop"}],
    )
    api_deploy = deployment(
        "api",
        [api],
        replicas=2,
        part="shop",
        serviceAccountName="shop-api",
        volumes=[{"name": "config", "configMap": {"name": "shop-config"}}],
    )
    redis = container(
        "redis",
        "redis:7.4.1",
        6379,
        port_name="redis",
        resources=resources("50m", "64Mi"),
        volumeMounts=[{"name": "data", "mountPath": "/data"}],
    )
    postgres = container(
        "postgres",
        "postgres:16.4",
        5432,
        port_name="postgres",
        env=[{"name": "POSTGRES_PASSWORD", **{k: v for k, v in password.items() if k != "name"}}],
        resources=resources("250m", "256Mi"),
        volumeMounts=[{"name": "data", "mountPath": "/var/lib/postgresql/data"}],
    )
    ingress = {
        "kind": "Ingress",
        "apiVersion": "networking.k8s.io/v1",
        "metadata": {"name": "shop"},
        "spec": {
            "ingressClassName": "nginx",
            "rules": [
                {
                    "host": "shop.demo.local",
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {
                                    "service": {"name": "frontend", "port": {"number": 80}}
                                },
                            },
                            {
                                "path": "/api",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": "api", "port": {"number": 8080}}},
                            },
                        ]
                    },
                }
            ],
        },
    }
    hpa = {
        "kind": "HorizontalPodAutoscaler",
        "apiVersion": "autoscaling/v2",
        "metadata": {"name": "api"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
            "minReplicas": 2,
            "maxReplicas": 6,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 70},
                    },
                }
            ],
        },
    }
    report = {
        "kind": "CronJob",
        "apiVersion": "batch/v1",
        "metadata": {"name": "nightly-report"},
        "spec": {
            "schedule": "*/5 * * * *",
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {
                "spec": job_spec(
                    "echo collecting orders; sleep 2; echo report written to /reports/latest.csv"
                )
            },
        },
    }
    warmup = {
        "kind": "CronJob",
        "apiVersion": "batch/v1",
        "metadata": {"name": "cache-warmup"},
        "spec": {
            "schedule": "0 3 * * *",
            "suspend": True,
            "jobTemplate": {"spec": job_spec("echo warming cache")},
        },
    }
    _create(
        client,
        "shop",
        secret,
        config,
        {"kind": "ServiceAccount", "metadata": {"name": "shop-api"}},
        {
            "kind": "Role",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "shop-reader"},
            "rules": [
                {
                    "apiGroups": [""],
                    "resources": ["configmaps", "pods"],
                    "verbs": ["get", "list", "watch"],
                }
            ],
        },
        {
            "kind": "RoleBinding",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "shop-api-reader"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "shop-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "shop-api", "namespace": "shop"}],
        },
        deployment("frontend", [frontend], replicas=3, part="shop"),
        service("frontend", 80),
        api_deploy,
        service("api", 8080),
        statefulset("redis", [redis], "1Gi", part="shop"),
        service("redis", 6379, "redis", headless=True),
        statefulset("postgres", [postgres], "5Gi", part="shop"),
        service("postgres", 5432, "postgres"),
        ingress,
        hpa,
        pdb("frontend", "frontend", minAvailable=2),
        pdb("api", "api", maxUnavailable=1),
        {
            "kind": "Job",
            "apiVersion": "batch/v1",
            "metadata": {"name": "db-migrate"},
            "spec": job_spec(
                "echo applying migrations; echo 0042_add_orders_index ok; echo 12 migrations applied"
            ),
        },
        report,
        warmup,
        {
            "kind": "NetworkPolicy",
            "apiVersion": "networking.k8s.io/v1",
            "metadata": {"name": "api-from-frontend"},
            "spec": {
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "api"}},
                "policyTypes": ["Ingress"],
                "ingress": [
                    {
                        "from": [
                            {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "frontend"}}}
                        ]
                    }
                ],
            },
        },
    )
    live_hpa = client.get(GR["HorizontalPodAutoscaler"], "shop", "api")
    if live_hpa is not None:
        client.update_status(
            GR["HorizontalPodAutoscaler"],
            live_hpa,
            {
                "currentReplicas": 2,
                "desiredReplicas": 2,
                "currentMetrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "current": {"averageUtilization": 23, "averageValue": "23m"},
                        },
                    }
                ],
                "conditions": [
                    {
                        "type": "AbleToScale",
                        "status": "True",
                        "lastTransitionTime": live_hpa["metadata"]["creationTimestamp"],
                        "reason": "ReadyForNewScale",
                        "message": "recommended size matches current size",
                    },
                    {
                        "type": "ScalingActive",
                        "status": "True",
                        "lastTransitionTime": live_hpa["metadata"]["creationTimestamp"],
                        "reason": "ValidMetricFound",
                        "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)",
                    },
                ],
            },
        )


def _broken(client: Client, recorder: Recorder) -> None:
    claim = {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "reports"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "fast-ssd",
            "resources": {"requests": {"storage": "10Gi"}},
        },
    }
    objs = _create(
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
        {
            "kind": "Job",
            "apiVersion": "batch/v1",
            "metadata": {"name": "failing-job"},
            "spec": job_spec(
                "echo connecting to warehouse; echo 'error: warehouse unreachable' >&2; exit 2",
                backoffLimit=2,
            ),
        },
        claim,
    )
    recorder.warning(
        objs[-1],
        "ProvisioningFailed",
        'storageclass.storage.k8s.io "fast-ssd" not found',
        component="persistentvolume-controller",
    )


def _monitoring(client: Client) -> None:
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
    _create(
        client,
        "monitoring",
        daemonset("node-exporter", [exporter], tolerations=[{"operator": "Exists"}]),
        deployment("grafana", [grafana]),
        service("grafana", 3000),
    )
