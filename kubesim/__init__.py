"""A Kubernetes API server simulator that kubectl, Helm v4 and kubernetes-asyncio accept unmodified.

It is the cluster every Wharf test talks to and the demo cluster of ``./scripts/run``. Its value is
fidelity: a behaviour that passes against it must pass against a real kube-apiserver, and where it
cannot be faithful it refuses with a ``Status`` error instead of silently succeeding.

Layers, bottom up (each package imports only those below it; ``pyproject.toml``'s import-linter
contracts hold this, and the simulator imports nothing else of Wharf):

- ``machinery`` -- value types: ``Status`` errors, write options, quantities, selectors, JSONPath,
  the served types (``registry``, from ``resources.json``) and ``timings``; ``shell`` -- the
  containers' POSIX shell over an in-memory filesystem, which knows nothing of clusters;
- ``store`` (objects, the global resourceVersion, the bounded event log, uid/owner indexes and
  :meth:`Store.subscribe`, which watches and controllers use) and ``patch`` (JSON/merge/strategic
  patches, server-side apply and managedFields, pure functions behind ``patch.fields``);
- ``api`` -- the apiserver core: ``objects`` (metadata, optimistic concurrency, subresource scoping,
  dry runs) over ``defaults``, ``checks``/``immutable`` validation, ``quota``, ``crds`` and
  ``deletion`` (finalizers, GC, namespace lifecycle); ``subresources`` (scale, eviction, binding),
  ``tokens``, ``reviews``, ``seed``;
- ``encoding`` -- request bodies (``bodies``, ``protobuf``/``protobuf_kinds``/``protowire``), field
  validation (``validation``, ``schemas``) and server-side printing (``tables``/``columns``/
  ``printers``);
- ``controllers`` (workload controllers, scheduler, nodes), then ``kubelet`` (pod lifecycles,
  container programs, logs, metrics, the in-pod network) and ``scenarios`` (what a cluster starts
  with), assembled by ``cluster``;
- ``http`` -- ``server`` (auth, Status errors, discovery, OpenAPI), ``handlers`` (routing),
  ``reads``, ``writes``, ``watch``, pod subresources (logs, exec, attach, port-forward);
- ``simulator`` runs it all on its own thread (or in the foreground for ``cli``).

The public API is :class:`Simulator` and :func:`kubesim.cli.main`.
"""

from kubesim.simulator import Simulator

__all__ = ["Simulator"]
