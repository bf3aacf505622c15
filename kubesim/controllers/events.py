"""The event recorder the controllers, the scheduler and the kubelet share.

Writes ``core/v1`` Events the way client-go's recorder does: one Event per (object, reason,
message, source), and a repeat bumps ``count`` and ``lastTimestamp`` instead of adding a new one,
so ``kubectl describe`` shows "x5 over 2m". A refused write (the namespace is terminating) is
dropped, like the real recorder drops it.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import datetime
import time

from kubesim.controllers.client import Client, fmt_time, now_utc
from kubesim.machinery.status import KubeError
from kubesim.store import Obj

EVENTS = ("", "events")
_REMEMBERED = 4096
TTL = 3600
_SWEEP_EVERY = 100


class Recorder:
    def __init__(self, client: Client) -> None:
        self.client = client
        self._seen: collections.OrderedDict[tuple[str, ...], tuple[str, str]] = (
            collections.OrderedDict()
        )
        self._created = 0

    def normal(self, obj: Obj, reason: str, message: str, **kw: str) -> None:
        self.record(obj, "Normal", reason, message, **kw)

    def warning(self, obj: Obj, reason: str, message: str, **kw: str) -> None:
        self.record(obj, "Warning", reason, message, **kw)

    def record(
        self,
        obj: Obj,
        type_: str,
        reason: str,
        message: str,
        *,
        component: str,
        host: str = "",
        field_path: str = "",
    ) -> None:
        meta = obj["metadata"]
        namespace = meta.get("namespace") or "default"
        key = (meta.get("uid", ""), type_, reason, message, component, field_path)
        now = fmt_time(now_utc())
        try:
            if key in self._seen and self._bump(self._seen[key], now):
                self._seen.move_to_end(key)
                return
            event = self._new(
                obj, namespace, type_, reason, message, component, host, field_path, now
            )
            created = self.client.create(EVENTS, namespace, event)
        except KubeError:
            return
        self._seen[key] = (namespace, created["metadata"]["name"])
        while len(self._seen) > _REMEMBERED:
            self._seen.popitem(last=False)
        self._created += 1
        if self._created % _SWEEP_EVERY == 0:
            self._expire()

    def _expire(self) -> None:
        """Events live an hour (kube-apiserver's --event-ttl), so a long demo does not pile them up."""
        cutoff = fmt_time(now_utc() - datetime.timedelta(seconds=TTL))
        for event in self.client.list(EVENTS):
            if (
                event.get("lastTimestamp") or event["metadata"].get("creationTimestamp", "")
            ) < cutoff:
                with contextlib.suppress(KubeError):
                    self.client.delete(EVENTS, event)

    def _bump(self, where: tuple[str, str], now: str) -> bool:
        live = self.client.get(EVENTS, *where)
        if live is None:
            return False
        new = copy.deepcopy(live)
        new["count"] = int(new.get("count") or 1) + 1
        new["lastTimestamp"] = now
        self.client.update(EVENTS, new)
        return True

    @staticmethod
    def _new(
        obj: Obj,
        namespace: str,
        type_: str,
        reason: str,
        message: str,
        component: str,
        host: str,
        field_path: str,
        now: str,
    ) -> Obj:
        meta = obj["metadata"]
        involved: Obj = {
            "kind": obj.get("kind", ""),
            "namespace": meta.get("namespace", ""),
            "name": meta["name"],
            "uid": meta.get("uid", ""),
            "apiVersion": obj.get("apiVersion", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        if not involved["namespace"]:
            del involved["namespace"]
        if field_path:
            involved["fieldPath"] = field_path
        source: Obj = {"component": component}
        if host:
            source["host"] = host
        return {
            "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "source": source,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": type_,
            "eventTime": None,
            "reportingComponent": component,
            "reportingInstance": host,
        }
