"""The simulated Prometheus's PromQL subset: what parses, what is refused as bad_data."""

from __future__ import annotations

import pytest

from kubesim.kubelet import promql


def test_selectors_functions_and_aggregations_parse() -> None:
    expr = promql.parse(
        'sum by (namespace) (rate(container_cpu_usage_seconds_total{pod=~"web-.*",container!=""}[5m]))'
    )
    assert isinstance(expr, promql.Aggregate)
    assert (expr.op, expr.labels, expr.without) == ("sum", ("namespace",), False)
    assert isinstance(expr.arg, promql.Call)
    assert expr.arg.arg.range_s == 300
    assert expr.arg.arg.matches({"pod": "web-1", "container": "app"})
    assert not expr.arg.arg.matches({"pod": "web-1", "container": ""})
    assert not expr.arg.arg.matches({"pod": "api-1", "container": "app"})
    after = promql.parse("max(container_memory_working_set_bytes) without (id, image)")
    assert isinstance(after, promql.Aggregate)
    assert (after.labels, after.without) == (("id", "image"), True)


@pytest.mark.parametrize(
    "query",
    [
        "sum(",
        "rate(container_cpu_usage_seconds_total)",  # a function of an instant vector
        "container_memory_working_set_bytes[5m]",  # a range vector as the result
        'up{job~"x"}',
        'up{job=~"("}',
        "up{job=x}",
        "up $",
    ],
)
def test_what_prometheus_would_refuse_is_bad_data(query: str) -> None:
    with pytest.raises(promql.BadQuery):
        promql.parse(query)


def test_durations_and_the_query_image() -> None:
    assert promql.duration("1h30m") == 5400
    assert promql.duration("15") == 15
    with pytest.raises(promql.BadQuery):
        promql.duration("5 minutes")
    assert promql.serves_query_api({"image": "quay.io/prometheus/prometheus:v2.54.1"})
    assert promql.serves_query_api({"image": "prom/prometheus"})
    assert not promql.serves_query_api({"image": "prom/node-exporter:v1.8.2"})
    assert not promql.serves_query_api({"image": "quay.io/prometheus/alertmanager"})
