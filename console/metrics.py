"""Request metrics for ``/actuator/prometheus`` and ``/actuator/metrics``, collected by a middleware.

Per (method, route template, status): a counter and a latency histogram. The route is the matched
template (``/api/v1/clusters/{clusterId}``), never the raw path, so ids and names cannot blow up the
number of series; unmatched paths share one ``UNMATCHED`` route. Rendering follows the Prometheus
text exposition format 0.0.4; names follow Micrometer's so dashboards made for Spring services fit.
This module holds numbers only: no request bodies, headers or query strings.
"""

from __future__ import annotations

import asyncio
import bisect
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from common.errors import WharfError

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Seconds; Micrometer's default SLO-style buckets from 5 ms to 10 s.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
UNMATCHED = "UNMATCHED"
#: Status recorded for a request whose client left before the answer (nginx's 499).
CLIENT_GONE = 499
Labels = tuple[str, str, str]  # method, route, status


@attrs.define
class _Series:
    count: int = 0
    total: float = 0.0
    maximum: float = 0.0
    buckets: list[int] = attrs.field(factory=lambda: [0] * len(BUCKETS))

    def observe(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        self.maximum = max(self.maximum, seconds)
        index = bisect.bisect_left(BUCKETS, seconds)
        if index < len(BUCKETS):
            self.buckets[index] += 1


@attrs.frozen
class Gauge:
    name: str
    help: str
    read: Callable[[], float]


class RequestMetrics:
    def __init__(self) -> None:
        self.started = time.time()
        self._series: dict[Labels, _Series] = {}
        self.gauges: list[Gauge] = [
            Gauge(
                "process_start_time_seconds",
                "Start time of the process (Unix seconds).",
                lambda: self.started,
            ),
            Gauge(
                "process_uptime_seconds",
                "Seconds since the process started.",
                lambda: time.time() - self.started,
            ),
            Gauge("process_resident_memory_bytes", "Resident set size of the process.", _rss_bytes),
        ]

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, str(status))
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = _Series()
        series.observe(seconds)

    def add_gauge(self, name: str, help_text: str, read: Callable[[], float]) -> None:
        self.gauges.append(Gauge(name, help_text, read))

    def series(self) -> Iterator[tuple[Labels, _Series]]:
        yield from sorted(self._series.items())

    # -- Spring's /actuator/metrics view ----------------------------------------------------
    def names(self) -> list[str]:
        dotted = [g.name.replace("_", ".") for g in self.gauges]
        return sorted(["http.server.requests", *dotted])

    def describe(self, name: str) -> dict[str, Any] | None:
        if name == "http.server.requests":
            return self._describe_requests()
        for gauge in self.gauges:
            if gauge.name.replace("_", ".") == name:
                return {
                    "name": name,
                    "description": gauge.help,
                    "measurements": [{"statistic": "VALUE", "value": gauge.read()}],
                    "availableTags": [],
                }
        return None

    def _describe_requests(self) -> dict[str, Any]:
        rows = list(self.series())
        tags = {"method": set(), "uri": set(), "status": set()}  # type: dict[str, set[str]]
        for (method, route, status), _ in rows:
            tags["method"].add(method)
            tags["uri"].add(route)
            tags["status"].add(status)
        return {
            "name": "http.server.requests",
            "description": "HTTP requests served, by method, route and status.",
            "baseUnit": "seconds",
            "measurements": [
                {"statistic": "COUNT", "value": sum(s.count for _, s in rows)},
                {"statistic": "TOTAL_TIME", "value": sum(s.total for _, s in rows)},
                {"statistic": "MAX", "value": max((s.maximum for _, s in rows), default=0.0)},
            ],
            "availableTags": [{"tag": t, "values": sorted(v)} for t, v in tags.items()],
        }

    # -- Prometheus text format 0.0.4 -------------------------------------------------------
    def exposition(self) -> str:
        out: list[str] = []
        rows = list(self.series())
        out += [
            "# HELP http_server_requests_total HTTP requests served.",
            "# TYPE http_server_requests_total counter",
        ]
        for labels, s in rows:
            out.append(f"http_server_requests_total{_labels(labels)} {s.count}")
        out += [
            "# HELP http_server_requests_seconds Time to serve HTTP requests.",
            "# TYPE http_server_requests_seconds histogram",
        ]
        for labels, s in rows:
            cumulative = 0
            for bound, hits in zip(BUCKETS, s.buckets, strict=True):
                cumulative += hits
                le = _labels(labels, ("le", _number(bound)))
                out.append(f"http_server_requests_seconds_bucket{le} {cumulative}")
            out.append(
                f"http_server_requests_seconds_bucket{_labels(labels, ('le', '+Inf'))} {s.count}"
            )
            out.append(f"http_server_requests_seconds_sum{_labels(labels)} {_number(s.total)}")
            out.append(f"http_server_requests_seconds_count{_labels(labels)} {s.count}")
        for gauge in self.gauges:
            out += [
                f"# HELP {gauge.name} {gauge.help}",
                f"# TYPE {gauge.name} gauge",
                f"{gauge.name} {_number(gauge.read())}",
            ]
        return "\n".join(out) + "\n"


def _labels(labels: Labels, *extra: tuple[str, str]) -> str:
    pairs = [("method", labels[0]), ("route", labels[1]), ("status", labels[2]), *extra]
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return repr(float(value))


def _rss_bytes() -> float:
    try:
        with open("/proc/self/statm", "rb") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return float(pages * os.sysconf("SC_PAGE_SIZE"))


def route_of(request: web.Request) -> str:
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else UNMATCHED


def metrics_middleware(metrics: RequestMetrics) -> Middleware:
    @web.middleware
    async def measure(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except WharfError as exc:
            status = exc.status
            raise
        except web.HTTPException as exc:
            status = exc.status
            raise
        except asyncio.CancelledError:
            status = CLIENT_GONE
            raise
        finally:
            metrics.observe(
                request.method, route_of(request), status, time.perf_counter() - started
            )

    return measure
