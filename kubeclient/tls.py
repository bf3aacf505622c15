"""The TLS of cluster clients whose credentials give client certificates (exec plugins).

Each certificate becomes one TLS context when it arrives (:func:`client_tls`): the cluster's CA and
verification plus the pair, which is written to a private folder under the service's
``credentials`` folder only while OpenSSL loads it (OpenSSL reads keys from files), then removed.
:class:`CredentialSession` sends every request of a client with the current one. Nothing here
logs or echoes a certificate or key.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import attrs
from multidict import CIMultiDict

from common import private
from kubeclient.credentials import CredentialError, Credentials


def write_files(folder: Path, files: Mapping[str, bytes]) -> None:
    """Each of ``files`` (name -> content) created in ``folder``, readable only by us."""
    for name, content in files.items():
        fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private.FILE_MODE)
        with os.fdopen(fd, "wb") as out:
            out.write(content)


async def client_tls(
    cluster: Mapping[str, Any], workdir: Path, certificate: bytes, key: bytes
) -> ssl.SSLContext:
    """The TLS of the kubeconfig ``cluster`` (its CA, ``insecure-skip-tls-verify``) with a client
    certificate from the user's credentials (an exec plugin's): the pair is written to a private
    folder under ``workdir`` only while OpenSSL loads it."""
    authority = cluster.get("certificate-authority-data")
    context = ssl.create_default_context(
        cadata=base64.b64decode(authority).decode("ascii") if authority else None
    )
    if cluster.get("insecure-skip-tls-verify"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    folder = await asyncio.to_thread(private.private_temp_dir, workdir, "kube-")
    try:
        await asyncio.to_thread(write_files, folder, {"tls.crt": certificate, "tls.key": key})
        try:
            await asyncio.to_thread(
                context.load_cert_chain, folder / "tls.crt", keyfile=folder / "tls.key"
            )
        except (ssl.SSLError, ValueError):
            raise CredentialError(
                "the exec plugin's client certificate and key cannot be used together"
            ) from None
        return context
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)


@attrs.define
class CredentialSession:
    """kubernetes-asyncio's connection pool (an ``aiohttp.ClientSession``) sending every request
    and WebSocket upgrade with the TLS context of the credentials' current client certificate,
    when they have one. aiohttp keys pooled connections by that context, so a new certificate
    opens new connections while streams opened with the previous one go on undisturbed."""

    session: aiohttp.ClientSession
    credentials: Credentials

    @property
    def headers(self) -> Any:
        return self.session.headers

    @property
    def closed(self) -> bool:
        return self.session.closed

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        return self.session.request(method, url, **self._prepared(kwargs))

    def ws_connect(self, url: str, **kwargs: Any) -> Any:
        return self.session.ws_connect(url, **self._prepared(kwargs))

    async def close(self) -> None:
        await self.session.close()

    def _prepared(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        headers = kwargs.get("headers")
        if headers is not None and "authorization" in headers and not headers["authorization"]:
            # kubernetes-asyncio asks the credentials for a token before every request (which
            # is what renews them) and sets the header to None when they hold a certificate only.
            headers = CIMultiDict(headers)
            del headers["authorization"]
            kwargs = {**kwargs, "headers": headers}
        tls = self.credentials.tls
        return kwargs if tls is None else {**kwargs, "ssl": tls}
