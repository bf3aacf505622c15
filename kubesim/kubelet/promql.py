"""A Prometheus in the simulated cluster: the query API over the cluster's own container usage.

A container whose image is Prometheus (``prom/prometheus``, ``quay.io/prometheus/prometheus``)
answers ``/api/v1/query`` and ``/api/v1/query_range`` of the Prometheus HTTP API on its port, as if
it scraped the kubelets' cAdvisor: ``container_cpu_usage_seconds_total`` (a counter) and
``container_memory_working_set_bytes`` per running container (labels ``namespace``, ``pod``,
``container``, ``node``, ``image``, ``id``), and the same two for each node's root cgroup
(``id="/"``, no ``container``), all from the model ``metrics.k8s.io`` uses, so the two agree.

PromQL is the subset consoles send: an instant selector with ``=``, ``!=``, ``=~``, ``!~``
matchers; ``rate``/``irate``/``increase`` of a counter over a range; ``sum``, ``avg``, ``min``,
``max``, ``count`` with ``by``/``without``. Anything else is ``bad_data``, as Prometheus answers a
query it cannot parse. The usage of a 15-second window is constant, so a rate is the usage at the
evaluation time; a counter read bare is that usage times the container's uptime. HTTP-free.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

import attrs

from kubesim.api.objects import Objects
from kubesim.kubelet import Kubelet, metrics
from kubesim.machinery import quantity

Obj = dict[str, Any]
Labels = tuple[tuple[str, str], ...]
CPU, MEMORY = "container_cpu_usage_seconds_total", "container_memory_working_set_bytes"
COUNTERS = frozenset({CPU})
#: Prometheus refuses a range query with more points per series than this.
MAX_POINTS = 11000
MAX_QUERY = 4096
#: A node's uptime for its bare CPU counter (the simulated nodes do not reboot).
NODE_UPTIME = 86400.0
AGGREGATIONS = ("sum", "avg", "min", "max", "count")
FUNCTIONS = ("rate", "irate", "increase")
_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


class BadQuery(ValueError):
    """What Prometheus answers as ``bad_data`` (HTTP 400)."""


def serves_query_api(container: Mapping[str, Any]) -> bool:
    """Whether a container runs Prometheus itself (not an exporter, Alertmanager or operator)."""
    image = str(container.get("image") or "").lower()
    repository = image.split("@", 1)[0].rsplit(":", 1)[0] if "/" in image else image
    return repository.rsplit("/", 1)[-1].split(":", 1)[0] == "prometheus"


def duration(text: str) -> float:
    """``5m``, ``1h30m`` or plain seconds (``30``, ``0.5``) as seconds."""
    try:
        return float(text)
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise BadQuery(f'cannot parse "{text}" to a valid duration')
    return sum(int(n) * _UNITS[u] for n, u in parts)


# --- parsing ------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|(?P<op>=~|!~|!=|=|[(){}\[\],])'
    r"|(?P<word>[A-Za-z_:][A-Za-z0-9_:]*|\d+[a-z0-9]*))"
)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise BadQuery(f"1:{pos + 1}: parse error: unexpected character {text[pos]!r}")
        out.append(m.group(m.lastgroup or "word"))
        pos = m.end()
    return out


@attrs.frozen
class Selector:
    metric: str
    matchers: tuple[tuple[str, str, str], ...]  # (label, op, value)
    range_s: float | None = None

    def matches(self, labels: Mapping[str, str]) -> bool:
        for label, op, value in self.matchers:
            have = labels.get(label, "")
            hit = re.fullmatch(value, have) is not None if op in ("=~", "!~") else have == value
            if hit != (op in ("=", "=~")):
                return False
        return True


@attrs.frozen
class Call:
    name: str
    arg: Selector


@attrs.frozen
class Aggregate:
    op: str
    arg: Expr
    labels: tuple[str, ...] = ()
    without: bool = False


Expr = Selector | Call | Aggregate


class _Parser:
    def __init__(self, text: str) -> None:
        if len(text) > MAX_QUERY:
            raise BadQuery(f"query longer than {MAX_QUERY} characters")
        self.tokens, self.pos = _tokens(text), 0

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if not token or (expected is not None and token != expected):
            raise BadQuery(f"parse error: expected {expected or 'more'}, found {token or 'end'!r}")
        self.pos += 1
        return token

    def parse(self) -> Expr:
        expr = self.expr()
        if self.peek():
            raise BadQuery(f"parse error: unexpected {self.peek()!r}")
        return expr

    def expr(self) -> Expr:
        word = self.take()
        if word in AGGREGATIONS:
            return self.aggregate(word)
        if word in FUNCTIONS:
            self.take("(")
            arg = self.selector(self.take())
            self.take(")")
            if arg.range_s is None:
                raise BadQuery(f"expected type range vector in call to function {word!r}")
            return Call(word, arg)
        selector = self.selector(word)
        if selector.range_s is not None:
            raise BadQuery("a range vector cannot be the result of a query here")
        return selector

    def grouping(self) -> tuple[tuple[str, ...], bool] | None:
        if self.peek() not in ("by", "without"):
            return None
        without = self.take() == "without"
        self.take("(")
        labels: list[str] = []
        while self.peek() != ")":
            labels.append(self.take())
            if self.peek() == ",":
                self.take()
        self.take(")")
        return tuple(labels), without

    def aggregate(self, op: str) -> Aggregate:
        before = self.grouping()
        self.take("(")
        arg = self.expr()
        self.take(")")
        group = before or self.grouping() or ((), False)
        return Aggregate(op, arg, group[0], group[1])

    def selector(self, metric: str) -> Selector:
        if not re.fullmatch(r"[A-Za-z_:][A-Za-z0-9_:]*", metric):
            raise BadQuery(f"parse error: unexpected {metric!r}")
        matchers: list[tuple[str, str, str]] = []
        if self.peek() == "{":
            self.take()
            while self.peek() != "}":
                label, op, value = self.take(), self.take(), self.take()
                if op not in ("=", "!=", "=~", "!~") or value[:1] not in ("'", '"'):
                    raise BadQuery(f"parse error: unexpected {op!r} in label matching")
                text = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
                if op in ("=~", "!~"):
                    try:
                        re.compile(text)
                    except re.error as exc:
                        raise BadQuery(f"invalid regular expression {text!r}: {exc}") from None
                matchers.append((label, op, text))
                if self.peek() == ",":
                    self.take()
            self.take("}")
        range_s = None
        if self.peek() == "[":
            self.take()
            range_s = duration(self.take())
            self.take("]")
        return Selector(metric, tuple(matchers), range_s)


def parse(text: str) -> Expr:
    return _Parser(text).parse()


# --- evaluation ---------------------------------------------------------------------------------


@attrs.define
class Source:
    """The series the simulated Prometheus has scraped: the cluster's containers and nodes."""

    objs: Objects
    kubelet: Kubelet

    def containers(self) -> Iterator[tuple[dict[str, str], Obj, Obj, float]]:
        """(labels, pod, container spec, started) of every container that runs now."""
        for pod in self.objs.store.list(("", "pods")):
            meta, spec = pod["metadata"], pod.get("spec") or {}
            rt = self.kubelet.runtime(meta["namespace"], meta["name"])
            if rt is None:
                continue
            for c in spec.get("containers") or []:
                running = rt.container(c["name"])
                if running is None or running.phase != "running" or not running.runs:
                    continue
                run = running.runs[-1]
                labels = {
                    "namespace": meta["namespace"],
                    "pod": meta["name"],
                    "container": c["name"],
                    "node": str(spec.get("nodeName", "")),
                    "image": str(c.get("image", "")),
                    "id": f"/kubepods/pod{meta['uid']}/{run.container_id}",
                }
                yield labels, pod, c, run.started

    def vector(self, selector: Selector, t: float, *, rate: bool) -> list[tuple[Obj, float]]:
        if selector.metric not in (CPU, MEMORY):
            return []
        out: list[tuple[Obj, float]] = []
        for labels, pod, c, started in self.containers():
            if t < started or not selector.matches({"__name__": selector.metric, **labels}):
                continue
            meta = pod["metadata"]
            usage = metrics.container_usage(
                self.kubelet, meta["namespace"], meta["name"], c["name"], c, t
            )
            if usage is not None:
                out.append((labels, self._value(selector.metric, usage, t - started, rate=rate)))
        roots = (
            {"id": "/", "node": n["metadata"]["name"]} for n in self.objs.store.list(("", "nodes"))
        )
        nodes = [r for r in roots if selector.matches({"__name__": selector.metric, **r})]
        if nodes:  # the root cgroups: each node's whole usage, as metrics.k8s.io reports it
            per_node = {
                m["metadata"]["name"]: (
                    quantity.as_int(m["usage"]["cpu"][:-1]),
                    quantity.as_int(m["usage"]["memory"]),
                )
                for m in metrics.node_metrics(self.objs, self.kubelet, t)
            }
            for labels in nodes:
                found = per_node.get(labels["node"], (0, 0))
                out.append((labels, self._value(selector.metric, found, NODE_UPTIME, rate=rate)))
        return out

    @staticmethod
    def _value(metric: str, usage: tuple[int, int], uptime: float, *, rate: bool) -> float:
        if metric == MEMORY:
            return float(usage[1])
        cores = usage[0] / 1e9
        return cores if rate else cores * max(0.0, uptime)


def evaluate(expr: Expr, source: Source, t: float) -> list[tuple[Obj, float]]:
    """The instant vector of ``expr`` at ``t``: (labels, value) pairs."""
    if isinstance(expr, Selector):
        found = source.vector(expr, t, rate=False)
        return [({"__name__": expr.metric, **labels}, v) for labels, v in found]
    if isinstance(expr, Call):
        if expr.arg.metric not in COUNTERS and expr.arg.metric in (CPU, MEMORY):
            raise BadQuery(f"{expr.name}() of the gauge {expr.arg.metric} is not meaningful")
        found = source.vector(expr.arg, t, rate=True)
        factor = (expr.arg.range_s or 0.0) if expr.name == "increase" else 1.0
        return [(labels, value * factor) for labels, value in found]
    return _aggregate(expr, evaluate(expr.arg, source, t))


def _aggregate(agg: Aggregate, vector: list[tuple[Obj, float]]) -> list[tuple[Obj, float]]:
    groups: dict[Labels, list[float]] = {}
    for labels, value in vector:
        if agg.without:
            kept = {k: v for k, v in labels.items() if k not in agg.labels and k != "__name__"}
        else:
            kept = {k: labels[k] for k in agg.labels if labels.get(k)}
        groups.setdefault(tuple(sorted(kept.items())), []).append(value)
    fold: dict[str, Callable[[list[float]], float]] = {
        "sum": math.fsum,
        "avg": lambda vs: math.fsum(vs) / len(vs),
        "min": min,
        "max": max,
        "count": lambda vs: float(len(vs)),
    }
    return [(dict(key), fold[agg.op](values)) for key, values in sorted(groups.items())]


def _sample(value: float) -> str:
    return f"{value:.15g}" if math.isfinite(value) else ("NaN" if math.isnan(value) else "+Inf")


def instant(source: Source, query: str, t: float) -> Obj:
    """The ``data`` of ``/api/v1/query``."""
    result = [
        {"metric": labels, "value": [round(t, 3), _sample(v)]}
        for labels, v in evaluate(parse(query), source, t)
    ]
    return {"resultType": "vector", "result": result}


def ranged(source: Source, query: str, start: float, end: float, step: float) -> Obj:
    """The ``data`` of ``/api/v1/query_range``: one series per label set, oldest point first."""
    if end < start:
        raise BadQuery("end timestamp must not be before start time")
    if step <= 0:
        raise BadQuery(
            "zero or negative query resolution step widths are not accepted. Try a positive integer"
        )
    if (end - start) / step > MAX_POINTS:
        raise BadQuery(
            "exceeded maximum resolution of 11,000 points per timeseries. "
            "Try decreasing the query resolution (?step=XX)"
        )
    expr = parse(query)
    series: dict[Labels, list[list[Any]]] = {}
    t = start
    while t <= end + 1e-9:
        for labels, v in evaluate(expr, source, t):
            series.setdefault(tuple(sorted(labels.items())), []).append([round(t, 3), _sample(v)])
        t += step
    result = [{"metric": dict(key), "values": values} for key, values in sorted(series.items())]
    return {"resultType": "matrix", "result": result}


def _time(value: str | None, default: float, name: str) -> float:
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise BadQuery(
            f'invalid parameter "{name}": cannot parse "{value}" to a valid timestamp'
        ) from None


def answer(source: Source, path: str, params: Mapping[str, str], now: float) -> tuple[int, Obj]:
    """The status and JSON body of a request to the query API (GET query or POST form params)."""
    try:
        query = params.get("query")
        if path in ("/api/v1/query", "/api/v1/query_range") and not query:
            raise BadQuery(
                'invalid parameter "query": unknown position: parse error: no expression found in input'
            )
        if path == "/api/v1/query":
            data = instant(source, str(query), _time(params.get("time"), now, "time"))
        elif path == "/api/v1/query_range":
            for needed in ("start", "end", "step"):
                if not params.get(needed):
                    raise BadQuery(
                        f'invalid parameter "{needed}": cannot parse "" to a valid timestamp'
                    )
            start = _time(params["start"], now, "start")
            end = _time(params["end"], now, "end")
            data = ranged(source, str(query), start, end, duration(params["step"]))
        elif path == "/api/v1/status/buildinfo":
            data = {
                "version": "2.54.1",
                "revision": "kubesim",
                "branch": "HEAD",
                "goVersion": "go1.22.6",
            }
        else:
            return 404, {"status": "error", "errorType": "not_found", "error": "404 page not found"}
    except BadQuery as exc:
        return 400, {"status": "error", "errorType": "bad_data", "error": str(exc)}
    return 200, {"status": "success", "data": data}
