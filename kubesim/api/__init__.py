"""The apiserver core on top of the store: what kube-apiserver's generic registry does for every
request, without HTTP. ``objects`` (create/update/get/list, metadata bookkeeping, optimistic
concurrency, dry runs) drives the admission and lifecycle steps below it -- ``defaults``, ``checks``
and ``immutable`` validation, ``quota``, ``crds`` (registration and custom-resource validation) and
``deletion`` (finalizers, garbage collection, namespace lifecycle) -- which see it only through the
:class:`~kubesim.api.core.Core` protocol. ``subresources``, ``tokens``, ``reviews`` and
``seed`` sit on top of ``objects``; ``params`` parses what a request URL names."""
