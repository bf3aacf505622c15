"""API semantics on top of the store: what kube-apiserver's generic registry does for every write.

Create/update/get/list with metadata bookkeeping (uid, creationTimestamp, generation on spec changes,
resourceVersion, managedFields), optimistic concurrency, status-subresource rules, name validation,
namespace lifecycle checks and ``dryRun``. Deletion, finalizers and garbage collection live in
``deletion``; CRD registration in ``crds``. This module knows nothing of HTTP.
"""

from __future__ import annotations

import copy
import secrets
import uuid
from collections.abc import Callable

from kubesim.api import (
    checks,
    crdefaults,
    crds,
    defaults,
    deletion,
    eventsv1,
    hpav1,
    limitranges,
    podsecurity,
    priority,
    quota,
    serviceaccount,
    storage,
)
from kubesim.api.validation import field
from kubesim.machinery.meta import WriteOptions, now
from kubesim.machinery.registry import Registry, ResourceType
from kubesim.machinery.selectors import Matcher, field_matcher, label_matcher
from kubesim.machinery.status import (
    KubeError,
    already_exists,
    bad_request,
    invalid,
    not_found,
    qualified,
    stale,
)
from kubesim.patch import fields
from kubesim.store import Obj, Store

# Name rules per resource; everything else uses RFC 1123 subdomains, RBAC uses path segments.
_NAME_RULES: dict[tuple[str, str], Callable[[str], list[str]]] = {
    ("", "namespaces"): field.dns1123_label,
    ("", "services"): field.dns1035_label,
}
# Kinds named like RBAC objects, by path segment (APIServices are "v1." for the core group).
_PATH_SEGMENT_NAMES = ("rbac.authorization.k8s.io", "apiregistration.k8s.io")


def _path_segment(name: str) -> list[str]:
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return ["may not contain '/' or '%'"] if "/" in name or "%" in name else []


def _strip(obj: Obj, *, status: bool = False) -> Obj:
    """The parts of an object that count as its spec for generation purposes (``status`` too for
    custom resources without a status subresource, as the apiserver counts them)."""
    skip = (
        ("metadata", "apiVersion", "kind")
        if status
        else ("metadata", "status", "apiVersion", "kind")
    )
    return {k: v for k, v in obj.items() if k not in skip}


class Objects:
    """The simulator's apiserver core: one instance per simulated cluster."""

    def __init__(self, registry: Registry, store: Store, *, controller_delay: float = 0.1) -> None:
        self.registry = registry
        self.store = store
        # Seconds before the namespace controller empties a terminating namespace.
        self.controller_delay = controller_delay
        # Pods bound to an existing node terminate gracefully (deletionTimestamp, then the kubelet
        # deletes them with gracePeriodSeconds=0), as on a real cluster. Off until a kubelet that
        # finishes terminating pods runs; without one they would never go away.
        self.graceful_pods = False

    # -- reads ------------------------------------------------------------------------------
    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        obj = self.store.get(rt.group_resource, namespace, name)
        if obj is None:
            raise not_found(rt.group, rt.plural, name)
        return self.present(rt, obj)

    def present(self, rt: ResourceType, obj: Obj) -> Obj:
        """The object as served in ``rt``'s version (CRD versions differ only in apiVersion), with
        the structural defaults of a custom resource applied, as reading from storage does."""
        if rt.storage is not None and obj.get("apiVersion") != rt.api_version:
            return eventsv1.to_v1(obj)
        if rt.api_version == hpav1.API_VERSION and obj.get("apiVersion") != rt.api_version:
            return hpav1.to_v1(obj)
        if obj.get("apiVersion") != rt.api_version:
            if rt.crd is not None:
                crds.check_conversion(rt.crd, obj)
            obj = {**obj, "apiVersion": rt.api_version}
        if rt.crd is not None:
            return crdefaults.defaulted(crds.version_schema(rt.crd, rt.version), obj)
        return obj

    def list(
        self,
        rt: ResourceType,
        namespace: str | None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        presented: bool = True,
    ) -> list[Obj]:
        """The objects of ``rt`` (in ``namespace``, or all) the selectors match, in the store's
        order. ``presented`` False: as stored, for a caller that serves a page of them and
        presents only those (:meth:`present` copies each Event, defaults each custom resource:
        a ``limit=1`` list paid for every object). Labels read the same either way; fields are
        matched on the served form."""
        labels = label_matcher(label_selector)
        fields_ = self.field_matcher(rt, field_selector)
        found = []
        for obj in self.store.list(rt.group_resource, namespace):
            if not labels(obj):
                continue
            served = self.present(rt, obj) if presented or field_selector else obj
            if fields_(served):
                found.append(served if presented else obj)
        return found

    def field_matcher(self, rt: ResourceType, selector: str | None) -> Matcher:
        """The field selector of a list or watch of ``rt``: a custom resource's version also
        selects by its CRD's ``selectableFields``."""
        if rt.crd is None:
            return field_matcher(selector, rt.group, rt.plural)
        extra = crds.selectable_fields(rt.crd, rt.version)
        return field_matcher(selector, rt.group, rt.plural, custom=True, selectable=extra)

    # -- create -----------------------------------------------------------------------------
    def create(
        self,
        rt: ResourceType,
        namespace: str,
        body: Obj,
        opts: WriteOptions,
        *,
        managed: bool = False,
    ) -> Obj:
        """POST semantics (also create-on-apply). ``managed``: managedFields already done."""
        obj = self._prepare_body(rt, namespace, body)
        meta = obj["metadata"]
        if rt.namespaced:  # admission, before the storage generates a name or validates it
            self.check_namespace_open(rt, namespace, str(meta.get("name") or ""))
        _assign_name(rt, meta)
        self._validate_name(rt, meta["name"])
        if self.store.get(rt.group_resource, namespace, meta["name"]) is not None:
            raise already_exists(rt.group, rt.plural, meta["name"])
        _init_metadata(rt, obj)
        self._default(rt, obj)
        limitranges.mutate(self, rt, obj)  # admission order: LimitRanger before Priority
        if rt.group_resource == ("", "persistentvolumeclaims"):
            storage.admit_claim(self, obj)
        if rt.group_resource == ("", "persistentvolumes"):
            storage.admit_volume(obj)
        if rt.group_resource == ("", "pods"):
            serviceaccount.admit_pod(self, obj)
            priority.admit_pod(self, obj)
            podsecurity.admit_pod(self, obj)
        return self._admit(rt, None, obj, opts, managed=managed)

    def _admit(
        self, rt: ResourceType, old: Obj | None, obj: Obj, opts: WriteOptions, *, managed: bool
    ) -> Obj:
        """The last steps of a create or an update: the pod-template admission, validation,
        managedFields (unless ``managed``), and the commit."""
        podsecurity.admit_template(self, rt.group, rt.plural, obj)
        crds.validate(rt, obj)
        checks.validate(rt, obj, old)
        if not managed:
            obj = fields.record_update(rt, old, obj, opts)
        return self.persist(rt, old, obj, opts)

    def _default(self, rt: ResourceType, obj: Obj) -> None:
        defaults.apply(rt, obj, self)
        if rt.crd is not None:
            crdefaults.apply(crds.version_schema(rt.crd, rt.version), obj)

    def _prepare_body(self, rt: ResourceType, namespace: str, body: Obj) -> Obj:
        if not isinstance(body, dict):
            raise bad_request("the body of the request was not a JSON object")
        obj = copy.deepcopy(body)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if kind and kind != rt.kind:
            raise bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
            )
        if api_version and api_version != rt.api_version:
            raise bad_request(
                f"the API version in the data ({api_version}) does not match the "
                f"expected API version ({rt.api_version})"
            )
        obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
        if rt.storage is not None:
            obj = eventsv1.to_core(obj)
        if rt.api_version == hpav1.API_VERSION:
            obj = hpav1.to_v2(obj)
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if rt.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the "
                    "namespace sent on the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        return obj

    def _validate_name(self, rt: ResourceType, name: str) -> None:
        if rt.group in _PATH_SEGMENT_NAMES:
            messages = _path_segment(name)
        else:
            messages = _NAME_RULES.get(rt.group_resource, field.dns1123_subdomain)(name)
        if messages:
            raise invalid(
                rt.group, rt.kind, name, field.invalid_each("metadata.name", name, messages)
            )

    def check_namespace_open(self, rt: ResourceType, namespace: str, name: str) -> None:
        """The NamespaceLifecycle admission plugin: no new objects in a namespace that does not
        exist or is being deleted (``admission.NewForbidden`` naming the object, and the cause)."""
        ns = self.store.get(("", "namespaces"), "", namespace)
        if ns is None:
            raise not_found("", "namespaces", namespace)
        if ns["metadata"].get("deletionTimestamp"):
            what = qualified(rt.group, rt.plural) + (f' "{name}"' if name else "")
            raise KubeError(
                403,
                f"{what} is forbidden: unable to create new content in namespace {namespace} "
                "because it is being terminated",
                details={
                    **({"name": name} if name else {}),
                    **({"group": rt.group} if rt.group else {}),
                    "kind": rt.plural,
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": f"namespace {namespace} is being terminated",
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )

    # -- update -----------------------------------------------------------------------------
    def update(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        body: Obj,
        opts: WriteOptions,
        *,
        managed: bool = False,
    ) -> Obj:
        """PUT semantics (also the last step of every patch). ``managed``: managedFields done.
        The body's name is checked against the URL's before the object is looked up (the update
        handler's ``checkName``), so a mismatch is a 400 even when nothing has that name."""
        meta = body.get("metadata") if isinstance(body, dict) else None
        given = meta.get("name") if isinstance(meta, dict) else None
        if isinstance(given, str) and given and given != name:
            _check_identity(rt, name, {"metadata": {}}, {"name": given})
        old = self.store.get(rt.group_resource, namespace, name)
        if old is None:
            raise not_found(rt.group, rt.plural, name)
        obj = self._prepare_body(rt, namespace, body)
        _check_identity(rt, name, old, obj["metadata"])
        obj = _scope_to_subresource(rt, old, obj, opts.subresource)
        defaults.keep_allocated(rt, old, obj)
        meta = obj["metadata"]
        for k in _SERVER_OWNED:
            if k in old["metadata"]:
                meta[k] = old["metadata"][k]
            else:
                meta.pop(k, None)
        self._default(rt, obj)
        before = self.present(rt, old) if rt.crd is not None else old
        if rt.tracks_generation and _strip(obj, status=not rt.has_status) != _strip(
            before, status=not rt.has_status
        ):
            meta["generation"] = old["metadata"].get("generation", 0) + 1
        return self._admit(rt, old, obj, opts, managed=managed)

    def persist(self, rt: ResourceType, old: Obj | None, obj: Obj, opts: WriteOptions) -> Obj:
        """Commit a prepared object, unless it is a dry run or a no-op; runs the write hooks."""
        if old is not None:
            meta = obj["metadata"]
            meta["resourceVersion"] = old["metadata"]["resourceVersion"]
            if _same(old, obj):
                return self.present(rt, old)
            spec_finalizers = (
                (obj.get("spec") or {}).get("finalizers") if rt.plural == ("namespaces") else None
            )
            # ShouldDeleteDuringUpdate: an object being deleted goes once its finalizers are
            # gone, unless a grace period still runs (a terminating pod's kubelet writes its
            # status until its containers are down). The answer is the object as this write
            # left it, as apiserver's Store.deleteWithoutFinalizers answers.
            deleting = old["metadata"].get("deletionTimestamp") and not old["metadata"].get(
                "deletionGracePeriodSeconds"
            )
            if deleting and not meta.get("finalizers") and not spec_finalizers:
                if not opts.dry_run:
                    deletion.finalize(self, rt, obj)
                return self.present(rt, obj)
        if not opts.subresource:
            limitranges.validate(self, rt, obj, creating=old is None)
        if old is None:
            quota.admit(self, rt, obj)
        if opts.dry_run:
            return self.present(rt, obj)
        crds.before_commit(self, rt, old, obj)
        self.store.commit(rt.group_resource, obj)
        crds.after_commit(self, rt, obj)
        namespace = obj["metadata"].get("namespace", "")
        if namespace and (old is None or rt.group_resource in (quota.QUOTAS, ("", "pods"))):
            quota.refresh(self, namespace)
        current = self.store.get(rt.group_resource, namespace, obj["metadata"]["name"])
        if current is not None and current["metadata"].get("ownerReferences"):
            deletion.collect_if_orphaned(self, rt, current)
        return self.present(rt, current if current is not None else obj)


# Metadata only the server writes: kept from the stored object on every update.
_SERVER_OWNED = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
)


def _assign_name(rt: ResourceType, meta: Obj) -> None:
    if meta.get("name"):
        return
    if not meta.get("generateName"):
        raise invalid(
            rt.group,
            rt.kind,
            "",
            [
                {
                    "reason": "FieldValueRequired",
                    "message": "Required value: name or generateName is required",
                    "field": "metadata.name",
                }
            ],
        )
    suffix = "".join(secrets.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    meta["name"] = meta["generateName"] + suffix


def _init_metadata(rt: ResourceType, obj: Obj) -> None:
    meta = obj["metadata"]
    for k in ("resourceVersion", "selfLink", *_SERVER_OWNED):
        meta.pop(k, None)
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = now()
    if rt.tracks_generation:
        meta["generation"] = 1
    if rt.has_status and rt.plural != "namespaces":
        # Built-in status is a Go struct: reset to its zero value, which encodes as {}.
        obj.pop("status", None)
        if rt.crd is None:
            obj["status"] = {}


def _check_identity(rt: ResourceType, name: str, old: Obj, meta: Obj) -> None:
    """The URL names the object; a body resourceVersion or uid is an optimistic precondition."""
    if meta.get("name", name) != name:
        raise bad_request(
            f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
        )
    meta["name"] = name
    rv = meta.get("resourceVersion")
    if rv and rv != old["metadata"]["resourceVersion"]:
        raise stale(rt.group, rt.plural, name)
    if meta.get("uid") and meta["uid"] != old["metadata"]["uid"]:
        raise stale(rt.group, rt.plural, name)


def _scope_to_subresource(rt: ResourceType, old: Obj, obj: Obj, subresource: str) -> Obj:
    """What a write may change: only status through /status, only spec.finalizers through
    /finalize, everything but status through the main resource when status is a subresource."""
    if subresource == "status":
        new = copy.deepcopy(old)
        if obj.get("status") is None:
            new.pop("status", None)
        else:
            new["status"] = obj["status"]
        managed = obj["metadata"].get("managedFields", old["metadata"].get("managedFields"))
        new["metadata"]["managedFields"] = managed
        return new
    if subresource == "finalize":
        finalizers = (obj.get("spec") or {}).get("finalizers")
        new = copy.deepcopy(old)
        new.setdefault("spec", {})["finalizers"] = finalizers or []
        if not finalizers:
            del new["spec"]["finalizers"]
        return new
    if rt.has_status:
        if "status" in old:
            obj["status"] = copy.deepcopy(old["status"])
        else:
            obj.pop("status", None)
    return obj


def _same(old: Obj, new: Obj) -> bool:
    """An update that changes nothing but managedFields timestamps is a no-op, like etcd3's."""

    def core(o: Obj) -> Obj:
        meta = {k: v for k, v in o["metadata"].items() if k != "managedFields"}
        managers = [
            {k: v for k, v in e.items() if k != "time"}
            for e in o["metadata"].get("managedFields") or []
        ]
        return {**o, "metadata": meta, "_managers": managers}

    return core(old) == core(new)
