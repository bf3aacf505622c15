"""Cluster credentials that live: exec credential plugins, token files and static tokens, kept fresh.

kubernetes-asyncio runs exec plugins itself, but without ``provideClusterInfo``, ``interactiveMode``,
a time limit or serialisation, with the service's stdin handed to the plugin, and it refreshes only
when a caller runs its ``refresh_token`` loop; a token file is read once. So the bearer credential of
a kubeconfig user is ours: :class:`Credentials` holds it, renews it shortly before it expires (the
plugin's ``status.expirationTimestamp``; a token file when its content changes), and once when the
server answers 401 (:meth:`Credentials.renew`). Concurrent callers share one renewal: the plugin runs
once for all of them. A plugin may return a client certificate (and key) instead of or besides a
token: each one gets its own TLS context, made once when it arrives (:attr:`Credentials.tls`),
which the client sends its requests with. The plugin is a subprocess run through asyncio, with no
stdin and a time limit, so it can neither block the event loop nor wait for a person.

Nothing here logs or echoes a token, a key, a plugin's output or its stderr (which may hold either).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import os
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs

from common.errors import BadGateway

logger = logging.getLogger(__name__)

#: The ExecCredential versions a plugin may speak (v1alpha1 was removed in Kubernetes 1.24).
EXEC_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
#: How long a plugin may run. A plugin that waits for a browser login never ends on its own.
PLUGIN_TIMEOUT_S = 60.0
#: Most bytes of a plugin's output read (an ExecCredential is a few KB; certificates a few more).
MAX_OUTPUT = 1024 * 1024
#: Renew this long before expiry, at most half the credential's life (client-go renews at expiry;
#: a margin keeps a request from leaving with a token that dies on the way, and a busy machine
#: can take a good part of a second to get a request there).
RENEW_MARGIN_S = 10.0
#: How often a token file is looked at (its modification time and size) for a change.
TOKEN_FILE_CHECK_S = 1.0


class CredentialError(BadGateway, code="cluster-refused"):
    """The cluster's credentials could not be obtained (a plugin failed, a token file is gone)."""


@attrs.frozen
class Token:
    """What a source gives: a bearer token, a client certificate (PEM, with its key), or both."""

    value: str = attrs.field(repr=False)
    #: Unix time after which the server will refuse it; None: unknown (until refused).
    expires: float | None = None
    certificate: bytes | None = attrs.field(default=None, repr=False)
    key: bytes | None = attrs.field(default=None, repr=False)


#: Makes the TLS context of a client certificate and its key (PEM): the client's own TLS settings
#: (its CA, verification) plus that pair. Given by whoever builds the client (``kubeclient``).
TlsFactory = Callable[[bytes, bytes], Awaitable[ssl.SSLContext]]


class Source(Protocol):
    """Where a bearer token comes from."""

    async def fetch(self) -> Token: ...

    def changed(self) -> bool:
        """Whether the held token is known to be stale without asking the server."""
        ...


@attrs.define
class StaticToken:
    token: str = attrs.field(repr=False)

    async def fetch(self) -> Token:
        return Token(self.token)

    def changed(self) -> bool:
        return False


@attrs.define
class TokenFile:
    """``tokenFile``: re-read whenever the file's modification time or size changes."""

    path: Path
    _seen: tuple[int, int] | None = None
    _checked: float = 0.0

    async def fetch(self) -> Token:
        try:
            stamp, text = await asyncio.to_thread(self._read)
        except OSError:
            raise CredentialError(f"cannot read the token file {self.path.name!r}") from None
        self._seen, self._checked = stamp, time.monotonic()
        token = text.strip()
        if not token:
            raise CredentialError(f"the token file {self.path.name!r} is empty")
        return Token(token)

    def _read(self) -> tuple[tuple[int, int], str]:
        st = self.path.stat()
        return (st.st_mtime_ns, st.st_size), self.path.read_text("utf-8")

    def changed(self) -> bool:
        now = time.monotonic()
        if now - self._checked < TOKEN_FILE_CHECK_S:
            return False
        self._checked = now
        try:
            st = self.path.stat()
        except OSError:
            return True
        return (st.st_mtime_ns, st.st_size) != self._seen


@attrs.define
class ExecPlugin:
    """A kubeconfig ``exec`` entry: the plugin is run, its ExecCredential read."""

    api_version: str
    command: str
    args: tuple[str, ...] = attrs.field(default=(), repr=False)  # may carry a secret
    env: Mapping[str, str] = attrs.field(factory=dict, repr=False)
    #: The ``KUBERNETES_EXEC_INFO`` document handed to the plugin.
    exec_info: str = attrs.field(default="", repr=False)
    timeout_s: float = PLUGIN_TIMEOUT_S
    #: How many times the plugin ran.
    runs: int = 0

    @classmethod
    def from_kubeconfig(cls, entry: Mapping[str, Any], cluster: Mapping[str, Any]) -> ExecPlugin:
        version = entry.get("apiVersion")
        if version not in EXEC_VERSIONS:
            raise CredentialError(
                f"exec plugin apiVersion {version!r} is not one of {', '.join(EXEC_VERSIONS)}"
            )
        command = entry.get("command")
        if not isinstance(command, str) or not command:
            raise CredentialError("exec plugin entry has no command")
        args = entry.get("args") or []
        env = entry.get("env") or []
        if not isinstance(args, list) or not isinstance(env, list):
            raise CredentialError("exec plugin args and env must be lists")
        mode = entry.get("interactiveMode") or (
            "IfAvailable" if version.endswith("v1beta1") else ""
        )
        if mode not in ("Never", "IfAvailable", "Always"):
            raise CredentialError(
                "exec plugin interactiveMode must be Never, IfAvailable or Always"
            )
        if mode == "Always":  # a service has no terminal: such a plugin can never work here
            raise CredentialError(
                "exec plugin needs interaction (interactiveMode: Always), which a service "
                "cannot give; use a plugin that runs with interactiveMode: Never"
            )
        spec: dict[str, Any] = {"interactive": False}
        if entry.get("provideClusterInfo"):
            spec["cluster"] = cluster_info(cluster)
        info = {"apiVersion": version, "kind": "ExecCredential", "spec": spec}
        return cls(
            api_version=version,
            command=command,
            args=tuple(str(a) for a in args),
            env={str(e.get("name")): str(e.get("value", "")) for e in env if isinstance(e, dict)},
            exec_info=json.dumps(info),
        )

    async def fetch(self) -> Token:
        self.runs += 1
        # The plugin inherits the service's environment, as kubectl's plugins do (cloud CLIs
        # find their own configuration there), plus the kubeconfig's env entries.
        env = {**os.environ, **self.env, "KUBERNETES_EXEC_INFO": self.exec_info}
        try:
            proc = await asyncio.create_subprocess_exec(
                self.command,
                *self.args,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            raise CredentialError(
                f"exec plugin {Path(self.command).name!r} cannot be started ({type(exc).__name__})"
            ) from None
        try:
            async with asyncio.timeout(self.timeout_s):
                out, _ = await proc.communicate()
        except BaseException as exc:  # timed out, or the caller was cancelled: no orphan left
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.shield(proc.wait())
            if not isinstance(exc, TimeoutError):
                raise
            raise CredentialError(
                f"exec plugin {Path(self.command).name!r} did not answer within "
                f"{self.timeout_s:g}s (does it wait for an interactive login?)"
            ) from None
        if proc.returncode != 0:
            raise CredentialError(
                f"exec plugin {Path(self.command).name!r} failed with exit status {proc.returncode}"
            )
        return self._parse(out[:MAX_OUTPUT])

    def _parse(self, out: bytes) -> Token:
        name = Path(self.command).name
        try:
            doc = json.loads(out)
        except ValueError:
            raise CredentialError(f"exec plugin {name!r} printed no ExecCredential") from None
        if not isinstance(doc, dict) or doc.get("kind") != "ExecCredential":
            raise CredentialError(f"exec plugin {name!r} printed no ExecCredential")
        if doc.get("apiVersion") != self.api_version:
            raise CredentialError(
                f"exec plugin {name!r} answered {doc.get('apiVersion')!r}, "
                f"not the configured {self.api_version!r}"
            )
        status = doc.get("status")
        status = status if isinstance(status, dict) else {}
        token = status.get("token")
        token = token if isinstance(token, str) else ""
        cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
        if bool(cert) != bool(key) or not all(isinstance(v, str) for v in (cert or "", key or "")):
            raise CredentialError(
                f"exec plugin {name!r} must return clientCertificateData and clientKeyData "
                "together, as PEM text"
            )
        if not token and not cert:
            raise CredentialError(f"exec plugin {name!r} returned no token or client certificate")
        expires = _expiry(status.get("expirationTimestamp"), name)
        if not cert:
            return Token(token, expires)
        return Token(token, expires, certificate=str(cert).encode(), key=str(key).encode())

    def changed(self) -> bool:
        return False


def _expiry(stamp: Any, name: str) -> float | None:
    if stamp is None:
        return None
    try:
        when = datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        raise CredentialError(f"exec plugin {name!r} gave an invalid expirationTimestamp") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return when.timestamp()


def cluster_info(cluster: Mapping[str, Any]) -> dict[str, Any]:
    """The ExecCredential ``spec.cluster`` of a kubeconfig cluster (``provideClusterInfo``)."""
    info: dict[str, Any] = {"server": cluster.get("server", "")}
    for key in ("tls-server-name", "insecure-skip-tls-verify", "certificate-authority-data"):
        if cluster.get(key):
            info[key] = cluster[key]
    for key in ("proxy-url", "disable-compression"):
        if cluster.get(key):
            info[key] = cluster[key]
    for ext in cluster.get("extensions") or []:
        if isinstance(ext, dict) and ext.get("name") == "client.authentication.k8s.io/exec":
            info["config"] = ext.get("extension")
    return info


@attrs.define(eq=False)
class Credentials:
    """One kubeconfig user's bearer token, renewed before it expires and once per refusal."""

    source: Source
    _token: Token | None = attrs.field(default=None, repr=False)
    #: Bumped on every renewal; a caller that saw a 401 with generation N renews only if no one
    #: has renewed since (so many refused requests cause one plugin run, and never a loop).
    generation: int = 0
    _renew_at: float | None = None
    _lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    #: Builds the TLS context of a client certificate the source gives (:meth:`install`).
    _tls_factory: TlsFactory | None = None
    #: The TLS context of the current client certificate, made once per certificate; None: the
    #: client's own (the source gives tokens only).
    tls: ssl.SSLContext | None = attrs.field(default=None, repr=False)

    async def current(self) -> str:
        """A token believed valid now; renews first when it is about to expire or has changed."""
        token = self._token
        if token is None or self._stale(token) or self.source.changed():
            await self.renew(self.generation)
            token = self._token
        assert token is not None
        return token.value

    async def renew(self, seen: int) -> bool:
        """Renew unless someone did since ``seen``; whether a (possibly new) token is held."""
        async with self._lock:
            if self.generation != seen and self._token is not None:
                return True
            token = await self.source.fetch()
            tls = await self._tls_of(token)
            self._token, self._renew_at, self.tls = token, _renew_at(token), tls
            self.generation += 1
            logger.debug("cluster credentials renewed (%s)", type(self.source).__name__)
            return True

    async def _tls_of(self, token: Token) -> ssl.SSLContext | None:
        if token.certificate is None or token.key is None or self._tls_factory is None:
            return None  # a certificate fetched before install() gets its context there
        return await self._tls_factory(token.certificate, token.key)

    async def hook(self, configuration: Any) -> None:
        """kubernetes-asyncio's ``refresh_api_key_hook``: called before every request's headers."""
        configuration.api_key["BearerToken"] = await self.current()

    def _stale(self, token: Token) -> bool:
        return self._renew_at is not None and time.time() >= self._renew_at

    async def install(self, configuration: Any, tls: TlsFactory | None = None) -> None:
        """Make ``configuration`` (a kubernetes-asyncio one) ask this for its bearer token (none
        is sent while the source gives only a certificate); ``tls`` makes the TLS context of
        each client certificate the source gives (the client sends requests with :attr:`tls`)."""
        self._tls_factory = tls
        if self._token is not None and self.tls is None:
            self.tls = await self._tls_of(self._token)
        configuration.api_key["BearerToken"] = await self.current()
        configuration.api_key_prefix["BearerToken"] = "Bearer"
        configuration.refresh_api_key_hook = self.hook
        configuration.wharf_credentials = self


def _renew_at(token: Token) -> float | None:
    if token.expires is None:
        return None
    now = time.time()
    return token.expires - min(RENEW_MARGIN_S, max(0.0, token.expires - now) / 2)


@attrs.frozen
class Renewal:
    """What a request saw of its client's credentials before it was sent, so that a 401 renews
    them once (unless another request already did since) and the request is sent once more::

        renewal = Renewal.before(client)
        answer = await send()
        if answer.status == 401 and await renewal.renewed():
            answer = await send()  # once; a second 401 is the answer
    """

    credentials: Credentials | None
    generation: int

    @classmethod
    def before(cls, client: Any) -> Renewal:
        found = of_client(client)
        return cls(found, found.generation if found is not None else 0)

    async def renewed(self) -> bool:
        """Renew after a 401; False when the client's credentials are not ours to renew."""
        if self.credentials is None:
            return False
        return await self.credentials.renew(self.generation)


def of_client(client: Any) -> Credentials | None:
    """The :class:`Credentials` a kubernetes-asyncio ``ApiClient`` was built with, if any."""
    found = getattr(getattr(client, "configuration", None), "wharf_credentials", None)
    return found if isinstance(found, Credentials) else None


def for_user(user: Mapping[str, Any], cluster: Mapping[str, Any]) -> Credentials | None:
    """The credentials of a kubeconfig ``user`` entry we manage; None: none (certificates only,
    basic auth or an ``auth-provider``, which kubernetes-asyncio handles)."""
    if isinstance(user.get("exec"), Mapping):
        return Credentials(ExecPlugin.from_kubeconfig(user["exec"], cluster))
    if isinstance(user.get("token"), str) and user["token"]:
        return Credentials(StaticToken(user["token"]))
    if isinstance(user.get("tokenFile"), str) and user["tokenFile"]:
        return Credentials(TokenFile(Path(user["tokenFile"])))
    return None
