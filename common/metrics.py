"""Prometheus metrics of one Wharf service, kept with the maintained ``prometheus-client`` library.

Every app has its own registry (no process-wide one: tests build many apps in one process), filled
by the outermost middleware (``common.app``) with a request counter and a latency histogram per
(method, route template, status), plus the process collector and whatever gauges and counters the
service adds. The request series are plain numbers per label set, turned into metric families when
scraped (a ``prometheus-client`` collector): counting a request is a dict lookup, a bisect and three
additions, not the library's child lookup and a lock per value, which cost more than all the rest of
the metrics. The route is the
matched template (``/api/v1/clusters/{clusterId}``), never the raw path, so ids and names cannot
blow up the number of series; unmatched paths share one ``UNMATCHED`` route. Names follow
Micrometer's, so dashboards made for Spring services fit. ``GET /actuator/prometheus`` answers the
text format 0.0.4, or OpenMetrics when the scraper asks for it. This module holds numbers only: no
request bodies, headers or query strings.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable, Sequence

import prometheus_client
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

#: Seconds; Micrometer's default SLO-style buckets from 5 ms to 10 s.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
UNMATCHED = "UNMATCHED"
#: Status recorded for a request whose client left before the answer (nginx's 499).
CLIENT_GONE = 499
REQUEST_LABELS = ("method", "route", "status")
REQUESTS = ("http_server_requests", "HTTP requests served.")
LATENCY = ("http_server_requests_seconds", "Time to serve HTTP requests.")


class Metrics:
    """One service's registry, its request series, and the instruments the service adds."""

    def __init__(self, service: str) -> None:
        # The _created series double every counter and histogram and no dashboard reads them.
        prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
        self.service = service
        self.registry = CollectorRegistry(auto_describe=True)
        self.started = time.time()
        self._requests = _RequestSeries()
        #: Count a request: its method, route template, final status and seconds (one call: the
        #: series' own, which every request makes).
        self.observe: Callable[[str, str, int, float], None] = self._requests.observe
        self.registry.register(self._requests)
        ProcessCollector(registry=self.registry)
        self.gauge(
            "process_uptime_seconds",
            "Seconds since the service started.",
            lambda: time.time() - self.started,
        )

    @property
    def max_seconds(self) -> float:
        """The slowest request so far (Spring's MAX statistic)."""
        return self._requests.max_seconds

    def counter(self, name: str, help_text: str, labels: Sequence[str] = ()) -> Counter:
        """A counter in this registry; ``name`` without ``_total`` (the exposition adds it)."""
        return Counter(name, help_text, labels, registry=self.registry)

    def histogram(
        self,
        name: str,
        help_text: str,
        labels: Sequence[str] = (),
        *,
        buckets: Sequence[float] = BUCKETS,
    ) -> Histogram:
        return Histogram(name, help_text, labels, buckets=buckets, registry=self.registry)

    def tally(self, name: str, help_text: str, label: str, values: Iterable[str]) -> Tally:
        """A counter with one label, for a request path: counting is a dict addition, with no
        lock (the event loop is the only writer). Each of ``values`` is a series from the start."""
        tally = Tally(name, help_text, label, dict.fromkeys(values, 0.0))
        self.registry.register(tally)
        return tally

    def gauge(self, name: str, help_text: str, read: Callable[[], float]) -> Gauge:
        """A gauge read when scraped (``read`` must be cheap and must not block)."""
        gauge = Gauge(name, help_text, registry=self.registry)
        gauge.set_function(read)
        return gauge

    def gauge_by(
        self, name: str, help_text: str, label: str, read: Callable[[], Iterable[tuple[str, float]]]
    ) -> None:
        """A gauge with one label whose values are read when scraped (``(label value, number)``)."""
        self.registry.register(_OneLabel(GaugeMetricFamily, name, help_text, label, read))

    def exposition(self, accept: str = "") -> tuple[bytes, str]:
        """The scrape body and its content type, as the ``Accept`` header asks."""
        encoder, content_type = choose_encoder(accept)
        return encoder(self.registry), content_type


class _RequestSeries(Collector):
    """The request counter and latency histogram: per label set, the count, the sum of seconds
    and a count per bucket (not cumulative; the scrape adds them up)."""

    def __init__(self) -> None:
        #: By (method, route, status): the status a number until scraped.
        self.cells: dict[tuple[str, str, int], list[float]] = {}
        self.bounds = (*BUCKETS, float("inf"))
        self.les = [floatToGoString(bound) for bound in self.bounds]  # type: ignore[no-untyped-call]
        self.max_seconds = 0.0

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, status)
        cell = self.cells.get(key)
        if cell is None:
            cell = self.cells[key] = [0.0] * (2 + len(self.bounds))
        cell[0] += 1
        cell[1] += seconds
        cell[2 + bisect.bisect_left(self.bounds, seconds)] += 1  # le is inclusive
        if seconds > self.max_seconds:
            self.max_seconds = seconds

    def collect(self) -> Iterable[Metric]:
        requests = CounterMetricFamily(*REQUESTS, labels=REQUEST_LABELS)
        latency = HistogramMetricFamily(*LATENCY, labels=REQUEST_LABELS)
        for (method, route, status), cell in list(self.cells.items()):
            labels = (method, route, str(status))
            requests.add_metric(labels, cell[0])
            running, buckets = 0.0, []
            for le, count in zip(self.les, cell[2:], strict=True):
                running += count
                buckets.append((le, running))
            latency.add_metric(labels, buckets, cell[1])
        yield requests
        yield latency

    def describe(self) -> Iterable[Metric]:
        yield CounterMetricFamily(*REQUESTS, labels=REQUEST_LABELS)
        yield HistogramMetricFamily(*LATENCY, labels=REQUEST_LABELS)


class _OneLabel(Collector):
    """A family with one label (a counter or a gauge) whose values ``read`` gives when scraped."""

    def __init__(
        self,
        family: type[CounterMetricFamily | GaugeMetricFamily],
        name: str,
        help_text: str,
        label: str,
        read: Callable[[], Iterable[tuple[str, float]]],
    ) -> None:
        self.family, self.name, self.help_text, self.label = family, name, help_text, label
        self.read = read

    def collect(self) -> Iterable[Metric]:
        family = self.family(self.name, self.help_text, labels=[self.label])
        for value, number in self.read():
            family.add_metric([value], number)
        yield family

    def describe(self) -> Iterable[Metric]:
        yield self.family(self.name, self.help_text, labels=[self.label])


class Tally(_OneLabel):
    """Counts per label value (``Metrics.tally``), a counter family when scraped."""

    def __init__(self, name: str, help_text: str, label: str, counts: dict[str, float]) -> None:
        super().__init__(CounterMetricFamily, name, help_text, label, lambda: list(counts.items()))
        self.counts = counts

    def inc(self, value: str) -> None:
        self.counts[value] = self.counts.get(value, 0.0) + 1


METRICS = web.AppKey("wharf.metrics", Metrics)


def route_of(request: web.Request) -> str:
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else UNMATCHED


routes = web.RouteTableDef()


@routes.get("/actuator/prometheus")
async def prometheus(request: web.Request) -> web.Response:
    body, content_type = request.app[METRICS].exposition(request.headers.get("Accept", ""))
    return web.Response(body=body, headers={"Content-Type": content_type})
