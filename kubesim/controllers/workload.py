"""What the workload controllers share: one owning kind, reconciled again when what it owns changes.

Deployment, ReplicaSet, StatefulSet, DaemonSet, Job and CronJob each watch their own kind and the
kind they create; an event on a created object is a look at its controlling owner (client-go's
``enqueueController`` by controller reference). Each syncs only an owner that is still there and
not being deleted, and announces every object it removes with a ``SuccessfulDelete`` event in its
own component's name.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesim.controllers.base import Controller, Key
from kubesim.controllers.client import Client, owner_key
from kubesim.controllers.events import Recorder
from kubesim.store import Event, GroupResource, Obj


class WorkloadController(Controller):
    """Subclasses set ``resource``, its ``kind`` and the ``component`` their events name."""

    resource: GroupResource
    kind: str
    component: str

    def __init__(self, client: Client, recorder: Recorder) -> None:
        super().__init__(client)
        self.recorder = recorder

    def keys(self, event: Event) -> Iterable[Key]:
        if event.gr == self.resource:
            return super().keys(event)
        return owner_key(event.obj, self.kind)

    def reconcile(self, key: Key) -> float | None:
        """:meth:`sync` the owner behind ``key``; one that is gone or being deleted needs nothing
        (what it owns goes with it, through the garbage collector)."""
        obj = self.client.get(self.resource, *key)
        if obj is None or obj["metadata"].get("deletionTimestamp"):
            return None
        return self.sync(key, obj)

    def sync(self, key: Key, obj: Obj) -> float | None:
        """Bring the live owner ``obj`` to its desired state; seconds until another look."""
        raise NotImplementedError

    def delete_owned(self, owner: Obj, gr: GroupResource, obj: Obj, message: str) -> None:
        """Delete ``obj``, which ``owner`` controls, and record it on the owner."""
        self.client.delete(gr, obj)
        self.recorder.normal(owner, "SuccessfulDelete", message, component=self.component)
