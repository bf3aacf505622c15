"""Kubeconfigs as the console reads them: the static clusters at start-up, and posted definitions.

Static clusters are one per context of the kubeconfig kubectl would read (``kubeclient`` keeps
kubectl's merge rules); the ``default`` fallback exists only when there is no readable kubeconfig,
it has no contexts, or it fails to parse. A kubeconfig posted through the API is held to a stricter
rule than the operator's own: it may not name files on this host nor run commands (``exec``,
``auth-provider``), because either would let an API caller read the server's files or run programs
on it. Errors never echo kubeconfig content, and nothing here logs it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

import kubeclient
from common.errors import BadRequest
from console.clusters.model import DEFAULT_ID, Cluster, Origin
from console.errors import InvalidCluster
from kubeclient import KubeConfig, KubeConfigError

logger = logging.getLogger(__name__)

#: Ids of runtime clusters, as the spec's ClusterDefinition.id says.
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@:-]{0,252}$")
#: Keys that make a client read a file or start a process on the host that loads the kubeconfig.
_HOST_KEYS = {
    # A proxy would resolve the server's name where the address guard cannot check it.
    "clusters": ("certificate-authority", "proxy-url"),
    "users": ("client-certificate", "client-key", "tokenFile", "exec", "auth-provider"),
}


@attrs.frozen
class StaticClusters:
    """The clusters of the start-up kubeconfig, and why the fallback was used when it was."""

    clusters: tuple[Cluster, ...]
    contexts: tuple[str, ...]
    sources: tuple[str, ...]
    fallback_reason: str | None


def kubeconfig_paths(setting: str | None, environ: Mapping[str, str]) -> list[Path]:
    """``console.kubeconfig`` (a path list like KUBECONFIG) wins over kubectl's own lookup."""
    if setting:
        return kubeclient.default_paths({"KUBECONFIG": setting})
    return kubeclient.default_paths(environ)


def static_clusters(paths: Sequence[Path], environ: Mapping[str, str]) -> StaticClusters:
    try:
        config = kubeclient.load(paths)
    except KubeConfigError as exc:
        logger.warning("kubeconfig not usable, falling back to %r: %s", DEFAULT_ID, exc.detail)
        return _fallback(environ, "the kubeconfig failed to parse")
    if config is None:
        return _fallback(environ, "no readable kubeconfig")
    contexts = config.contexts()
    if not contexts:
        return _fallback(environ, "the kubeconfig has no contexts", config.sources)
    clusters = tuple(
        Cluster(
            id=ctx.name,
            name=ctx.name,
            origin=Origin.STATIC,
            context=ctx.name,
            master_url=ctx.server,
            config=config,
        )
        for ctx in contexts
    )
    return StaticClusters(clusters, tuple(c.name for c in contexts), config.sources, None)


def _fallback(
    environ: Mapping[str, str], reason: str, sources: tuple[str, ...] = ()
) -> StaticClusters:
    host, port = environ.get("KUBERNETES_SERVICE_HOST"), environ.get("KUBERNETES_SERVICE_PORT")
    url = None
    if host:
        shown = f"[{host}]" if ":" in host else host
        url = f"https://{shown}:{port or 443}"
    try:  # in a pod, its service account (a token file renewed as the kubelet rotates it)
        pod = kubeclient.in_cluster_config(environ)
    except KubeConfigError as exc:
        logger.warning("the in-cluster service account is not usable: %s", exc.detail)
        pod = None
    cluster = Cluster(
        id=DEFAULT_ID,
        name=DEFAULT_ID,
        origin=Origin.STATIC,
        context=None if pod is None else kubeclient.IN_CLUSTER_CONTEXT,
        master_url=url,
        config=pod,
    )
    return StaticClusters((cluster,), (), sources, reason)


def parse_posted(text: str) -> KubeConfig:
    """A kubeconfig sent by an API caller: parsed, and refused if it would touch this host."""
    try:
        config = kubeclient.parse(text, source="the kubeconfig")
    except KubeConfigError as exc:
        raise InvalidCluster(exc.detail) from None
    for kind, keys in _HOST_KEYS.items():
        for entry in config.document.get(kind) or []:
            body = entry.get(kind[:-1]) or {}
            found = [k for k in keys if isinstance(body, Mapping) and body.get(k)]
            if found:
                raise InvalidCluster(
                    f"{kind[:-1]} {entry['name']!r} uses {found[0]}: a kubeconfig sent to the "
                    "console must carry its credentials inline (…-data, token) and may not "
                    "reference files, run commands on the server or go through a proxy"
                )
    if not config.contexts():
        raise InvalidCluster("the kubeconfig has no contexts: nothing in it names a cluster to use")
    return config


def standalone(config: KubeConfig, context: str) -> tuple[KubeConfig, str]:
    """The config holding only ``context`` (what is stored), and that context's server URL."""
    try:
        document: dict[str, Any] = config.for_context(context)
    except KubeConfigError as exc:
        raise InvalidCluster(exc.detail) from None
    server = document["clusters"][0]["cluster"].get("server")
    return KubeConfig(document=document, sources=config.sources), str(server)


def id_from_context(context: str) -> str:
    """A context's name as a cluster id, when it can be one (it must fit in a URL path segment)."""
    if not ID_PATTERN.match(context):
        raise BadRequest(
            f"context {context!r} cannot be used as a cluster id; send an id "
            "(letters, digits and . _ @ : -)"
        )
    return context


def choose_context(config: KubeConfig, wanted: str | None) -> str:
    """The named context, else the kubeconfig's current context, else its only context."""
    if wanted:
        return wanted
    if config.current_context:
        return config.current_context
    names = [c.name for c in config.contexts()]
    if len(names) == 1:
        return names[0]
    if not names:
        raise InvalidCluster("the kubeconfig has no contexts")
    raise InvalidCluster(
        f"the kubeconfig has {len(names)} contexts and no current-context; name one in context"
    )
