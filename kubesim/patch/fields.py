"""The seam to the field-ownership and patch engines (``apply``, ``patching``).

Those modules are pure functions on plain dicts, written separately; this adapter is the only place
the rest of the simulator calls them, and it turns their errors into ``Status`` errors.
"""

from __future__ import annotations

from typing import Any

from kubesim.machinery.meta import WriteOptions
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.status import KubeError
from kubesim.patch import apply as ssa
from kubesim.patch import mergekeys, patching
from kubesim.patch.errors import PatchError

Obj = dict[str, Any]
# A CRD schema's list and map rules, by schema identity (the schema is kept so its id stays its own).
_CR_RULES: dict[int, tuple[Obj, mergekeys.Rules]] = {}
_CR_RULES_MAX = 256


def rules(rt: ResourceType | None) -> mergekeys.Rules | None:
    """A custom resource's ``x-kubernetes-list-type``/``-map-type`` rules (built-ins: None, the
    engines know theirs)."""
    schema = rt.schema if rt is not None else None
    if schema is None:
        return None
    hit = _CR_RULES.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_CR_RULES) >= _CR_RULES_MAX:
        _CR_RULES.clear()
    found = mergekeys.rules_from_openapi(schema)
    _CR_RULES[id(schema)] = (schema, found)
    return found


def record_update(rt: ResourceType, old: Obj | None, new: Obj, opts: WriteOptions) -> Obj:
    """``new`` with the managedFields of an Update by ``opts.manager`` over ``old`` (None: a
    create)."""
    return ssa.record_update(
        old,
        new,
        manager=opts.manager,
        operation="Update",
        subresource=opts.subresource,
        rules=rules(rt),
    )


def server_side_apply(
    rt: ResourceType,
    live: Obj | None,
    applied: Obj,
    *,
    manager: str,
    force: bool,
    subresource: str = "",
) -> Obj:
    try:
        return ssa.apply(
            live,
            applied,
            manager=manager,
            force=force,
            group=rt.group,
            version=rt.version,
            kind=rt.kind,
            subresource=subresource,
            status_subresource=rt.has_status,
            rules=rules(rt),
        )
    except ssa.ApplyConflict as exc:
        raise KubeError(409, str(exc), details={"causes": exc.causes}) from exc
    except PatchError as exc:
        raise KubeError(exc.status, exc.message) from exc


#: What ``handlers/patch.go`` answers whatever made a JSON patch fail to apply (a failed
#: ``test``, a missing path): ``NewGenericServerResponse(422, ...)`` drops json-patch's own words.
JSON_PATCH_FAILED = "the server rejected our request due to an error in our request"


def patch(rt: ResourceType, live: Obj, body: Any, content_type: str) -> Obj:
    try:
        if content_type == "application/json-patch+json":
            return patching.json_patch(live, body)
        if not isinstance(body, dict) and body is not None:  # the handler words this first
            raise KubeError(400, "a merge patch must be a JSON object")
        if content_type == "application/merge-patch+json":
            return patching.merge_patch(live, body or {})
        return patching.strategic_merge_patch(
            live, body or {}, group=rt.group, version=rt.version, kind=rt.kind
        )
    except PatchError as exc:
        if exc.status == 422 and content_type == "application/json-patch+json":
            raise KubeError(422, JSON_PATCH_FAILED, details={}) from exc
        raise KubeError(exc.status, exc.message, reason=_reason(exc.status)) from exc


def _reason(status: int) -> str | None:
    return "UnsupportedMediaType" if status == 415 else None
