"""HTTP entry point for resource URLs: ``/api/v1/...`` and ``/apis/{group}/{version}/...``.

:func:`resource` resolves the URL to a resource type, checks the verb against discovery, and hands
the request to ``reads``, ``writes`` or a handler registered in
``State.subresource_handlers`` (how pod logs, exec and port-forward plug in). API semantics live below
the HTTP layer (``objects``, ``deletion``, ``subresources``); this module only routes.
"""

from __future__ import annotations

from aiohttp import web

from kubesim.api import crds, rbac
from kubesim.api.params import Target, flag, parse_target
from kubesim.http import reads, responses, writes
from kubesim.http.auth import user_of
from kubesim.http.state import STATE
from kubesim.machinery import warnings
from kubesim.machinery.status import KubeError, method_not_allowed

_VERB = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
# Pod subresources reached by a WebSocket or SPDY upgrade: authorized as create, even over GET.
_STREAMS = ("exec", "attach", "portforward")


async def resource(request: web.Request) -> web.StreamResponse:
    """One resource request; the warnings admission gives it (``warnings``) go with its answer."""
    with warnings.collecting() as said:
        try:
            return await _resource(request)
        finally:
            for message in said:
                responses.warn(request, message)


async def _resource(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE]
    group = request.match_info.get("group", "")
    version = request.match_info["version"]
    target = parse_target(state.objects.registry, group, version, request.match_info["tail"])
    deprecated = _deprecation(target)
    if deprecated:
        responses.warn(request, deprecated)
    method = request.method
    verb = _VERB.get(method, "")
    if method == "GET" and not target.name:
        verb = "watch" if flag(request.query, "watch") else "list"
    if method == "DELETE" and not target.name:
        verb = "deletecollection"
    sub = target.rt.subresource(target.subresource) if target.subresource else None
    allowed = sub.verbs if sub is not None else target.rt.verbs
    if sub is not None and sub.name == "eviction" and method == "POST":
        allowed = ("create",)
    if verb not in allowed or (target.all_namespaces and verb not in ("list", "watch")):
        raise method_not_allowed()
    if (verb == "create" and target.name and not target.subresource) or (
        verb in ("update", "patch", "delete") and not target.name
    ):
        raise method_not_allowed()
    rbac.check(state.objects.store, user_of(request), _attributes(request, verb, target))
    custom = state.subresource_handlers.get((target.rt.group, target.rt.plural, target.subresource))
    if custom is not None:  # before list/watch: metrics.k8s.io lists are served this way too
        return await custom(request, state, target)
    if verb == "watch":
        return await reads.watch_(request, state, target)
    if verb == "list":
        return reads.list_(request, state, target)
    if verb == "deletecollection":
        return await writes.delete_collection(request, state, target)
    served = ("status", "scale", "eviction", "binding", "finalize", "token")
    if target.subresource and target.subresource not in served:
        raise KubeError(
            501,
            f"the Wharf cluster simulator does not serve {target.rt.plural}/{target.subresource} "
            "yet",
            reason="NotImplemented",
        )
    handler = {
        "get": reads.get,
        "create": writes.create,
        "update": writes.update,
        "patch": writes.patch,
    }.get(verb)
    if handler is not None:
        return await handler(request, state, target)
    return await writes.delete(request, state, target)


#: Built-in APIs 1.32 serves but warns about (the type's ``APILifecycleDeprecated``).
_DEPRECATED = {("", "v1", "componentstatuses"): "v1 ComponentStatus is deprecated in v1.19+"}


def _deprecation(target: Target) -> str | None:
    rt = target.rt
    if rt.crd is not None:
        return crds.deprecation_warning(rt.crd, rt.version)
    return _DEPRECATED.get((rt.group, rt.version, rt.plural))


def _attributes(request: web.Request, verb: str, target: Target) -> rbac.Request:
    """What RBAC is asked, as kube-apiserver's RequestInfo resolves the URL."""
    name = target.name
    if not name and verb in ("list", "watch"):  # a list of one object names it
        for term in request.query.get("fieldSelector", "").split(","):
            field, sep, value = term.partition("=")
            if sep and field.strip() == "metadata.name":
                name = value.lstrip("=").strip()
    namespace = target.namespace
    if target.rt.group_resource == ("", "namespaces"):
        namespace = target.name
    if target.subresource in _STREAMS:
        verb = "create"
    rt = target.rt
    return rbac.Request(verb, namespace, rt.group, rt.plural, target.subresource, name)
