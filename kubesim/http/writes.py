"""Write handlers: create, update, the four patch types (server-side apply included) and delete."""

from __future__ import annotations

import copy
from typing import Any

from aiohttp import web

from kubesim.api import deletion, options, reviews, subresources, tokens
from kubesim.api.params import Target, field_manager, field_validation, flag, integer
from kubesim.encoding import bodies, validation
from kubesim.http import auth
from kubesim.http.responses import json_response
from kubesim.http.state import State
from kubesim.machinery.meta import WriteOptions
from kubesim.machinery.status import KubeError, bad_request, not_found
from kubesim.patch import fields
from kubesim.store import Obj


def _write_options(
    request: web.Request, target: Target, kind: str, *, apply: bool = False
) -> WriteOptions:
    """The write's options, checked as ``kind`` (``options.CREATE``...) before anything else."""
    dry_run = request.query.getall("dryRun", [])
    options.check_write(kind, request.query, dry_run, apply=apply)
    return WriteOptions(
        manager=field_manager(request.query, request.headers.get("User-Agent", "")),
        dry_run=bool(dry_run),
        subresource=target.subresource,
    )


async def _body(
    request: web.Request,
    accepted: tuple[str, ...],
    *,
    kind: str = "",
    words: bodies.Words | None = None,
) -> Any:
    """The request's body, refused in the words a real server's handler uses: an object of
    ``kind`` as ``transformDecodeError`` words it, else ``words``."""
    raw = await request.read()
    if words is None:
        words = bodies.object_words(kind, raw) if kind else bodies.Words()
    ctype = request.headers.get("Content-Type", "")
    return bodies.decode(raw, ctype, accepted=accepted, words=words)


async def create(request: web.Request, state: State, target: Target) -> web.Response:
    if target.subresource == "eviction":
        opts = _write_options(request, target, options.CREATE)
        body = await _body(request, bodies.WRITE_TYPES, kind="Eviction")
        status = subresources.evict(state.objects, target, body, opts)
        return json_response(status, status=201)
    if reviews.is_review(target.rt):
        body = await _body(request, bodies.WRITE_TYPES, kind=target.rt.kind)
        review = reviews.review(
            target.rt,
            target.namespace,
            body,
            caller=auth.user_of(request),
            authenticate=lambda token: auth.identify(state, token),
            store=state.objects.store,
        )
        state.reviews_answered[target.rt.kind] += 1
        return json_response(review, status=201)
    if target.subresource == "token":
        body = await _body(request, bodies.WRITE_TYPES, kind="TokenRequest")
        sa = state.objects.get(target.rt, target.namespace, target.name)
        issued = tokens.token_request(
            state.signing_key, sa, body, min_seconds=state.min_token_seconds
        )
        return json_response(issued, status=201)
    if target.subresource == "binding" or target.rt.group_resource == ("", "bindings"):
        opts = _write_options(request, target, options.CREATE)
        body = await _body(request, bodies.WRITE_TYPES, kind="Binding")
        status = subresources.bind(state.objects, target, body, opts)
        return json_response(status, status=201)
    opts = _write_options(request, target, options.CREATE)
    mode = field_validation(request.query)
    body = await _body(request, bodies.WRITE_TYPES, kind=target.rt.kind)
    warnings, body = validation.check(target.rt, body, mode)
    obj = state.objects.create(target.rt, target.namespace, body, opts)
    return json_response(obj, status=201, warnings=warnings)


async def update(request: web.Request, state: State, target: Target) -> web.Response:
    opts = _write_options(request, target, options.UPDATE)
    mode = field_validation(request.query)
    kind = subresources.SCALE_TYPE.kind if target.subresource == "scale" else target.rt.kind
    body = await _body(request, bodies.WRITE_TYPES, kind=kind)
    warnings, body = validation.check(target.rt, body, mode, subresource=target.subresource)
    if target.subresource == "scale":
        obj = subresources.update_scale(state.objects, target, body, opts)
        return json_response(obj, warnings=warnings)
    obj = state.objects.update(target.rt, target.namespace, target.name, body, opts)
    return json_response(obj, warnings=warnings)


async def patch(request: web.Request, state: State, target: Target) -> web.Response:
    media = bodies.media_type(request.headers.get("Content-Type", ""))
    if media not in bodies.PATCH_TYPES:
        raise bodies.unsupported_media(media, bodies.PATCH_TYPES)
    apply = media == "application/apply-patch+yaml"
    opts = _write_options(request, target, options.PATCH, apply=apply)
    mode = field_validation(request.query)
    objs, rt = state.objects, target.rt
    live = objs.store.get(rt.group_resource, target.namespace, target.name)
    if live is None and not apply:  # the patch is read only once there is an object to patch
        raise not_found(rt.group, rt.plural, target.name)
    body = await _body(request, bodies.PATCH_TYPES, words=bodies.patch_words(media, mode))
    bodies.require_patch_map(body, media)
    if apply:
        return _apply(request, state, target, body, mode, opts, live)
    assert live is not None
    if target.subresource == "scale":
        current = subresources.scale_of(rt, live)
        patched = fields.patch(subresources.SCALE_TYPE, current, body, media)
        warnings, patched = validation.check(rt, patched, mode, subresource="scale")
        return json_response(
            subresources.update_scale(objs, target, patched, opts), warnings=warnings
        )
    patched = fields.patch(rt, copy.deepcopy(objs.present(rt, live)), body, media)
    warnings, patched = validation.check(rt, patched, mode, subresource=target.subresource)
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
    body = body or {}  # a null body is an empty object, refused below for naming no type
    if target.subresource == "scale":
        raise KubeError(
            501,
            "the Wharf cluster simulator does not serve apply on scale",
            reason="NotImplemented",
        )
    warnings, body = validation.check(rt, body, mode, subresource=target.subresource, apply=True)
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


async def _delete_options(
    request: web.Request, target: Target
) -> tuple[dict[str, Any], WriteOptions]:
    """A delete's ``DeleteOptions`` (the body, then the query) and its write options, checked
    before the object is looked up; a ``dryRun`` in the body counts like one in the query."""
    raw = await request.read()
    given: dict[str, Any] = {}
    if raw.strip():
        ctype = request.headers.get("Content-Type", "")
        decoded = bodies.decode(raw, ctype, accepted=bodies.DELETE_TYPES, words=bodies.DELETE_WORDS)
        if not isinstance(decoded, dict):
            raise bad_request("DeleteOptions must be an object")
        given = decoded
    q = request.query
    if "propagationPolicy" in q:
        given["propagationPolicy"] = q["propagationPolicy"]
    if "orphanDependents" in q:
        given["orphanDependents"] = flag(q, "orphanDependents")
    if "gracePeriodSeconds" in q:
        given["gracePeriodSeconds"] = integer(q, "gracePeriodSeconds")
    if "dryRun" in q:
        given["dryRun"] = q.getall("dryRun")
    options.check_delete(given)
    return given, WriteOptions(
        manager=field_manager(q, request.headers.get("User-Agent", "")),
        dry_run=bool(given.get("dryRun")),
        subresource=target.subresource,
    )


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


async def delete(request: web.Request, state: State, target: Target) -> web.Response:
    given, opts = await _delete_options(request, target)
    live = state.objects.get(target.rt, target.namespace, target.name)
    remaining = deletion.delete(
        state.objects, target.rt, target.namespace, target.name, given, opts
    )
    if remaining is not None:
        return json_response(remaining)
    return json_response(_deleted_status(target, target.name, live["metadata"]["uid"]))


async def delete_collection(request: web.Request, state: State, target: Target) -> web.Response:
    q = request.query
    options.check_list(q)  # deletecollection.go checks the list options, then the delete's
    given, opts = await _delete_options(request, target)
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
                state.objects, target.rt, meta.get("namespace", ""), meta["name"], given, opts
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
