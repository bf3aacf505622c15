"""Server-side field validation (``fieldValidation=Ignore|Warn|Strict``) for unknown fields.

A real kube-apiserver answers Strict violations with 400 BadRequest and the message
``<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding error: unknown field
"spec.foo"`` (as kubectl prints it), and Warn violations with ``Warning: 299`` headers. Unknown
fields are detected against the kubernetes-asyncio models of built-in kinds and the structural
schema of a CRD; kinds without a model are not checked. Outside Strict the fields are dropped,
as decoding drops them on a real server (and CRD pruning drops them from custom resources);
nulls then go as decoding sends them (``nulls``).
"""

from __future__ import annotations

from typing import Any

from kubesim.api import crds
from kubesim.encoding import gotypes, nulls, schemas
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.status import KubeError

Obj = dict[str, Any]


def unknown_fields(rt: ResourceType, obj: Any, *, subresource: str = "") -> list[schemas.Path]:
    if subresource == "scale":
        return schemas.unknown_fields_model(obj, "V1Scale")
    if rt.crd is not None:
        schema = crds.version_schema(rt.crd, rt.version)
        return schemas.unknown_fields_schema(obj, schema) if schema else []
    cls = schemas.model_for(rt.group, rt.version, rt.kind)
    if cls is None:
        return []
    return schemas.unknown_fields_model(obj, cls.__name__)


def check(
    rt: ResourceType, obj: Any, mode: str, *, subresource: str = "", apply: bool = False
) -> tuple[list[str], Any]:
    """(Warning messages, the object without its unknown fields), as decoding leaves it.

    Strict raises 400 instead; Ignore drops the fields silently; Warn drops them and says so.
    A body that does not decode into the kind's Go types is a 400 first, whatever the mode.
    """
    _check_types(rt, obj, subresource=subresource, apply=apply)
    paths = unknown_fields(rt, obj, subresource=subresource)
    if not paths:
        return [], decoded(rt, obj, subresource=subresource)
    unknown = [schemas.format_path(p) for p in paths]
    if mode == "Strict":
        kind = "Scale" if subresource == "scale" else rt.kind
        if apply:
            gv = f"{rt.group}/{rt.version}" if rt.group else f"/{rt.version}"
            raise KubeError(
                400,
                f"failed to create typed patch object ({gv}, Kind={kind}): "
                + ", ".join(f".{p}: field not declared in schema" for p in unknown),
            )
        raise KubeError(
            400,
            f'{kind} in version "{rt.version}" cannot be handled as a {kind}: '
            "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in unknown),
        )
    warnings = [] if mode == "Ignore" else [f'unknown field "{p}"' for p in unknown]
    return warnings, decoded(rt, schemas.prune(obj, paths), subresource=subresource)


def _check_types(rt: ResourceType, obj: Any, *, subresource: str, apply: bool) -> None:
    if rt.crd is not None:
        return  # a custom resource's body is checked against its structural schema
    if subresource == "scale":
        model, kind = "V1Scale", "Scale"
    else:
        cls = schemas.model_for(rt.group, rt.version, rt.kind)
        if cls is None:
            return
        model, kind = cls.__name__, rt.kind
    try:
        gotypes.check(obj, model)
    except gotypes.TypeMismatch as wrong:
        if apply:  # structured-merge-diff's words, as a real server's apply answers
            gv = f"{rt.group}/{rt.version}" if rt.group else f"/{rt.version}"
            raise KubeError(
                400,
                f"failed to create typed patch object ({gv}, Kind={kind}): "
                f"{wrong.where}: expected {wrong.want}, got {wrong.got}",
            ) from None
        raise KubeError(
            400,
            f'{kind} in version "{rt.version}" cannot be handled as a {kind}: {wrong.message()}',
        ) from None


def decoded(rt: ResourceType, obj: Any, *, subresource: str = "") -> Any:
    """``obj`` with its nulls as decoding leaves them (see ``nulls``)."""
    if subresource == "scale":
        return nulls.decoded_model(obj, "V1Scale")
    if rt.crd is not None:
        return nulls.decoded_custom(obj, crds.version_schema(rt.crd, rt.version))
    cls = schemas.model_for(rt.group, rt.version, rt.kind)
    return nulls.decoded_model(obj, cls.__name__ if cls is not None else None)


def warning_header(messages: list[str]) -> str:
    return ", ".join(
        '299 - "' + m.replace("\\", "\\\\").replace('"', '\\"') + '"' for m in messages
    )
