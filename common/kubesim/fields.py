"""The seam to the field-ownership and patch engines (``apply.py``, ``patching.py``).

Those modules are pure functions on plain dicts, written separately; this adapter is the only place
the rest of the simulator calls them, and it turns their errors into ``Status`` errors.
"""

from __future__ import annotations

from typing import Any

from common.kubesim import patching
from common.kubesim.registry import ResourceType
from common.kubesim.status import KubeError

Obj = dict[str, Any]


def record_update(
    old: Obj | None, new: Obj, *, manager: str, operation: str, subresource: str = ""
) -> Obj:
    try:
        from common.kubesim import apply as ssa  # TEMP until apply.py lands
    except ImportError:
        return new
    return ssa.record_update(
        old, new, manager=manager, operation=operation, subresource=subresource
    )


def server_side_apply(
    rt: ResourceType, live: Obj | None, applied: Obj, *, manager: str, force: bool
) -> Obj:
    from common.kubesim import apply as ssa  # TEMP until apply.py lands

    try:
        return ssa.apply(
            live,
            applied,
            manager=manager,
            force=force,
            group=rt.group,
            version=rt.version,
            kind=rt.kind,
        )
    except ssa.ApplyConflict as exc:
        conflicts: list[tuple[str, str]] = list(exc.conflicts)
        causes = [
            {"reason": "FieldManagerConflict", "message": f'conflict with "{m}"', "field": f}
            for m, f in conflicts
        ]
        lines = "\n".join(f"- {c['message']}: {c['field']}" for c in causes)
        n = len(causes)
        raise KubeError(
            409,
            f"Apply failed with {n} conflict{'s' if n != 1 else ''}: {lines}",
            details={"causes": causes},
        ) from exc


def patch(rt: ResourceType, live: Obj, body: Any, content_type: str) -> Obj:
    try:
        if content_type == "application/json-patch+json":
            if not isinstance(body, list):
                raise KubeError(
                    400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
                )
            return patching.json_patch(live, body)
        if not isinstance(body, dict):
            raise KubeError(
                400, "the body of the request must be a JSON object for this patch type"
            )
        if content_type == "application/merge-patch+json":
            return patching.merge_patch(live, body)
        return patching.strategic_merge_patch(
            live, body, group=rt.group, version=rt.version, kind=rt.kind
        )
    except patching.PatchError as exc:
        raise KubeError(exc.status, exc.message) from exc
