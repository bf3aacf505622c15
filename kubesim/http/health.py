"""``/healthz``, ``/livez``, ``/readyz`` and ``/metrics`` as kube-apiserver serves them.

The health endpoints answer ``ok``, or with ``?verbose`` one ``[+]<check> ok`` line per check
kube-apiserver 1.32 installs and ``<endpoint> check passed`` (apiserver pkg/server/healthz
``handleRootHealth``); ``?exclude=<check>`` marks a check ``excluded: ok``, and each check answers
on its own sub-path. Every check passes: the simulator has nothing that can fail them.

``/metrics`` (which needs authorization, as on a real server) is Prometheus text with
``apiserver_request_total`` counted for every resource request by verb, group, version,
resource, subresource, scope and response code (endpoints/metrics ``MonitorRequest``), and
``apiserver_storage_objects`` per resource. Non-resource requests are not counted.
"""

from __future__ import annotations

import collections
from collections.abc import Awaitable, Callable

from aiohttp import web

from kubesim.api.params import flag, split_namespace
from kubesim.http.state import STATE
from kubesim.machinery.status import KubeError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
routes = web.RouteTableDef()
# (code, dry_run, group, resource, scope, subresource, verb, version) -> requests answered.
Labels = tuple[str, str, str, str, str, str, str, str]
COUNTS = web.AppKey("kubesim.request_counts", collections.Counter[Labels])
_LABELS = ("code", "dry_run", "group", "resource", "scope", "subresource", "verb", "version")
_CONNECT = ("exec", "attach", "portforward", "proxy")

# The checks of kube-apiserver 1.32 (kind), in the order it lists them; readyz adds its own.
_CHECKS = (
    "ping",
    "log",
    "etcd",
    "poststarthook/start-apiserver-admission-initializer",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/priority-and-fairness-config-consumer",
    "poststarthook/priority-and-fairness-filter",
    "poststarthook/storage-object-count-tracker-hook",
    "poststarthook/start-apiextensions-informers",
    "poststarthook/start-apiextensions-controllers",
    "poststarthook/crd-informer-synced",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/start-cluster-authentication-info-controller",
    "poststarthook/start-kube-apiserver-identity-lease-controller",
    "poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
    "poststarthook/start-legacy-token-tracking-controller",
    "poststarthook/start-service-ip-repair-controllers",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/priority-and-fairness-config-producer",
    "poststarthook/bootstrap-controller",
    "poststarthook/aggregator-reload-proxy-client-cert",
    "poststarthook/start-kube-aggregator-informers",
    "poststarthook/apiservice-status-local-available-controller",
    "poststarthook/apiservice-status-remote-available-controller",
    "poststarthook/apiservice-registration-controller",
    "poststarthook/apiservice-discovery-controller",
    "poststarthook/kube-apiserver-autoregistration",
    "autoregister-completion",
    "poststarthook/apiservice-openapi-controller",
    "poststarthook/apiservice-openapiv3-controller",
)
CHECKS = {
    "healthz": _CHECKS,
    "livez": _CHECKS,
    "readyz": (*_CHECKS[:3], "etcd-readiness", "informer-sync", *_CHECKS[3:], "shutdown"),
}
_TEXT = {"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}


def _health(name: str) -> Handler:
    async def root(request: web.Request) -> web.Response:
        if "verbose" not in request.query:
            return web.Response(text="ok", headers=_TEXT)
        excluded = {c for v in request.query.getall("exclude", []) for c in v.split(",")}
        lines = [f"[+]{c} excluded: ok" if c in excluded else f"[+]{c} ok" for c in CHECKS[name]]
        unknown = sorted(excluded - set(CHECKS[name]))
        if unknown:
            lines.append(
                "warn: some health checks cannot be excluded: no matches for "
                + ",".join(f'"{c}"' for c in unknown)
            )
        return web.Response(text="\n".join(lines) + f"\n{name} check passed\n", headers=_TEXT)

    return root


def _one_check(name: str) -> Handler:
    async def check(request: web.Request) -> web.Response:
        if request.match_info["check"] not in CHECKS[name]:
            raise KubeError(404, "the server could not find the requested resource", details={})
        return web.Response(text="ok", headers=_TEXT)

    return check


for _name in CHECKS:
    routes.get(f"/{_name}")(_health(_name))
    routes.get("/" + _name + "/{check:.+}")(_one_check(_name))


@routes.get("/metrics")
async def metrics(request: web.Request) -> web.Response:
    counts = request.app[COUNTS]
    lines = [
        "# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for "
        "each verb, dry run value, group, version, resource, scope, component, and HTTP "
        "response code.",
        "# TYPE apiserver_request_total counter",
    ]
    for labels, n in sorted(counts.items()):
        pairs = dict(zip(_LABELS, labels, strict=True))
        pairs["component"] = "apiserver"
        text = ",".join(f'{k}="{v}"' for k, v in sorted(pairs.items()))
        lines.append(f"apiserver_request_total{{{text}}} {n}")
    lines += [
        "# HELP apiserver_storage_objects [STABLE] Number of stored objects at the time of last "
        "check split by kind. In case of a fetching error, the value will be -1.",
        "# TYPE apiserver_storage_objects gauge",
    ]
    stored = collections.Counter(
        f"{plural}.{group}" if group else plural
        for (group, plural), _ in request.app[STATE].objects.store.all_objects()
    )
    lines += [f'apiserver_storage_objects{{resource="{r}"}} {n}' for r, n in sorted(stored.items())]
    return web.Response(
        text="\n".join(lines) + "\n",
        headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
    )


@web.middleware
async def count_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Outermost: the code counted is the one the client got (a Status error included)."""
    response = await handler(request)
    labels = _labels(request, response.status)
    if labels is not None:
        request.app[COUNTS][labels] += 1
    return response


def _labels(request: web.Request, code: int) -> Labels | None:
    parts = [p for p in request.path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) > 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) > 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace, rest = split_namespace(rest)
    namespaced = bool(namespace)
    resource, name = rest[0], rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    scope = "resource" if name else "namespace" if namespaced else "cluster"
    dry_run = ",".join(sorted(request.query.getall("dryRun", [])))
    return (
        str(code),
        dry_run,
        group,
        resource,
        scope,
        subresource,
        _verb(request, name, subresource),
        version,
    )


def _watching(request: web.Request) -> bool:
    """``watch`` read as the handler read it (a value it refused made no watch)."""
    try:
        return flag(request.query, "watch")
    except KubeError:
        return False


def _verb(request: web.Request, name: str, subresource: str) -> str:
    """The verb as the metrics report it (``cleanVerb``)."""
    method = request.method
    if subresource in _CONNECT:
        return "CONNECT"
    if method == "GET" and not name:
        return "WATCH" if _watching(request) else "LIST"
    if method == "DELETE" and not name:
        return "DELETECOLLECTION"
    if method == "PATCH" and request.content_type == "application/apply-patch+yaml":
        return "APPLY"
    return method
