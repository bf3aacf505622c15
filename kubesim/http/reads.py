"""Read handlers: get, list (selectors, paging, resourceVersion semantics) and watch."""

from __future__ import annotations

import base64
import json
from typing import Any

from aiohttp import web

from kubesim.api import options, subresources
from kubesim.api.params import Target, include_object, integer
from kubesim.encoding import tables
from kubesim.http import watch
from kubesim.http.responses import encode_one, json_response, requested_form, transformed_list
from kubesim.http.state import State
from kubesim.machinery.status import KubeError, bad_request, expired
from kubesim.store import Obj


async def get(request: web.Request, state: State, target: Target) -> web.Response:
    obj = state.objects.get(target.rt, target.namespace, target.name)
    if target.subresource == "scale":
        return json_response(subresources.scale_of(target.rt, obj))
    return json_response(encode_one(request, target, obj))


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
    options.check_list(query)
    rv, match = options.resource_version(query), query.get("resourceVersionMatch", "")
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


_TYPE_FIELDS = ("kind", "apiVersion")


def list_(request: web.Request, state: State, target: Target) -> web.Response:
    q = request.query
    store = state.objects.store
    _check_list_rv(q, store.rv)
    items = state.objects.list(
        target.rt,
        target.namespace or None,
        label_selector=q.get("labelSelector"),
        field_selector=q.get("fieldSelector"),
        presented=False,  # only the page served is presented, below
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
    if q.get("resourceVersion") == "0" and not q.get("continue"):
        limit = None  # served from the watch cache, which does not page
    if limit and limit > 0 and len(items) > limit:
        rest = len(items) - limit
        items = items[:limit]
        last = items[-1]["metadata"]
        meta["continue"] = _continue_token(list_rv, (last.get("namespace", ""), last["name"]))
        if not q.get("labelSelector") and not q.get("fieldSelector"):
            meta["remainingItemCount"] = rest
    items = [state.objects.present(target.rt, o) for o in items]
    transformed = transformed_list(request, target.rt, items, meta)
    if transformed is not None:
        return json_response(transformed)
    if target.rt.crd is None:  # built-in items are encoded without their type (CRs keep it)
        items = [{k: v for k, v in o.items() if k not in _TYPE_FIELDS} for o in items]
    return json_response(
        {
            "kind": target.rt.list_kind,
            "apiVersion": target.rt.api_version,
            "metadata": meta,
            "items": items,
        }
    )


async def watch_(request: web.Request, state: State, target: Target) -> web.StreamResponse:
    form = requested_form(request, target.rt)
    include = include_object(request.query) if form.kind == "Table" else ""
    first = [True]

    def encode(obj: Obj) -> Obj:
        if form.kind == "Table":
            headers, first[0] = first[0], False
            return tables.table(
                target.rt,
                [obj],
                include=include,
                headers=headers,
                list_meta={"resourceVersion": obj["metadata"]["resourceVersion"]},
                version=form.version,
            )
        if form.kind.startswith("PartialObjectMetadata"):  # each event is one object
            return tables.partial_metadata(obj, form.version)
        return obj

    return await watch.serve(
        request,
        state.objects,
        target,
        encode,
        bookmark_interval=state.bookmark_interval,
        max_seconds=state.max_watch_seconds,
    )
