"""A real OCI registry on loopback for the OCI client tests, with the distribution token protocol.

Debian's ``docker-registry`` package is the reference registry (distribution 2.8). The session
fixture installs it when missing (root can here; nothing is skipped), generates an RSA key and a
self-signed certificate, and starts:

- a token server (aiohttp, in its own thread and loop so one server lives for the whole session)
  that issues RS256 JWTs carrying the certificate in the ``x5c`` header. The registry verifies the
  chain against ``rootcertbundle``, then ``iss``, ``aud`` (= its ``service``), ``exp``/``nbf`` and the
  ``access`` claim. User ``alice`` gets what she asks for; anonymous callers may pull ``public/*``;
  wrong passwords get 401.
- the registry itself, ``auth: token`` pointing at that server, storing blobs in a temporary dir.

Import the fixture explicitly (``from tests.chartsvc.fixtures_registry import registry``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime as dt
import json
import secrets
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from tests.addresses import free_port

USERS = {"alice": "wonderland-7"}
SERVICE = "wharf-test-registry"
ISSUER = "wharf-test-token-issuer"
PUBLIC_PREFIX = "public/"


def ensure_registry_binary() -> str:
    """The docker-registry binary, installed with apt when it is missing."""
    found = shutil.which("docker-registry")
    if found:
        return found
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env, timeout=600)
    subprocess.run(
        ["apt-get", "install", "-y", "-q", "docker-registry"], check=True, env=env, timeout=600
    )
    found = shutil.which("docker-registry")
    assert found, "apt-get installed docker-registry but it is not on PATH"
    return found


@attrs.frozen
class SigningKey:
    key: rsa.RSAPrivateKey
    cert: x509.Certificate

    @classmethod
    def generate(cls) -> SigningKey:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ISSUER)])
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )
        return cls(key, cert)

    def pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def jwt(self, claims: dict[str, Any]) -> str:
        der = self.cert.public_bytes(serialization.Encoding.DER)
        header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(der).decode()]}
        signing_input = f"{_b64url(_compact(header))}.{_b64url(_compact(claims))}"
        signature = self.key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input}.{_b64url(signature)}"


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TokenServer:
    """The registry's token service, in a thread of its own; ``requests`` records who asked what."""

    def __init__(self, signing: SigningKey) -> None:
        self.signing = signing
        self.requests: list[dict[str, Any]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="token-server", daemon=True)
        self._ready = threading.Event()

    @property
    def realm(self) -> str:
        return f"http://127.0.0.1:{self.port}/token"

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(10), "token server did not start"

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_get("/token", self._token)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = runner.addresses[0][1]
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())
        self._loop.close()

    async def _token(self, request: web.Request) -> web.Response:
        user = _basic_user(request.headers.get("Authorization"))
        scopes = request.query.getall("scope", [])
        self.requests.append(
            {"user": user, "scopes": scopes, "service": request.query.get("service")}
        )
        if user is False:
            return web.json_response({"details": "wrong credentials"}, status=401)
        access = [_grant(scope, user) for scope in scopes]
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": user or "",
            "aud": request.query.get("service", ""),
            "exp": now + 300,
            "nbf": now - 10,
            "iat": now,
            "jti": secrets.token_hex(8),
            "access": [a for a in access if a is not None],
        }
        token = self.signing.jwt(claims)
        return web.json_response({"token": token, "access_token": token, "expires_in": 300})


def _basic_user(header: str | None) -> str | bool | None:
    """The authenticated user, None for anonymous, False for wrong credentials."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    try:
        user, _, password = base64.b64decode(value).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return False
    if scheme.lower() != "basic" or USERS.get(user) != password:
        return False
    return user


def _grant(scope: str, user: str | bool | None) -> dict[str, Any] | None:
    kind, _, rest = scope.partition(":")
    name, _, actions = rest.rpartition(":")
    wanted = [a for a in actions.split(",") if a]
    if user is None:  # anonymous: pull on public/* only
        wanted = [a for a in wanted if a == "pull"] if name.startswith(PUBLIC_PREFIX) else []
    return {"type": kind, "name": name, "actions": wanted} if wanted else None


@attrs.frozen
class Registry:
    host: str
    token_server: TokenServer
    root: Path

    @property
    def oci(self) -> str:
        return f"oci://{self.host}"


def _registry_config(root: Path, port: int, realm: str, bundle: Path) -> str:
    return json.dumps(  # JSON is YAML; the registry reads either
        {
            "version": 0.1,
            "log": {"level": "warn", "accesslog": {"disabled": True}},
            "storage": {
                "filesystem": {"rootdirectory": str(root / "data")},
                "delete": {"enabled": True},
            },
            "http": {"addr": f"127.0.0.1:{port}", "secret": secrets.token_hex(16)},
            "auth": {
                "token": {
                    "realm": realm,
                    "service": SERVICE,
                    "issuer": ISSUER,
                    "rootcertbundle": str(bundle),
                }
            },
        },
        indent=2,
    )


def _wait_until_serving(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"docker-registry exited: {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=1)
            return
        except urllib.error.HTTPError as exc:
            if exc.code == 401:  # token auth is on: serving
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"docker-registry did not start: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    binary = ensure_registry_binary()
    root = tmp_path_factory.mktemp("registry")
    signing = SigningKey.generate()
    bundle = root / "root.pem"
    bundle.write_bytes(signing.pem())
    tokens = TokenServer(signing)
    tokens.start()
    port = free_port()
    config = root / "config.yml"
    config.write_text(_registry_config(root, port, tokens.realm, bundle))
    log = root / "registry.log"
    with log.open("wb") as sink:
        process = subprocess.Popen([binary, "serve", str(config)], stdout=sink, stderr=sink)
    try:
        _wait_until_serving(port, process, log)
        yield Registry(host=f"127.0.0.1:{port}", token_server=tokens, root=root)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        tokens.stop()
