"""What the admission and lifecycle steps see of the apiserver core.

``defaults``, ``quota``, ``crds`` and ``deletion`` run inside :class:`~kubesim.api.objects.Objects`'
writes; they read and commit through its registry and store and never call back into its request
methods, so they depend on this protocol rather than on ``objects`` (which imports them).
"""

from __future__ import annotations

from typing import Protocol

from kubesim.machinery.registry import Registry, ResourceType
from kubesim.store import Obj, Store


class Core(Protocol):
    @property
    def registry(self) -> Registry: ...

    @property
    def store(self) -> Store: ...

    @property
    def controller_delay(self) -> float:
        """Seconds before the namespace controller empties a terminating namespace."""
        ...

    @property
    def graceful_pods(self) -> bool:
        """Whether pods bound to a node terminate gracefully (a kubelet finishes them)."""
        ...

    def present(self, rt: ResourceType, obj: Obj) -> Obj:
        """The object as served in ``rt``'s version."""
        ...
