"""Which cluster a release call goes to: the service's own cluster, or the one a host picks per request.
A call on one release names it as a :class:`ReleaseRef`: that cluster, a namespace and a name.

By default the service manages one cluster, found as kubectl finds it: ``chartsvc.kube.kubeconfig``
(else the ``KUBECONFIG`` list, else ``~/.kube/config``) at ``chartsvc.kube.context`` (else the
current-context), else the in-cluster service account. A host embedding the service may pass a
resolver to ``create_app`` instead: a callable given the in-flight request that returns the
:class:`ClusterTarget` for it. It is consulted once per release request, before its first cluster
call, so every call of one request goes to one cluster; returning ``None`` is a server error that
names the resolver. No HTTP parameter selects a cluster: routing is the host's business.

A :class:`ClusterTarget` carries a kubeconfig, which is a credential: it never appears in ``repr``
and nothing here logs it. This module reads kubeconfig files at start-up and talks to no cluster.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

import kubeclient
from common.config import ConfigError
from common.errors import WharfError
from kubeclient import KubeConfig, KubeConfigError

if TYPE_CHECKING:
    from aiohttp import web

logger = logging.getLogger(__name__)

IN_CLUSTER = "in-cluster"


@attrs.frozen
class ClusterTarget:
    """One cluster as the release calls reach it.

    ``kubeconfig`` is a standalone kubeconfig (one context, its cluster and user, files inlined);
    a pod's service account is one too (``kubeclient.in_cluster_config``). None: none was found;
    Helm then looks for an in-cluster account itself. ``name`` names the cluster in errors.
    """

    name: str
    kubeconfig: str | None = attrs.field(default=None, repr=False)
    context: str | None = None
    # Identity for client caches and release locks; it changes when the credentials do. Computed
    # once: every cluster call of a request asks for it.
    key: str = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        digest = hashlib.sha256((self.kubeconfig or "").encode()).hexdigest()[:16]
        object.__setattr__(self, "key", f"{self.name}\0{self.context or ''}\0{digest}")

    @classmethod
    def from_kubeconfig(
        cls, config: KubeConfig, context: str | None = None, *, name: str | None = None
    ) -> ClusterTarget:
        chosen = context or config.current_context
        if not chosen:
            raise KubeConfigError("the kubeconfig has no current-context and none was chosen")
        return cls(name=name or chosen, kubeconfig=config.content_for(chosen), context=chosen)

    @classmethod
    def from_file(
        cls, path: Path | str, context: str | None = None, *, name: str | None = None
    ) -> ClusterTarget:
        """The context (default: current) of the kubeconfig at ``path``; reads the file."""
        config = kubeclient.load([Path(path)])
        if config is None:
            raise KubeConfigError(f"no kubeconfig at {path}")
        return cls.from_kubeconfig(config, context, name=name)

    @classmethod
    def in_cluster(cls, name: str = IN_CLUSTER) -> ClusterTarget:
        return cls(name=name)


@attrs.frozen
class ReleaseRef:
    """One release as every call on it names it: its cluster, namespace and release name."""

    target: ClusterTarget
    namespace: str
    name: str

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity for the release's write lock: same cluster credentials, namespace and name."""
        return (self.target.key, self.namespace, self.name)


ResolverResult = ClusterTarget | None | Awaitable[ClusterTarget | None]
ClusterResolver = Callable[["web.Request"], ResolverResult]


class ResolverFailed(WharfError, code="cluster-resolver-failed"):
    """The host's resolver gave no cluster for a request: a server-side fault, not the caller's."""


def describe(resolver: object) -> str:
    name = getattr(resolver, "__qualname__", None) or type(resolver).__qualname__
    module = getattr(resolver, "__module__", None) or type(resolver).__module__
    return f"{module}.{name}"


#: Clusters a resolver returned that are remembered (for the health details), by name.
MAX_RECENT = 32


@attrs.define
class RecentTargets:
    """The latest target of each cluster name seen, the least recently seen dropped first."""

    _by_name: dict[str, ClusterTarget] = attrs.field(factory=dict)

    def add(self, target: ClusterTarget) -> None:
        self._by_name.pop(target.name, None)
        self._by_name[target.name] = target
        while len(self._by_name) > MAX_RECENT:
            del self._by_name[next(iter(self._by_name))]

    def __iter__(self) -> Iterator[ClusterTarget]:
        return iter(list(self._by_name.values()))


@attrs.frozen
class ClusterSource:
    """Where release requests find their cluster: the resolver when given, else the default.
    The clusters a resolver has returned are remembered (``recent``), so the health details can
    name their stuck releases too."""

    default: ClusterTarget | None = None
    resolver: ClusterResolver | None = None
    recent: RecentTargets = attrs.field(factory=RecentTargets, eq=False, repr=False)

    def known(self) -> list[ClusterTarget]:
        """The default cluster, then those the resolver returned, most recent last."""
        return [*([self.default] if self.default is not None else []), *self.recent]

    @property
    def configured(self) -> bool:
        return self.default is not None or self.resolver is not None

    async def resolve(self, request: web.Request) -> ClusterTarget:
        if self.resolver is None:
            if self.default is None:
                raise ResolverFailed("no cluster is configured for the release endpoints")
            return self.default
        result: Any = self.resolver(request)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, ClusterTarget):
            got = "None" if result is None else type(result).__name__
            raise ResolverFailed(
                f"the cluster resolver {describe(self.resolver)} returned {got} for this "
                "request instead of a ClusterTarget"
            )
        self.recent.add(result)
        return result


class KubeChoice(Protocol):
    """Which kubeconfig and context an operator chose (``chartsvc.kube``); None: the default."""

    @property
    def kubeconfig(self) -> Path | None: ...

    @property
    def context(self) -> str | None: ...


def default_target(choice: KubeChoice, environ: Mapping[str, str]) -> ClusterTarget | None:
    """The service's own cluster, as kubectl would pick it; None when there is none.

    An explicit setting that cannot work stops start-up (:class:`ConfigError`); a kubeconfig found
    by the defaults that has no usable context only leaves the release endpoints unregistered.
    """
    context = choice.context
    if choice.kubeconfig is not None:
        config = _load("chartsvc.kube.kubeconfig", [choice.kubeconfig])
        if config is None:
            raise ConfigError("chartsvc.kube.kubeconfig", f"an existing file ({choice.kubeconfig})")
        return _target(config, context)
    config = _load("KUBECONFIG", kubeclient.default_paths(environ))
    if config is not None and (context or config.current_context):
        return _target(config, context)
    if config is not None:
        logger.warning("the kubeconfig has no current-context: release endpoints are off")
    try:  # a pod's service account: a token file renewed as the kubelet rotates it
        pod = kubeclient.in_cluster_config(environ)
    except KubeConfigError as exc:
        logger.warning("the in-cluster service account is not usable: %s", exc.detail)
        return None
    return None if pod is None else ClusterTarget.from_kubeconfig(pod, name=IN_CLUSTER)


def _load(key: str, paths: list[Path]) -> KubeConfig | None:
    try:
        return kubeclient.load(paths)
    except KubeConfigError as exc:
        raise ConfigError(key, f"a usable kubeconfig ({exc.detail})") from None


def _target(config: KubeConfig, context: str | None) -> ClusterTarget:
    try:
        return ClusterTarget.from_kubeconfig(config, context)
    except KubeConfigError as exc:
        raise ConfigError("chartsvc.kube.context", f"a usable context ({exc.detail})") from None
