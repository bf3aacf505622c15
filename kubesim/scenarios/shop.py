"""The demo's healthy application: the ``shop`` namespace."""

from __future__ import annotations

import base64

from kubesim.controllers.client import Client
from kubesim.scenarios.build import (
    container,
    create,
    cronjob,
    deployment,
    http_probe,
    job,
    pdb,
    resources,
    service,
    statefulset,
)


def load_shop(client: Client) -> None:
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
    report = cronjob(
        "nightly-report",
        "*/5 * * * *",
        "echo collecting orders; sleep 2; echo report written to /reports/latest.csv",
        successfulJobsHistoryLimit=3,
        failedJobsHistoryLimit=1,
    )
    warmup = cronjob("cache-warmup", "0 3 * * *", "echo warming cache", suspend=True)
    create(
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
        # distroless: healthy, but there is no shell to exec into
        deployment(
            "payments",
            [
                container(
                    "payments",
                    "gcr.io/distroless/static-debian12:nonroot",
                    9090,
                    resources=resources("50m", "32Mi"),
                    command=["/payments", "--listen=:9090"],
                )
            ],
            part="shop",
        ),
        service("payments", 9090),
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
        job(
            "db-migrate",
            "echo applying migrations; echo 0042_add_orders_index ok; echo 12 migrations applied",
        ),
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
