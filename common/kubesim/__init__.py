"""A Kubernetes API server simulator that kubectl, Helm v4 and kubernetes-asyncio accept unmodified.

It is the cluster every Wharf test talks to and the demo cluster of ``./scripts/run``. Its value is
fidelity: a behaviour that passes against it must pass against a real kube-apiserver, and where it
cannot be faithful it refuses with a ``Status`` error instead of silently succeeding.

Layers, bottom up:

- ``registry`` (served types, from ``resources.json``; CRDs via ``crds``) and ``store`` (objects,
  the global resourceVersion, the bounded event log, uid/owner indexes and :meth:`Store.subscribe`,
  which watches and controllers use);
- ``objects`` -- the apiserver core: metadata, optimistic concurrency, subresource scoping,
  ``defaults``, ``checks``/``immutable`` validation, dry runs -- with ``deletion`` (finalizers, GC,
  namespace lifecycle), ``subresources`` (scale, eviction, binding), ``tokens`` and ``reviews``;
- request decoding (``bodies``, ``protobuf``/``protobuf_kinds``/``protowire``), field validation
  (``validation``, ``schemas``) and the patch/apply engines behind ``fields``;
- HTTP: ``server`` (auth, Status errors, discovery, OpenAPI), ``handlers`` (routing), ``reads``,
  ``writes``, ``watch``, ``tables``/``columns``/``printers``;
- ``simulator`` runs it all on its own thread (or in the foreground for ``cli``).

The public API is :class:`Simulator` and :func:`common.kubesim.cli.main`.
"""

from common.kubesim.simulator import Simulator

__all__ = ["Simulator"]
