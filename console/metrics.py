"""Spring's ``/actuator/metrics`` view of the service's Prometheus registry (``common.metrics``).

``GET /actuator/metrics`` lists dotted names (``http.server.requests``, ``process.uptime.seconds``);
``GET /actuator/metrics/{name}`` gives one metric's measurements and, for requests, the tags seen.
Read from the same registry ``/actuator/prometheus`` exposes, so the two views never disagree.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Metric

from common.metrics import Metrics

REQUESTS = "http.server.requests"
_REQUEST_FAMILIES = ("http_server_requests", "http_server_requests_seconds")


def _families(metrics: Metrics) -> dict[str, Metric]:
    return {family.name: family for family in metrics.registry.collect()}


def _dotted(family: Metric) -> str:
    suffix = "_total" if family.type == "counter" else ""
    return (family.name + suffix).replace("_", ".")


def names(metrics: Metrics) -> list[str]:
    families = _families(metrics)
    dotted = [_dotted(f) for n, f in families.items() if n not in _REQUEST_FAMILIES]
    return sorted([REQUESTS, *dotted])


def describe(metrics: Metrics, name: str) -> dict[str, Any] | None:
    families = _families(metrics)
    if name == REQUESTS:
        return _describe_requests(metrics, families["http_server_requests_seconds"])
    for key, family in families.items():
        if key in _REQUEST_FAMILIES or _dotted(family) != name:
            continue
        statistic = "COUNT" if family.type == "counter" else "VALUE"
        samples = [s for s in family.samples if not s.name.endswith("_created")]
        return {
            "name": name,
            "description": family.documentation,
            "measurements": [{"statistic": statistic, "value": sum(s.value for s in samples)}],
            "availableTags": _tags(s.labels for s in samples),
        }
    return None


def _describe_requests(metrics: Metrics, latency: Metric) -> dict[str, Any]:
    count = sum(s.value for s in latency.samples if s.name.endswith("_count"))
    total = sum(s.value for s in latency.samples if s.name.endswith("_sum"))
    rows = [s.labels for s in latency.samples if s.name.endswith("_count")]
    renamed = [{"uri" if k == "route" else k: v for k, v in labels.items()} for labels in rows]
    return {
        "name": REQUESTS,
        "description": "HTTP requests served, by method, route and status.",
        "baseUnit": "seconds",
        "measurements": [
            {"statistic": "COUNT", "value": count},
            {"statistic": "TOTAL_TIME", "value": total},
            {"statistic": "MAX", "value": metrics.max_seconds},
        ],
        "availableTags": _tags(renamed),
    }


def _tags(label_sets: Any) -> list[dict[str, Any]]:
    tags: dict[str, set[str]] = {}
    for labels in label_sets:
        for key, value in labels.items():
            tags.setdefault(key, set()).add(value)
    return [{"tag": tag, "values": sorted(values)} for tag, values in sorted(tags.items())]
