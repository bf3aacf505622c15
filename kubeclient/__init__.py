"""How a service reaches a Kubernetes cluster: kubeconfigs loaded as kubectl does, and clients.

A room of its own beside ``common`` (which it stands on for errors, private files and YAML): the
cluster side of chartsvc and the console, with its own library (kubernetes-asyncio) and its own
care (exec plugins run as subprocesses, client keys written to private files, tokens renewed).
It knows no service; the simulator (``kubesim``) is what it is tested against, never what it uses.

kubectl's rules are kept exactly: ``KUBECONFIG`` is a path list (``:`` on POSIX), missing files are
skipped, the first file to define a name (cluster, user, context) or ``current-context`` wins, and
without ``KUBECONFIG`` the file is ``~/.kube/config``. Relative file references inside a kubeconfig
(``certificate-authority``, ``client-certificate``, ``client-key``, ``tokenFile``, a plugin
``command`` given as a path) resolve against the directory of the file that holds them.
Certificates are inlined, so a context's config stands alone (and can be stored or handed to Helm
as content); a ``tokenFile`` and a plugin stay references (made absolute), since what they give
changes over time (:mod:`kubeclient.credentials` keeps such credentials fresh, client
certificates from exec plugins included: :mod:`kubeclient.tls`). A pod's service account is read
as such a kubeconfig too (:func:`in_cluster_config`), so its rotated token is renewed the same way.

A kubeconfig holds credentials: :class:`KubeConfig` never shows its document in ``repr``, and no
function here logs one. Errors never echo kubeconfig content.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import functools
import os
import shutil
import ssl
import urllib.request
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import attrs
from aiohttp.abc import AbstractResolver
from yarl import URL

from common import private, yamlio
from common.errors import BadGateway, BadRequest, UpstreamStatus, WharfError
from kubeclient import credentials, tls

_FILE_KEYS = {
    "clusters": (("certificate-authority", "certificate-authority-data"),),
    "users": (
        ("client-certificate", "client-certificate-data"),
        ("client-key", "client-key-data"),
    ),
}
#: kubernetes-asyncio's read buffer: a watch event of a large object (1.5 MiB in etcd) fits.
READ_BUFFER = 2**21
#: Where the kubelet mounts a pod's service account (``token``, ``ca.crt``, ``namespace``).
SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
#: The context name of :func:`in_cluster_config`'s kubeconfig.
IN_CLUSTER_CONTEXT = "in-cluster"


class KubeConfigError(BadRequest, code="invalid-kubeconfig"):
    """A kubeconfig that cannot work: unparsable, missing a context, a cluster or a user."""


@attrs.frozen
class ContextInfo:
    name: str
    cluster: str
    user: str
    namespace: str | None
    server: str | None


@attrs.frozen
class KubeConfig:
    """A parsed (and, from several files, merged) kubeconfig."""

    document: Mapping[str, Any] = attrs.field(repr=False)
    sources: tuple[str, ...] = ()

    @property
    def current_context(self) -> str | None:
        value = self.document.get("current-context")
        return value if isinstance(value, str) and value else None

    def contexts(self) -> list[ContextInfo]:
        out = []
        for entry in self.document.get("contexts") or []:
            ctx = entry.get("context") or {}
            cluster = _named(self.document, "clusters", ctx.get("cluster", "")) or {}
            out.append(
                ContextInfo(
                    name=entry["name"],
                    cluster=ctx.get("cluster", ""),
                    user=ctx.get("user", ""),
                    namespace=ctx.get("namespace"),
                    server=cluster.get("server"),
                )
            )
        return out

    def for_context(self, name: str) -> dict[str, Any]:
        """A standalone kubeconfig holding only ``name``, its cluster and its user."""
        entry = _named(self.document, "contexts", name)
        if entry is None:
            raise KubeConfigError(f"the kubeconfig has no context named {name!r}")
        cluster_name = entry.get("cluster", "")
        user_name = entry.get("user", "")
        cluster = _named(self.document, "clusters", cluster_name)
        if cluster is None or not cluster.get("server"):
            raise KubeConfigError(
                f"context {name!r} names cluster {cluster_name!r}, which has no server"
            )
        user = _named(self.document, "users", user_name) if user_name else {}
        if user is None:
            raise KubeConfigError(
                f"context {name!r} names user {user_name!r}, which is not defined"
            )
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": name,
            "clusters": [{"name": cluster_name, "cluster": cluster}],
            "users": [{"name": user_name, "user": user}],
            "contexts": [{"name": name, "context": entry}],
        }

    def content_for(self, name: str) -> str:
        return yamlio.dump(self.for_context(name))


def _named(document: Mapping[str, Any], kind: str, name: str) -> dict[str, Any] | None:
    singular = kind[:-1]
    for entry in document.get(kind) or []:
        if isinstance(entry, Mapping) and entry.get("name") == name:
            body = entry.get(singular)
            return dict(body) if isinstance(body, Mapping) else {}
    return None


def default_paths(environ: Mapping[str, str]) -> list[Path]:
    """The files kubectl would read: ``KUBECONFIG``'s list, else ``~/.kube/config``."""
    listed = environ.get("KUBECONFIG", "")
    if listed:
        return [Path(p).expanduser() for p in listed.split(os.pathsep) if p]
    home = environ.get("HOME")
    return [Path(home) / ".kube" / "config"] if home else []


def parse(text: str, *, base_dir: Path | None = None, source: str = "kubeconfig") -> KubeConfig:
    """One kubeconfig document; file references resolved against ``base_dir`` and inlined."""
    try:
        document = yamlio.load(text)
    except yamlio.YAMLError:
        raise KubeConfigError(f"{source} is not valid YAML") from None
    if not isinstance(document, dict) or document.get("kind", "Config") != "Config":
        raise KubeConfigError(f"{source} is not a kubeconfig (kind: Config)")
    for kind in ("clusters", "users", "contexts"):
        entries = document.get(kind) or []
        if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("name"), str) for e in entries
        ):
            raise KubeConfigError(f"{source}: {kind} must be a list of named entries")
    if base_dir is not None:
        document = _inline_files(document, base_dir)
    return KubeConfig(document=document, sources=(source,))


def _inline_files(document: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    document = copy.deepcopy(document)
    for kind, pairs in _FILE_KEYS.items():
        for entry in document.get(kind) or []:
            body = entry.get(kind[:-1]) or {}
            for file_key, data_key in pairs:
                ref = body.get(file_key)
                if isinstance(ref, str) and ref and not body.get(data_key):
                    path = (base_dir / ref).expanduser()
                    try:
                        body[data_key] = base64.b64encode(path.read_bytes()).decode()
                    except OSError:
                        raise KubeConfigError(
                            f"{kind[:-1]} {entry['name']!r}: cannot read {file_key}"
                        ) from None
                    del body[file_key]
            if kind == "users":
                _absolute_paths(body, base_dir)
    return document


def _absolute_paths(user: dict[str, Any], base_dir: Path) -> None:
    """A ``tokenFile`` stays a file (it is re-read when it changes), and a plugin command given as
    a relative path (``./bin/plugin``) is found from the kubeconfig's folder, as kubectl does."""
    token_file = user.get("tokenFile")
    if isinstance(token_file, str) and token_file:
        user["tokenFile"] = str((base_dir / token_file).expanduser().absolute())
    plugin = user.get("exec")
    command = plugin.get("command") if isinstance(plugin, dict) else None
    if isinstance(plugin, dict) and isinstance(command, str) and os.sep in command:
        plugin["command"] = str((base_dir / command).expanduser().absolute())


def load(paths: Sequence[Path]) -> KubeConfig | None:
    """Merge the readable files of ``paths`` as kubectl does; None when none exists."""
    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    sources = []
    for path in paths:
        try:
            text = path.read_text("utf-8")
        except FileNotFoundError:
            continue
        except OSError:
            raise KubeConfigError(f"cannot read kubeconfig {path}") from None
        part = parse(text, base_dir=path.parent, source=str(path)).document
        sources.append(str(path))
        if "current-context" not in merged and part.get("current-context"):
            merged["current-context"] = part["current-context"]
        for kind in ("clusters", "users", "contexts"):
            have = {e["name"] for e in merged.setdefault(kind, [])}
            merged[kind].extend(e for e in part.get(kind) or [] if e["name"] not in have)
    return KubeConfig(document=merged, sources=tuple(sources)) if sources else None


def in_cluster_config(
    environ: Mapping[str, str], folder: Path = SERVICE_ACCOUNT
) -> KubeConfig | None:
    """The pod's service account as a kubeconfig (context ``in-cluster``); None outside a pod.

    The token stays a ``tokenFile``: the kubelet rotates a bound token in place, and
    :mod:`kubeclient.credentials` re-reads the file when it changes and at once when the server
    refuses the token it holds (kubernetes-asyncio's own in-cluster loader re-reads it once a
    minute only).
    """
    host, port = environ.get("KUBERNETES_SERVICE_HOST"), environ.get("KUBERNETES_SERVICE_PORT")
    token = folder / "token"
    if not host or not token.exists():
        return None
    shown = f"[{host}]" if ":" in host else host
    cluster: dict[str, Any] = {"server": f"https://{shown}:{port or 443}"}
    try:
        cluster["certificate-authority-data"] = base64.b64encode(
            (folder / "ca.crt").read_bytes()
        ).decode()
    except OSError:
        raise KubeConfigError("the in-cluster service account has no readable ca.crt") from None
    context: dict[str, Any] = {"cluster": IN_CLUSTER_CONTEXT, "user": IN_CLUSTER_CONTEXT}
    with contextlib.suppress(OSError):
        context["namespace"] = (folder / "namespace").read_text("utf-8").strip() or None
    name = IN_CLUSTER_CONTEXT
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": name,
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": {"tokenFile": str(token.absolute())}}],
        "contexts": [{"name": name, "context": context}],
    }
    return KubeConfig(document=document, sources=(str(folder),))


async def api_client(
    config: KubeConfig, context: str, *, workdir: Path, resolver: AbstractResolver | None = None
) -> Any:
    """A kubernetes-asyncio ``ApiClient`` for ``context``; the caller closes it (``await close()``).

    The bearer token (a static one, a ``tokenFile``, an ``exec`` plugin) is ours to keep fresh
    (:mod:`kubeclient.credentials`); its first value is fetched here, so a plugin that cannot work
    fails now. Certificates given as data are written to a private folder under ``workdir`` only
    while the client reads them into its TLS context, then removed: no copy outlives this call.
    ``resolver`` (a ``netguard.GuardingResolver``) checks every address the server's name resolves
    to when a connection is made; such a client ignores proxy environment variables, since a
    proxy would resolve the name where it cannot be checked. Any other client goes through the
    kubeconfig's ``proxy-url`` or else the proxy the environment names for the server
    (``HTTPS_PROXY``/``HTTP_PROXY``, ``NO_PROXY``), as kubectl does, for requests and WebSocket
    upgrades alike.
    """
    from kubernetes_asyncio import client
    from kubernetes_asyncio import config as kconfig  # adapters import the client lazily

    standalone = config.for_context(context)
    user = standalone["users"][0]["user"]
    try:
        creds = credentials.for_user(user, standalone["clusters"][0]["cluster"])
        if creds is not None:
            await creds.current()
    except credentials.CredentialError as exc:
        raise KubeConfigError(f"context {context!r} cannot be used: {exc.detail}") from None
    plain = {k: v for k, v in user.items() if creds is None or k not in _OUR_KEYS}
    standalone["users"][0]["user"] = plain
    configuration = client.Configuration()
    try:
        async with certificate_files(standalone, workdir) as on_disk:
            await kconfig.load_kube_config_from_dict(
                config_dict=on_disk, context=context, client_configuration=configuration
            )
            api = client.ApiClient(configuration)
            await _own_pool(api, configuration, resolver)
    except (kconfig.ConfigException, ValueError, KeyError, OSError) as exc:
        raise KubeConfigError(f"context {context!r} cannot be used: {type(exc).__name__}") from None
    if creds is not None:
        cluster = standalone["clusters"][0]["cluster"]
        await creds.install(configuration, functools.partial(tls.client_tls, cluster, workdir))
        # Typed as a ClientSession; kubernetes-asyncio only calls its request() and close().
        pool = tls.CredentialSession(api.rest_client.pool_manager, creds)
        api.rest_client.pool_manager = pool  # type: ignore[assignment]
    _act_as(api, user)
    return api


def _tls_context(configuration: Any) -> ssl.SSLContext:
    """The client TLS kubernetes-asyncio's ``RESTClientObject`` makes from ``configuration``."""
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert)
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, keyfile=configuration.key_file)
    if not configuration.verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if configuration.disable_strict_ssl_verification:
        context.verify_flags &= ~ssl.VERIFY_X509_STRICT
    return context


async def _own_pool(api: Any, configuration: Any, resolver: AbstractResolver | None) -> None:
    """Give ``api`` a connection pool made the way kubernetes-asyncio's ``RESTClientObject`` makes
    it (TLS settings, pool size, read buffer), resolving through ``resolver`` when given, and
    without ``trust_env``. With it aiohttp reads ``~/.netrc`` and the proxy variables in a worker
    thread for every request: two thread hops a request (a burst of 55 requests, as a console's
    counts make, took 2.5 times as long), and a netrc entry for the server broke every request
    (aiohttp refuses a netrc login beside the bearer token). The proxy is chosen once here
    instead: the kubeconfig's ``proxy-url``, else the environment's for the server; none when
    ``resolver`` guards the addresses."""
    proxy = (
        None
        if resolver is not None
        else configuration.proxy or _environment_proxy(configuration.host)
    )
    connector = aiohttp.TCPConnector(
        limit=configuration.connection_pool_maxsize,
        ssl=_tls_context(configuration),
        resolver=resolver,
    )
    previous = api.rest_client.pool_manager
    api.rest_client.pool_manager = aiohttp.ClientSession(
        connector=connector, trust_env=False, read_bufsize=READ_BUFFER, proxy=proxy
    )
    await previous.close()


def _environment_proxy(server: str) -> str | None:
    """The proxy the environment names for ``server`` (by its scheme: ``HTTPS_PROXY`` or
    ``HTTP_PROXY``, either case), None when there is none or ``NO_PROXY`` exempts its host."""
    proxies = urllib.request.getproxies_environment()
    url = URL(server)
    if url.host is None:
        return None
    host = url.host if url.explicit_port is None else f"{url.host}:{url.explicit_port}"
    if urllib.request.proxy_bypass(host):
        return None
    return proxies.get(url.scheme)


def _act_as(api: Any, user: Mapping[str, Any]) -> None:
    """kubectl's ``as`` / ``as-groups`` of a kubeconfig user (kubernetes-asyncio ignores them):
    every request of the client's session then carries ``Impersonate-User`` and one
    ``Impersonate-Group`` per group (the session's default headers keep repeated keys)."""
    acting = user.get("as")
    if not isinstance(acting, str) or not acting:
        return
    headers = api.rest_client.pool_manager.headers
    headers["Impersonate-User"] = acting
    for group in user.get("as-groups") or []:
        headers.add("Impersonate-Group", str(group))


#: The user keys whose credential :mod:`kubeclient.credentials` keeps instead of kubernetes-asyncio.
_OUR_KEYS = ("exec", "token", "tokenFile")
_DATA_KEYS = (
    ("clusters", "cluster", "certificate-authority"),
    ("users", "user", "client-certificate"),
    ("users", "user", "client-key"),
)


@contextlib.asynccontextmanager
async def certificate_files(
    standalone: dict[str, Any], workdir: Path
) -> AsyncIterator[dict[str, Any]]:
    """``standalone`` with its ``*-data`` certificates as files (0600, in a 0700 folder under
    ``workdir``) for the length of the ``with``; the folder is removed on leaving it."""
    document = copy.deepcopy(standalone)
    files: dict[str, bytes] = {}
    for kind, singular, key in _DATA_KEYS:
        body = document[kind][0][singular]
        data = body.pop(f"{key}-data", None)
        if data:
            try:
                files[key] = base64.b64decode(data, validate=False)
            except ValueError:
                raise KubeConfigError(f"{singular} {key}-data is not base64") from None
            body[key] = key
    if not files:
        yield document
        return
    folder = await asyncio.to_thread(private.private_temp_dir, workdir, "kube-")
    try:
        await asyncio.to_thread(tls.write_files, folder, files)
        for kind, singular, key in _DATA_KEYS:
            body = document[kind][0][singular]
            if body.get(key) == key and key in files:
                body[key] = str(folder / key)
        yield document
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)


def cluster_error(exc: BaseException, *, code: str = "cluster-refused") -> WharfError:
    """A cluster's refusal keeps its status and reason; a request that never arrived is a 502."""
    status = getattr(exc, "status", None)
    if isinstance(status, int) and 400 <= status < 600 and status != 0:
        return UpstreamStatus(status, _status_message(exc), code=code)
    reason = type(exc).__name__
    return BadGateway(f"the cluster API server could not be reached ({reason})", code=code)


def _status_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str) and body:
        try:
            parsed = yamlio.load(body)  # JSON is YAML
        except yamlio.YAMLError:
            parsed = None
        message = parsed.get("message") if isinstance(parsed, dict) else None
        if isinstance(message, str):
            return message[:2000]
    return str(getattr(exc, "reason", None) or "the cluster refused the request")[:2000]
