"""The kubernetes-asyncio side of clusters: building a client per cluster and probing a server.

This is the adapter: the rest of ``console.clusters`` never calls a cluster, and kubernetes-asyncio
itself stays behind ``kubeclient``. A probe asks ``/version`` (public on every cluster; it names
the server and tells a simulator apart) and then ``/api`` (needs authentication, so a kubeconfig
with dead credentials is caught before it is registered). The Wharf simulator names itself with
an ``X-Kubesim`` header on ``/version`` whose value is the public path of its list of known
differences from kube-apiserver; that list is read once per probe, so ``/api/v1/about`` can show
what the simulator should not be trusted for.
Nothing here logs a kubeconfig or a response body.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import attrs

import kubeclient
from common.errors import BadGateway, WharfError
from common.netguard import AddressPolicy, AddressRefused, GuardingResolver
from console.clusters.model import Cluster
from console.errors import InvalidCluster
from kubeclient import KubeConfig, KubeConfigError

#: The simulator's sign on ``/version``; its value is where its list of differences is served.
SIMULATOR_HEADER = "X-Kubesim"
#: At most this many differences are kept from a simulator (it is a short list; a bound anyway).
MAX_DIFFERENCES = 100


@attrs.frozen
class Probe:
    """What a reachable server said about itself."""

    git_version: str | None
    simulator: bool
    #: A simulator's known differences from kube-apiserver: ``{"area", "text"}`` each.
    differences: tuple[dict[str, str], ...] = ()
    #: The console's own credentials may ``impersonate`` users and groups (two
    #: SelfSubjectAccessReviews); what ``impersonate: auto`` decides by.
    may_impersonate: bool = False


async def build_client(
    cluster: Cluster, *, workdir: Path, guard: AddressPolicy | None = None
) -> Any:
    """A new ``ApiClient`` for ``cluster``; the caller owns it and closes it. Certificates are
    written under the private folder ``workdir`` only while the client loads them. With
    ``guard``, every connection checks the addresses the server's name resolves to."""
    if cluster.config is None or cluster.context is None:
        raise BadGateway(
            f"cluster {cluster.id!r} has no kubeconfig and this process has no in-cluster "
            "service account",
            code="cluster-refused",
        )
    resolver = GuardingResolver(guard) if guard is not None else None
    try:
        return await kubeclient.api_client(
            cluster.config, cluster.context, workdir=workdir, resolver=resolver
        )
    except KubeConfigError as exc:  # the operator's kubeconfig, not the caller's input
        raise BadGateway(
            f"cluster {cluster.id!r} cannot be used: {exc.detail}", code="cluster-refused"
        ) from None


async def config_client(
    config: KubeConfig, context: str, *, workdir: Path, guard: AddressPolicy
) -> Any:
    """The client of a definition sent through the API: guarded at every connection."""
    try:
        return await kubeclient.api_client(
            config, context, workdir=workdir, resolver=GuardingResolver(guard)
        )
    except KubeConfigError as exc:
        raise InvalidCluster(exc.detail) from None


async def check_server(policy: AddressPolicy, server: str) -> None:
    """Refuse a runtime cluster whose server the address guard refuses: its URL (scheme, a
    ``localhost`` name, an IP literal in any spelling) and every address its name resolves to, the
    way chartsvc guards repository fetches. A name that does not resolve is left to the probe.
    Its client checks the resolved addresses again at every connection (``build_client``)."""
    try:
        url = policy.check_url(server)
        if url.scheme not in ("http", "https"):
            raise InvalidCluster(f"the cluster's server must be an http or https URL, not {url}")
        host = (url.host or "").strip("[]")
        try:
            ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            resolver = GuardingResolver(policy)
            try:
                await resolver.resolve(host, url.port or 0, socket.AF_UNSPEC)
            except OSError:
                pass
            finally:
                await resolver.close()
    except AddressRefused as exc:
        raise InvalidCluster(
            f"the cluster's server is refused by the address guard: {exc.reason} (allow it with "
            "console.clusters.allow-addresses)"
        ) from None


async def probe(client: Any, *, timeout: float) -> Probe:
    """``/version`` then ``/api``; raises :class:`InvalidCluster` naming what failed."""
    status, headers, body = await _get(client, "/version", timeout=timeout, auth=False)
    if status != 200:
        raise InvalidCluster(f"the server answered /version with HTTP {status}")
    git_version = body.get("gitVersion") if isinstance(body, dict) else None
    status, _, _ = await _get(client, "/api", timeout=timeout, auth=True)
    if status == 401:
        raise InvalidCluster("the cluster refused the kubeconfig's credentials (HTTP 401)")
    if status >= 500:
        raise InvalidCluster(f"the server answered /api with HTTP {status}")
    where = headers.get(SIMULATOR_HEADER)
    differences: tuple[dict[str, str], ...] = ()
    if where is not None and where.startswith("/") and not where.startswith("//"):
        _, _, listed = await _get(client, where, timeout=timeout, auth=False)
        differences = _differences(listed)
    may_impersonate = all(
        [await _self_review(client, "impersonate", res, timeout) for res in ("users", "groups")]
    )
    return Probe(
        git_version=git_version if isinstance(git_version, str) else None,
        simulator=where is not None,
        differences=differences,
        may_impersonate=may_impersonate,
    )


SELF_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


async def _self_review(client: Any, verb: str, resource: str, timeout: float) -> bool:
    """Whether the cluster says the client's own credentials may ``verb`` every ``resource`` of
    the core group; a cluster that cannot answer (no such API, a refusal) says no."""
    body = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "group": ""}},
    }
    try:
        _, _, answer = await _call(client, "POST", SELF_REVIEWS, body, timeout=timeout)
    except Exception:  # unanswered is not a yes: the console then acts as itself
        return False
    status = answer.get("status") if isinstance(answer, dict) else None
    return isinstance(status, dict) and status.get("allowed") is True


def _differences(body: Any) -> tuple[dict[str, str], ...]:
    """The well-formed entries of a simulator's list (the rest is ignored, not an error)."""
    items = body.get("differences") if isinstance(body, dict) else None
    if not isinstance(items, list):
        return ()
    return tuple(
        {"area": item["area"], "text": item["text"]}
        for item in items[:MAX_DIFFERENCES]
        if isinstance(item, dict)
        and isinstance(item.get("area"), str)
        and isinstance(item.get("text"), str)
    )


async def _call(
    client: Any, method: str, path: str, body: Any = None, *, timeout: float, auth: bool = True
) -> tuple[int, dict[str, str], Any]:
    """One call: its status, headers, and the JSON of a successful answer (200 to a GET, 201 to
    the POST of a review), else None."""
    ok = 201 if method == "POST" else 200
    content = {"Content-Type": "application/json"} if body is not None else None
    async with asyncio.timeout(timeout):
        resp = await client.call_api(
            path,
            method,
            body=body,
            header_params=content,
            auth_settings=["BearerToken"] if auth else [],
            _preload_content=False,
            _request_timeout=timeout,
        )
        try:
            answer = await resp.json(content_type=None) if resp.status == ok else None
        except ValueError:
            answer = None
        finally:
            resp.release()
    return resp.status, dict(resp.headers), answer


async def _get(
    client: Any, path: str, *, timeout: float, auth: bool
) -> tuple[int, dict[str, str], Any]:
    """A GET of a cluster being checked; what keeps it from answering is an invalid cluster."""
    try:
        return await _call(client, "GET", path, timeout=timeout, auth=auth)
    except TimeoutError:
        raise InvalidCluster(f"the server did not answer {path} within {timeout:g}s") from None
    except (ssl.SSLError, aiohttp.ClientSSLError) as exc:
        raise InvalidCluster(f"TLS with the server failed ({type(exc).__name__})") from None
    except aiohttp.ClientError as exc:
        raise InvalidCluster(f"the server cannot be reached ({type(exc).__name__})") from None
    except WharfError:
        raise
    except Exception as exc:  # the client's own refusals (a bad certificate in the kubeconfig)
        raise InvalidCluster(
            f"the client could not call the server ({type(exc).__name__})"
        ) from None


async def close_client(client: Any) -> None:
    await client.close()
