"""Actuator: health groups with the store's readiness, info, metrics, and Prometheus text."""

from __future__ import annotations

import math
import re
from typing import Any

from console.keys import CLUSTERS
from tests.console.conftest import ConsoleApp
from tests.console.support import ADMIN

# One sample line of the text exposition format 0.0.4: name, optional labels, value.
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')


def parse_prometheus(text: str) -> tuple[dict[str, str], list[tuple[str, dict[str, str], float]]]:
    """``({family: type}, [(sample name, labels, value)])``; fails on any malformed line."""
    types: dict[str, str] = {}
    samples = []
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("counter", "gauge", "histogram", "summary", "untyped"), line
            types[name] = kind
        elif line.startswith("#") or not line:
            continue
        else:
            match = _SAMPLE.match(line)
            assert match, f"malformed sample: {line!r}"
            labels = {}
            body = match.group(3) or ""
            position = 0
            while position < len(body):
                label = _LABEL.match(body, position)
                assert label, f"malformed labels: {line!r}"
                labels[label.group(1)] = label.group(2)
                position = label.end()
            family = re.sub(r"_(bucket|sum|count)$", "", match.group(1))
            assert family in types or match.group(1) in types, f"sample before TYPE: {line!r}"
            samples.append((match.group(1), labels, float(match.group(4))))
    return types, samples


def value(samples: list[Any], name: str, **labels: str) -> float:
    found = [
        v for n, ls, v in samples if n == name and all(ls.get(k) == w for k, w in labels.items())
    ]
    assert len(found) == 1, (name, labels, found)
    return float(found[0])


async def test_prometheus_counts_requests_by_route_and_status(console_app: ConsoleApp) -> None:
    client = await console_app()
    for _ in range(3):
        await client.get("/api/v1/clusters")
    await client.get("/api/v1/clusters/nope/config")
    await client.get("/api/v1/clusters/alpha/config")
    await client.post("/api/v1/clusters", json={})
    await client.get("/no/such/path")
    resp = await client.get("/actuator/prometheus")
    assert resp.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    types, samples = parse_prometheus(await resp.text())
    assert types["http_server_requests_total"] == "counter"
    assert types["http_server_requests_seconds"] == "histogram"
    assert types["process_resident_memory_bytes"] == "gauge"
    total = "http_server_requests_total"
    route = "/api/v1/clusters"
    assert value(samples, total, method="GET", route=route, status="200") == 3
    config = "/api/v1/clusters/{clusterId}/config"
    assert value(samples, total, method="GET", route=config, status="404") == 1
    assert value(samples, total, method="GET", route=config, status="200") == 1
    assert value(samples, total, method="POST", route=route, status="401") == 1
    assert value(samples, total, method="GET", route="UNMATCHED", status="404") == 1
    buckets = [
        (ls["le"], v)
        for n, ls, v in samples
        if n == "http_server_requests_seconds_bucket"
        and ls["route"] == route
        and ls["method"] == "GET"
    ]
    bounds = [math.inf if le == "+Inf" else float(le) for le, _ in buckets]
    assert bounds == sorted(bounds)
    assert bounds[-1] == math.inf
    counts = [v for _, v in buckets]
    assert counts == sorted(counts)
    assert counts[-1] == 3
    count = value(
        samples, "http_server_requests_seconds_count", method="GET", route=route, status="200"
    )
    assert count == 3
    assert (
        value(samples, "http_server_requests_seconds_sum", method="GET", route=route, status="200")
        > 0
    )
    assert value(samples, "console_clusters") == 2


async def test_metrics_in_springs_shape(console_app: ConsoleApp) -> None:
    client = await console_app()
    await client.get("/api/v1/clusters")
    names = (await (await client.get("/actuator/metrics")).json())["names"]
    assert "http.server.requests" in names
    assert "process.uptime.seconds" in names
    body = await (await client.get("/actuator/metrics/http.server.requests")).json()
    stats = {m["statistic"]: m["value"] for m in body["measurements"]}
    assert stats["COUNT"] >= 2
    tags = {t["tag"]: t["values"] for t in body["availableTags"]}
    assert "/api/v1/clusters" in tags["uri"]
    resp = await client.get("/actuator/metrics/no.such.metric")
    assert resp.status == 404


async def test_health_groups_include_the_cluster_store(console_app: ConsoleApp) -> None:
    client = await console_app()
    body = await (await client.get("/actuator/health")).json()
    assert body["status"] == "UP"
    assert body["components"]["liveness"] == {"status": "UP"}
    store = body["components"]["readiness"]["components"]["clusterStore"]
    assert store == {"status": "UP", "details": {"backend": "sqlite", "clusters": 2}}
    info = await (await client.get("/actuator/info")).json()
    assert info["app"]["service"] == "console"
    await client.app[CLUSTERS].store.close()
    resp = await client.get("/actuator/health/readiness")
    assert resp.status == 503
    assert (await client.get("/actuator/health/liveness")).status == 200


async def test_metrics_need_the_admin_in_closed_mode(console_app: ConsoleApp) -> None:
    client = await console_app("security.open-mode=false")
    assert (await client.get("/actuator/prometheus")).status == 401
    resp = await client.get("/actuator/prometheus", headers=ADMIN)
    assert resp.status == 200
    _, samples = parse_prometheus(await resp.text())
    assert (
        value(
            samples,
            "http_server_requests_total",
            method="GET",
            route="/actuator/prometheus",
            status="401",
        )
        == 1
    )
