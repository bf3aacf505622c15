"""Actions on objects and nodes (``spec/console.actions.yaml``)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from console.actions import ActionResult, PodOutcomeBody, encode_pod


class ActionResultBody(TypedDict):
    action: str
    resourceId: str
    namespace: str | None
    name: str
    message: str
    row: dict[str, Any] | None
    created: NotRequired[dict[str, Any]]
    pods: NotRequired[list[PodOutcomeBody]]


def encode_action(result: ActionResult) -> ActionResultBody:
    out: ActionResultBody = {
        "action": result.action,
        "resourceId": result.resource_id,
        "namespace": result.namespace,
        "name": result.name,
        "message": result.message,
        "row": result.row,
    }
    if result.created is not None:
        out["created"] = result.created
    if result.action == "drain":
        out["pods"] = [encode_pod(p) for p in result.pods]
    return out
