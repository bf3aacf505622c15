"""ControllerRevisions: the template history of StatefulSets and DaemonSets.

Each distinct pod template gets a ``ControllerRevision`` named ``<owner>-<hash>`` whose ``data`` is
the strategic-merge patch ``kubectl rollout undo`` applies to go back to it
(``{"spec":{"template":{..., "$patch":"replace"}}}``) and whose ``revision`` orders the history;
returning to an earlier template reuses its revision object with the next number, as the real
controllers do. Old revisions beyond ``revisionHistoryLimit`` are pruned.
"""

from __future__ import annotations

import copy

from kubesim.controllers.client import Client, owner_ref, template_hash
from kubesim.store import Obj

CR = ("apps", "controllerrevisions")
HASH_LABEL = "controller.kubernetes.io/hash"


def patch_for(template: Obj) -> Obj:
    return {"spec": {"template": {**copy.deepcopy(template), "$patch": "replace"}}}


def template_of(cr: Obj) -> Obj:
    t = dict(((cr.get("data") or {}).get("spec") or {}).get("template") or {})
    t.pop("$patch", None)
    return t


def history(client: Client, owner: Obj) -> list[Obj]:
    return sorted(client.owned(CR, owner), key=lambda r: int(r.get("revision") or 0))


def sync(client: Client, owner: Obj) -> tuple[Obj, list[Obj]]:
    """The revision of the owner's current template (created or renumbered) and the history."""
    template = (owner.get("spec") or {}).get("template") or {}
    revisions = history(client, owner)
    latest = int(revisions[-1].get("revision") or 0) if revisions else 0
    match = next((r for r in revisions if template_of(r) == template), None)
    if match is None:
        h = template_hash(template, int((owner.get("status") or {}).get("collisionCount") or 0))
        selector = ((owner.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        body = {
            "metadata": {
                "name": f"{owner['metadata']['name']}-{h}",
                "labels": {**selector, HASH_LABEL: h},
                "ownerReferences": [owner_ref(owner)],
            },
            "data": patch_for(template),
            "revision": latest + 1,
        }
        match = client.create(CR, owner["metadata"]["namespace"], body)
        revisions.append(match)
    elif int(match.get("revision") or 0) < latest:
        bumped = copy.deepcopy(match)
        bumped["revision"] = latest + 1
        match = client.update(CR, bumped)
        revisions = [
            *[r for r in revisions if r["metadata"]["name"] != match["metadata"]["name"]],
            match,
        ]
    return match, revisions


def prune(client: Client, owner: Obj, revisions: list[Obj], in_use: set[str]) -> None:
    limit = int((owner.get("spec") or {}).get("revisionHistoryLimit", 10))
    idle = [r for r in revisions if r["metadata"]["name"] not in in_use]
    for r in idle[: max(0, len(idle) - limit)]:
        client.delete(CR, r)


def revision_hash(cr: Obj) -> str:
    return str(
        (cr["metadata"].get("labels") or {}).get(HASH_LABEL)
        or cr["metadata"]["name"].rsplit("-", 1)[-1]
    )
