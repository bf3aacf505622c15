"""HTTP handlers for resource URLs: ``/api/v1/...`` and ``/apis/{group}/{version}/...``.

Each handler parses the request, calls ``objects``/``deletion``/``subresources`` and encodes the
answer in the form the client asked for (JSON, Table, PartialObjectMetadata). API semantics live
below this layer; this module only speaks HTTP.
"""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from aiohttp import web

from common.kubesim import bodies, deletion, fields, subresources, tables, validation, watch
from common.kubesim.meta import WriteOptions
from common.kubesim.params import (
    Target,
    dry_run,
    field_manager,
    field_validation,
    flag,
    integer,
    parse_target,
    response_form,
)
from common.kubesim.state import STATE, State
from common.kubesim.status import KubeError, bad_request, expired, method_not_allowed, not_found
from common.kubesim.store import Obj

_VERB = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def json_response(
    body: Any, *, status: int = 200, warnings: list[str] | None = None
) -> web.Response:
    headers = {"Warning": validation.warning_header(warnings)} if warnings else None
    return web.Response(
        body=json.dumps(body, separators=(",", ":")).encode(),
        status=status,
        content_type="application/json",
        headers=headers,
    )


async def resource(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE]
    group = request.match_info.get("group", "")
    version = request.match_info["version"]
    target = parse_target(state.objects.registry, group, version, request.match_info["tail"])
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
    if verb == "watch":
        return await _watch(request, state, target)
    if verb == "list":
        return _list(request, state, target)
    if verb == "deletecollection":
        return await _delete_collection(request, state, target)
    if target.subresource and target.subresource not in ("status", "scale", "eviction"):
        raise KubeError(
            501,
            f"the Wharf cluster simulator does not serve {target.rt.plural}/{target.subresource} "
            "yet",
            reason="NotImplemented",
        )
    handler = {"get": _get, "create": _create, "update": _update, "patch": _patch}.get(verb)
    if handler is not None:
        return await handler(request, state, target)
    return await _delete(request, state, target)


def _encode_one(request: web.Request, target: Target, obj: Obj) -> Any:
    form = response_form(request.headers.get("Accept", ""))
    if form == "Table":
        include = request.query.get("includeObject", "Metadata")
        return tables.table(
            target.rt,
            [obj],
            include=include,
            list_meta={"resourceVersion": obj["metadata"].get("resourceVersion")},
        )
    if form == "PartialObjectMetadata":
        return tables.partial_metadata(obj)
    return obj


async def _get(request: web.Request, state: State, target: Target) -> web.Response:
    obj = state.objects.get(target.rt, target.namespace, target.name)
    if target.subresource == "scale":
        return json_response(subresources.scale_of(target.rt, obj))
    return json_response(_encode_one(request, target, obj))


# -- list and watch -----------------------------------------------------------------------------
def _continue_token(rv: int, key: tuple[str, str]) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{key[0]}/{key[1]}\x00"})
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _decode_continue(token: str, compacted: int) -> tuple[int, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        rv, start = int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError):
        raise bad_request("continue key is not valid: illegal base64 data") from None
    if rv < compacted:
        raise expired(
            "The provided continue parameter is too old to display a consistent list result. "
            "You can start a new list without the continue parameter, or use the continue "
            "token in this response to retrieve the remainder of the results. Continuing with "
            "the provided token results in an inconsistent list - objects that were created, "
            "modified, or deleted between the time the first chunk was returned and now may "
            "show up in the list."
        )
    return rv, start


def _check_list_rv(query: Any, current: int) -> None:
    rv, match = query.get("resourceVersion", ""), query.get("resourceVersionMatch", "")
    if match and match not in ("Exact", "NotOlderThan"):
        raise bad_request(f"unsupported resourceVersionMatch: {match}")
    if match and not rv:
        raise KubeError(422, "resourceVersionMatch is forbidden unless resourceVersion is provided")
    if rv and not rv.isdigit():
        raise KubeError(400, f"invalid resource version: {rv!r}")
    if rv and rv != "0" and int(rv) > current:
        raise KubeError(
            504,
            f"Too large resource version: {rv}, current: {current}",
            reason="Timeout",
            details={
                "causes": [
                    {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
                ],
                "retryAfterSeconds": 1,
            },
        )
    if match == "Exact" and int(rv) != current:
        raise expired(f"too old resource version: {rv} ({current})")


def _list(request: web.Request, state: State, target: Target) -> web.Response:
    q = request.query
    store = state.objects.store
    _check_list_rv(q, store.rv)
    items = state.objects.list(
        target.rt,
        target.namespace or None,
        label_selector=q.get("labelSelector"),
        field_selector=q.get("fieldSelector"),
    )
    list_rv = store.rv
    if q.get("continue"):
        list_rv, start = _decode_continue(q["continue"], store.compacted_rv)
        items = [
            o
            for o in items
            if f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}\x00" > start
        ]
    meta: Obj = {"resourceVersion": str(list_rv)}
    limit = integer(q, "limit")
    if limit and limit > 0 and len(items) > limit:
        rest = len(items) - limit
        items = items[:limit]
        last = items[-1]["metadata"]
        meta["continue"] = _continue_token(list_rv, (last.get("namespace", ""), last["name"]))
        if not q.get("labelSelector") and not q.get("fieldSelector"):
            meta["remainingItemCount"] = rest
    form = response_form(request.headers.get("Accept", ""))
    if form == "Table":
        include = q.get("includeObject", "Metadata")
        return json_response(tables.table(target.rt, items, include=include, list_meta=meta))
    if form == "PartialObjectMetadata":
        return json_response(
            {
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
                "items": [tables.partial_metadata(o) for o in items],
            }
        )
    return json_response(
        {
            "kind": target.rt.list_kind,
            "apiVersion": target.rt.api_version,
            "metadata": meta,
            "items": items,
        }
    )


async def _watch(request: web.Request, state: State, target: Target) -> web.StreamResponse:
    form = response_form(request.headers.get("Accept", ""))
    include = request.query.get("includeObject", "Metadata")
    first = [True]

    def encode(obj: Obj) -> Obj:
        if form == "Table":
            headers, first[0] = first[0], False
            return tables.table(
                target.rt,
                [obj],
                include=include,
                headers=headers,
                list_meta={"resourceVersion": obj["metadata"]["resourceVersion"]},
            )
        if form == "PartialObjectMetadata":
            return tables.partial_metadata(obj)
        return obj

    return await watch.serve(
        request, state.objects, target, encode, bookmark_interval=state.bookmark_interval
    )


# -- writes -------------------------------------------------------------------------------------
def _write_options(request: web.Request, target: Target) -> WriteOptions:
    return WriteOptions(
        manager=field_manager(request.query, request.headers.get("User-Agent", "")),
        dry_run=dry_run(request.query, request.query.getall("dryRun", [])),
        subresource=target.subresource,
    )


async def _body(request: web.Request, accepted: tuple[str, ...]) -> Any:
    raw = await request.read()
    return bodies.decode(raw, request.headers.get("Content-Type", ""), accepted=accepted)


async def _create(request: web.Request, state: State, target: Target) -> web.Response:
    if target.subresource == "eviction":
        body = await _body(request, bodies.WRITE_TYPES)
        status = subresources.evict(state.objects, target, body, _write_options(request, target))
        return json_response(status, status=201)
    mode = field_validation(request.query)
    opts = _write_options(request, target)
    body = await _body(request, bodies.WRITE_TYPES)
    warnings = validation.check(target.rt, body, mode)
    obj = state.objects.create(target.rt, target.namespace, body, opts)
    return json_response(obj, status=201, warnings=warnings)


async def _update(request: web.Request, state: State, target: Target) -> web.Response:
    mode = field_validation(request.query)
    opts = _write_options(request, target)
    body = await _body(request, bodies.WRITE_TYPES)
    warnings = validation.check(target.rt, body, mode, subresource=target.subresource)
    if target.subresource == "scale":
        obj = subresources.update_scale(state.objects, target, body, opts)
        return json_response(obj, warnings=warnings)
    obj = state.objects.update(target.rt, target.namespace, target.name, body, opts)
    return json_response(obj, warnings=warnings)


async def _patch(request: web.Request, state: State, target: Target) -> web.Response:
    media = bodies.media_type(request.headers.get("Content-Type", ""))
    if media not in bodies.PATCH_TYPES:
        raise bodies.unsupported_media(media, bodies.PATCH_TYPES)
    mode = field_validation(request.query)
    opts = _write_options(request, target)
    body = await _body(request, bodies.PATCH_TYPES)
    objs, rt = state.objects, target.rt
    live = objs.store.get(rt.group_resource, target.namespace, target.name)
    if media == "application/apply-patch+yaml":
        return _apply(request, state, target, body, mode, opts, live)
    if "force" in request.query:
        raise KubeError(422, "force: Forbidden: may not be specified for non-apply patch")
    if live is None:
        raise not_found(rt.group, rt.plural, target.name)
    if target.subresource == "scale":
        current = subresources.scale_of(rt, live)
        patched = fields.patch(subresources.SCALE_TYPE, current, body, media)
        warnings = validation.check(rt, patched, mode, subresource="scale")
        return json_response(
            subresources.update_scale(objs, target, patched, opts), warnings=warnings
        )
    patched = fields.patch(rt, copy.deepcopy(objs.present(rt, live)), body, media)
    warnings = validation.check(rt, patched, mode, subresource=target.subresource)
    obj = objs.update(rt, target.namespace, target.name, patched, opts)
    return json_response(obj, warnings=warnings)


def _apply(
    request: web.Request,
    state: State,
    target: Target,
    body: Any,
    mode: str,
    opts: WriteOptions,
    live: Obj | None,
) -> web.Response:
    objs, rt = state.objects, target.rt
    if not request.query.get("fieldManager"):
        raise bad_request("PATCH, application/apply-patch+yaml requires fieldManager to be set")
    if not isinstance(body, dict):
        raise bad_request("error decoding YAML: the apply body must be an object")
    if target.subresource == "scale":
        raise KubeError(
            501,
            "the Wharf cluster simulator does not serve apply on scale",
            reason="NotImplemented",
        )
    warnings = validation.check(rt, body, mode, subresource=target.subresource, apply=True)
    meta: Obj = body["metadata"] if isinstance(body.get("metadata"), dict) else {}
    if meta.get("name") and meta["name"] != target.name:
        raise bad_request(
            f"the name of the object ({meta['name']}) does not match the name on "
            f"the URL ({target.name})"
        )
    force = flag(request.query, "force")
    if live is None:
        if target.subresource:
            raise not_found(rt.group, rt.plural, target.name)
        applied = fields.server_side_apply(
            rt, None, body, manager=opts.manager, force=force, subresource=target.subresource
        )
        applied.setdefault("metadata", {})["name"] = target.name
        obj = objs.create(rt, target.namespace, applied, opts, managed=True)
        return json_response(obj, status=201, warnings=warnings)
    current = copy.deepcopy(objs.present(rt, live))
    applied = fields.server_side_apply(
        rt, current, body, manager=opts.manager, force=force, subresource=target.subresource
    )
    obj = objs.update(rt, target.namespace, target.name, applied, opts, managed=True)
    return json_response(obj, warnings=warnings)


# -- deletes ------------------------------------------------------------------------------------
async def _delete_options(request: web.Request) -> dict[str, Any]:
    raw = await request.read()
    options: dict[str, Any] = {}
    if raw.strip():
        decoded = bodies.decode(
            raw, request.headers.get("Content-Type", ""), accepted=bodies.DELETE_TYPES
        )
        if not isinstance(decoded, dict):
            raise bad_request("DeleteOptions must be an object")
        options = decoded
    q = request.query
    if "propagationPolicy" in q:
        options["propagationPolicy"] = q["propagationPolicy"]
    if "orphanDependents" in q:
        options["orphanDependents"] = flag(q, "orphanDependents")
    if "gracePeriodSeconds" in q:
        options["gracePeriodSeconds"] = integer(q, "gracePeriodSeconds")
    if options.get("dryRun"):
        dry_run(q, list(options["dryRun"]))
    return options


def _deleted_status(target: Target, name: str, uid: str) -> Obj:
    details: Obj = {"name": name}
    if target.rt.group:
        details["group"] = target.rt.group
    details.update({"kind": target.rt.plural, "uid": uid})
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


async def _delete(request: web.Request, state: State, target: Target) -> web.Response:
    options = await _delete_options(request)
    opts = _write_options(request, target)
    if options.get("dryRun"):
        opts = WriteOptions(manager=opts.manager, dry_run=True)
    live = state.objects.get(target.rt, target.namespace, target.name)
    remaining = deletion.delete(
        state.objects, target.rt, target.namespace, target.name, options, opts
    )
    if remaining is not None:
        return json_response(remaining)
    return json_response(_deleted_status(target, target.name, live["metadata"]["uid"]))


async def _delete_collection(request: web.Request, state: State, target: Target) -> web.Response:
    options = await _delete_options(request)
    opts = _write_options(request, target)
    if options.get("dryRun"):
        opts = WriteOptions(manager=opts.manager, dry_run=True)
    q = request.query
    items = state.objects.list(
        target.rt,
        target.namespace or None,
        label_selector=q.get("labelSelector"),
        field_selector=q.get("fieldSelector"),
    )
    deleted = []
    for obj in items:
        meta = obj["metadata"]
        try:
            deletion.delete(
                state.objects, target.rt, meta.get("namespace", ""), meta["name"], options, opts
            )
        except KubeError as exc:
            if exc.code != 404:
                raise
        deleted.append(obj)
    return json_response(
        {
            "kind": target.rt.list_kind,
            "apiVersion": target.rt.api_version,
            "metadata": {"resourceVersion": str(state.objects.store.rv)},
            "items": deleted,
        }
    )
