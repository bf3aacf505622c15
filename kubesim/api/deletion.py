"""Deletion as kube-apiserver and its garbage collector do it.

``propagationPolicy`` Background/Foreground/Orphan, preconditions, finalizers and
``deletionTimestamp``, garbage collection through ``ownerReferences`` and the namespace lifecycle
(deleting a namespace deletes its contents, then the namespace). The namespace controller starts
``controller_delay`` after the namespace is marked for deletion, as a real one lags (so
``kubectl delete -f`` of a namespace and its contents deletes both); the garbage collector and every
later step run inside the write that triggers them: the end states and events are the real ones,
only sooner.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import Callable
from typing import Any

from kubesim.api import crds, quota
from kubesim.api.core import Core
from kubesim.machinery.meta import PROTECTED_NAMESPACES, WriteOptions, now
from kubesim.machinery.registry import ResourceType
from kubesim.machinery.status import KubeError, not_found
from kubesim.store import GroupResource, Obj

FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"
NAMESPACE_FINALIZER = "kubernetes"


def delete(
    objs: Core,
    rt: ResourceType,
    namespace: str,
    name: str,
    options: dict[str, Any],
    opts: WriteOptions,
) -> Obj | None:
    """Delete one object. Returns it while it lingers (finalizers), None once it is gone."""
    old = objs.store.get(rt.group_resource, namespace, name)
    if old is None:
        raise not_found(rt.group, rt.plural, name)
    _check_preconditions(rt, old, options.get("preconditions") or {})
    if rt.group_resource == ("", "namespaces") and name in PROTECTED_NAMESPACES:
        raise KubeError(
            403,
            f'namespaces "{name}" is forbidden: this namespace may not be deleted',
            details={"name": name, "kind": "namespaces"},
        )
    policy = _policy(options)
    obj = copy.deepcopy(old)
    meta = obj["metadata"]
    finalizers: list[str] = list(meta.get("finalizers") or [])
    if policy == "Foreground" and FOREGROUND not in finalizers:
        finalizers.append(FOREGROUND)
    if policy == "Orphan" and ORPHAN not in finalizers:
        finalizers.append(ORPHAN)
    ns_finalizers = (obj.get("spec") or {}).get("finalizers") or []
    grace = _pod_grace(objs, rt, old, options)
    if opts.dry_run:  # the answer the deletion would give: gone at once, or the lingering object
        return None if not (grace or finalizers or ns_finalizers) else objs.present(rt, old)
    if rt.group_resource == ("", "namespaces"):
        obj.setdefault("status", {})["phase"] = "Terminating"
    if grace:
        return _graceful(objs, rt, obj, finalizers, grace)
    if not finalizers and not ns_finalizers:
        finalize(objs, rt, obj)
        return None
    if meta.get("deletionTimestamp"):
        return objs.present(rt, old)
    meta["finalizers"] = finalizers
    if not finalizers:
        meta.pop("finalizers")
    meta["deletionTimestamp"] = now()
    meta["deletionGracePeriodSeconds"] = 0
    objs.store.commit(rt.group_resource, obj)
    committed = objs.store.get(rt.group_resource, namespace, name)
    _run_finalizers(objs, rt, obj)
    # The object as the delete left it, even when the finalizers it got are done already: a real
    # server answers before its garbage collector runs.
    current = objs.store.get(rt.group_resource, namespace, name) or committed
    return objs.present(rt, current) if current is not None else None


def _pod_grace(objs: Core, rt: ResourceType, pod: Obj, options: dict[str, Any]) -> int:
    """Seconds of graceful termination a pod gets, 0 when it goes at once (as CheckGracefulDelete).

    Pods that never ran (unscheduled, or on a node that does not exist, which the pod GC would
    reap) or already finished are deleted at once; the rest wait for their kubelet, which deletes
    them again with ``gracePeriodSeconds=0`` once the containers have stopped.
    """
    if rt.group_resource != ("", "pods") or not objs.graceful_pods:
        return 0
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    node = spec.get("nodeName")
    if not node or objs.store.get(("", "nodes"), "", node) is None:
        return 0
    if status.get("phase") in ("Succeeded", "Failed"):
        return 0
    requested = options.get("gracePeriodSeconds")
    grace = spec.get("terminationGracePeriodSeconds", 30) if requested is None else requested
    return max(0, int(grace))


def _graceful(objs: Core, rt: ResourceType, obj: Obj, finalizers: list[str], grace: int) -> Obj:
    meta = obj["metadata"]
    current = meta.get("deletionGracePeriodSeconds")
    if meta.get("deletionTimestamp") and current is not None and current <= grace:
        return objs.present(rt, obj)
    meta["deletionTimestamp"] = now(grace)
    meta["deletionGracePeriodSeconds"] = grace
    # A pod without dependents has nothing to propagate to: the garbage collector drops the
    # foreground/orphan finalizer at once, so the kubelet's final delete can remove the pod.
    if not _dependents(objs, meta["uid"]):
        finalizers = [f for f in finalizers if f not in (FOREGROUND, ORPHAN)]
    if finalizers:
        meta["finalizers"] = finalizers
    else:
        meta.pop("finalizers", None)
    objs.store.commit(rt.group_resource, obj)
    return objs.present(rt, obj)


def _policy(options: dict[str, Any]) -> str:
    """The propagation policy of options ``options.check_delete`` has passed."""
    orphan = options.get("orphanDependents")
    if orphan is not None:
        return "Orphan" if orphan else "Background"
    return str(options.get("propagationPolicy") or "Background")


def _check_preconditions(rt: ResourceType, old: Obj, pre: dict[str, Any]) -> None:
    meta = old["metadata"]
    for field, key in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
        if pre.get(field) and pre[field] != meta.get(field):
            raise KubeError(
                409,
                f"Operation cannot be fulfilled on {rt.plural}{'.' + rt.group if rt.group else ''} "
                f'"{meta["name"]}": Precondition failed: {key} in precondition: {pre[field]}, '
                f"{key} in object meta: {meta.get(field)}",
                details={
                    "name": meta["name"],
                    **({"group": rt.group} if rt.group else {}),
                    "kind": rt.plural,
                },
            )


def finalize(objs: Core, rt: ResourceType, obj: Obj) -> Obj:
    """Remove an object for good and let the GC and the namespace controller react."""
    meta = obj["metadata"]
    gone = objs.store.remove(rt.group_resource, meta.get("namespace", ""), meta["name"])
    if gone is None:
        return obj
    crds.after_remove(objs, rt, gone)
    _collect_dependents(objs, gone)
    _recheck_owners(objs, gone)
    ns = meta.get("namespace", "")
    if ns:
        quota.refresh(objs, ns)
        _maybe_finish_namespace(objs, ns)
    return objs.present(rt, gone)


def _run_finalizers(objs: Core, rt: ResourceType, obj: Obj) -> None:
    """The finalizers the control plane itself owns: orphan, foregroundDeletion, namespaces."""
    finalizers = obj["metadata"].get("finalizers") or []
    if ORPHAN in finalizers:
        for gr, dep in _dependents(objs, obj["metadata"]["uid"]):
            _drop_owner_ref(objs, gr, dep, obj["metadata"]["uid"])
        _remove_finalizer(objs, rt, obj, ORPHAN)
    elif FOREGROUND in finalizers:
        deps = _dependents(objs, obj["metadata"]["uid"])
        for gr, dep in deps:
            dep_rt = objs.registry.by_group_resource(*gr)
            if dep_rt is not None and not dep["metadata"].get("deletionTimestamp"):
                _delete_quietly(objs, dep_rt, dep, "Foreground")
        _recheck_foreground(objs, rt, obj)
    if rt.group_resource == ("", "namespaces"):
        _later(objs, _empty_namespace, obj["metadata"]["name"])


def _remove_finalizer(objs: Core, rt: ResourceType, obj: Obj, finalizer: str) -> None:
    current = objs.store.get(
        rt.group_resource, obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
    )
    if current is None:
        return
    new = copy.deepcopy(current)
    left = [f for f in new["metadata"].get("finalizers") or [] if f != finalizer]
    new["metadata"]["finalizers"] = left
    if not left:
        new["metadata"].pop("finalizers")
        if not (new.get("spec") or {}).get("finalizers") or rt.plural != "namespaces":
            finalize(objs, rt, new)
            return
    objs.store.commit(rt.group_resource, new)


def _dependents(objs: Core, uid: str) -> list[tuple[GroupResource, Obj]]:
    return objs.store.dependents(uid)


def _uid_exists(objs: Core, uid: str) -> bool:
    return objs.store.by_uid(uid) is not None


def _drop_owner_ref(objs: Core, gr: GroupResource, dep: Obj, uid: str) -> None:
    new = copy.deepcopy(dep)
    refs = [r for r in new["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
    if refs:
        new["metadata"]["ownerReferences"] = refs
    else:
        new["metadata"].pop("ownerReferences", None)
    objs.store.commit(gr, new)


def _delete_quietly(objs: Core, rt: ResourceType, obj: Obj, policy: str) -> None:
    meta = obj["metadata"]
    # Already gone, or protected: the GC moves on like the real one.
    with contextlib.suppress(KubeError):
        delete(
            objs,
            rt,
            meta.get("namespace", ""),
            meta["name"],
            {"propagationPolicy": policy},
            WriteOptions(manager="kube-controller-manager"),
        )


def _collect_dependents(objs: Core, gone: Obj) -> None:
    """Background GC: delete dependents whose owners are all gone, else drop the dangling ref."""
    uid = gone["metadata"]["uid"]
    for gr, dep in _dependents(objs, uid):
        others = [r for r in dep["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
        rt = objs.registry.by_group_resource(*gr)
        if rt is None:
            continue
        if any(_uid_exists(objs, r["uid"]) for r in others):
            _drop_owner_ref(objs, gr, dep, uid)
        elif not dep["metadata"].get("deletionTimestamp"):
            _delete_quietly(objs, rt, dep, "Background")


def collect_if_orphaned(objs: Core, rt: ResourceType, obj: Obj) -> None:
    """The garbage collector on a written dependent: if none of its owners exists (every
    reference dangles), it is deleted in the background, as the real GC's attemptToDeleteItem."""
    meta = obj["metadata"]
    namespace, uid = meta.get("namespace", ""), meta["uid"]

    def step(o: Core, name: str) -> None:
        live = o.store.get(rt.group_resource, namespace, name)
        if (
            live is None
            or live["metadata"]["uid"] != uid
            or live["metadata"].get("deletionTimestamp")
        ):
            return
        refs = live["metadata"].get("ownerReferences") or []
        if refs and not any(_uid_exists(o, str(r.get("uid", ""))) for r in refs):
            _delete_quietly(o, rt, live, "Background")

    if not any(_uid_exists(objs, str(r.get("uid", ""))) for r in meta.get("ownerReferences") or []):
        _later(objs, step, meta["name"])


def _recheck_owners(objs: Core, gone: Obj) -> None:
    """An owner in foreground deletion goes once its last blocking dependent has gone."""
    for ref in gone["metadata"].get("ownerReferences") or []:
        found = objs.store.by_uid(str(ref.get("uid", "")))
        if found is None:
            continue
        gr, owner = found
        rt = objs.registry.by_group_resource(*gr)
        if rt is not None and FOREGROUND in (owner["metadata"].get("finalizers") or []):
            _recheck_foreground(objs, rt, owner)


def _recheck_foreground(objs: Core, rt: ResourceType, owner: Obj) -> None:
    if not _dependents(objs, owner["metadata"]["uid"]):
        _remove_finalizer(objs, rt, owner, FOREGROUND)


def _later(objs: Core, fn: Callable[[Core, str], None], name: str) -> None:
    """Run a controller step after ``objs.controller_delay``, as the real controllers lag.

    Without a running loop (unit use of ``Objects``) the step runs at once.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        fn(objs, name)
        return
    loop.call_later(objs.controller_delay, fn, objs, name)


def _empty_namespace(objs: Core, namespace: str) -> None:
    """The namespace controller: delete everything in a terminating namespace."""
    for gr, obj in list(objs.store.all_objects()):
        if obj["metadata"].get("namespace") != namespace or obj["metadata"].get(
            "deletionTimestamp"
        ):
            continue
        rt = objs.registry.by_group_resource(*gr)
        if rt is not None:
            _delete_quietly(objs, rt, obj, "Background")
    _maybe_finish_namespace(objs, namespace)


def _maybe_finish_namespace(objs: Core, namespace: str) -> None:
    ns = objs.store.get(("", "namespaces"), "", namespace)
    if ns is None or not ns["metadata"].get("deletionTimestamp"):
        return
    if objs.store.count_in_namespace(namespace):
        return
    rt = objs.registry.get("", "v1", "namespaces")
    assert rt is not None
    new = copy.deepcopy(ns)
    spec = new.setdefault("spec", {})
    spec["finalizers"] = [f for f in spec.get("finalizers") or [] if f != NAMESPACE_FINALIZER]
    if not spec["finalizers"]:
        spec.pop("finalizers")
    if new["metadata"].get("finalizers") or spec.get("finalizers"):
        objs.store.commit(rt.group_resource, new)
    else:
        finalize(objs, rt, new)
