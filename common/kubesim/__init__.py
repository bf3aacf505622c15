"""A Kubernetes API server simulator that kubectl, Helm v4 and kubernetes-asyncio accept unmodified.

It is the cluster every Wharf test talks to and the demo cluster of ``./scripts/run``. Its value is
fidelity: a behaviour that passes against it must pass against a real kube-apiserver, and where it
cannot be faithful it refuses with a ``Status`` error instead of silently succeeding.

Layers, bottom up: ``registry`` (served resource types), ``store`` (objects, resourceVersions, the
event log and the subscribe API that watches and controllers use), ``objects`` (apiserver semantics
on top of the store: metadata, optimistic concurrency, deletion, GC, namespaces), the HTTP layer
(``server``, ``handlers``, ``watch``, ``discovery``, ``openapi``, ``tables``) and ``simulator``
(runs it all on its own thread). The public API is :class:`Simulator` and :func:`cli.main`.
"""

from common.kubesim.simulator import Simulator

__all__ = ["Simulator"]
