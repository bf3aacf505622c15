"""A throwaway certificate authority and server certificate for the simulator, and its kubeconfig;
client certificates signed by that authority, and who such a certificate says its holder is.

client-go sends no bearer token over plain HTTP, so a simulator that checks tokens must speak TLS.
Keys are ECDSA P-256: quick to generate, accepted by Go, Python and OpenSSL clients alike. The
authority's key is kept (``ca.key``, 0600) next to its certificate so that a test's credential
plugin can issue client certificates, as a cloud's plugin gets them from its identity service.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import ssl
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: OpenSSL's ``X509_V_FLAG_NO_CHECK_TIME``: the handshake takes an expired client certificate of
#: the authority, so that the request is refused with 401 as kube-apiserver refuses it
#: (:func:`peer_user`), not with a TLS alert.
_NO_CHECK_TIME = 0x200000


@attrs.frozen
class Certificates:
    ca_pem: bytes
    cert_path: Path
    key_path: Path

    def server_context(self, *, client_certificates: bool = False) -> ssl.SSLContext:
        """The server's TLS; with ``client_certificates`` it asks for a client certificate
        signed by the authority (optional: a client may use a token instead)."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert_path, self.key_path)
        if client_certificates:
            ctx.verify_mode = ssl.CERT_OPTIONAL
            ctx.load_verify_locations(cadata=self.ca_pem.decode())
            ctx.verify_flags |= _NO_CHECK_TIME
        return ctx


def peer_user(peer: Mapping[str, Any] | None, *, now: float) -> tuple[str, tuple[str, ...]] | None:
    """(user, groups) of a verified client certificate (``getpeercert()``): the subject's common
    name and its organizations, as kube-apiserver reads them; None when there is none or it is
    outside its validity."""
    if not peer:
        return None
    try:
        if (
            not ssl.cert_time_to_seconds(peer["notBefore"])
            <= now
            <= ssl.cert_time_to_seconds(peer["notAfter"])
        ):
            return None
    except (KeyError, ValueError):
        return None
    fields = [pair for rdn in peer.get("subject", ()) for pair in rdn]
    names = [value for key, value in fields if key == "commonName"]
    groups = tuple(value for key, value in fields if key == "organizationName")
    return (names[0], groups) if names else None


def client_certificate(
    directory: Path, user: str, groups: Sequence[str], *, seconds: float
) -> tuple[bytes, bytes]:
    """(certificate, key) in PEM for ``user`` in ``groups``, valid ``seconds`` from now, signed
    by the authority :func:`generate` wrote into ``directory``."""
    ca = x509.load_pem_x509_certificate((directory / "ca.crt").read_bytes())
    ca_key = serialization.load_pem_private_key((directory / "ca.key").read_bytes(), None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    subject.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name(subject))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(seconds=30))
        .not_valid_after(now + datetime.timedelta(seconds=seconds))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pkcs8(key)


def _pkcs8(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _write_private(path: Path, content: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


_CA_USAGE = x509.KeyUsage(
    digital_signature=True,
    key_cert_sign=True,
    crl_sign=True,
    content_commitment=False,
    key_encipherment=False,
    data_encipherment=False,
    key_agreement=False,
    encipher_only=False,
    decipher_only=False,
)


def _builder(subject: str, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey) -> Any:
    start = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    return (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=365))
    )


def _sans(hosts: list[str]) -> list[x509.GeneralName]:
    sans: list[x509.GeneralName] = [
        x509.DNSName("localhost"),
        x509.DNSName("kubernetes"),
        x509.DNSName("kubernetes.default.svc"),
    ]
    for host in [*hosts, "127.0.0.1", "::1"]:
        try:
            name: x509.GeneralName = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            name = x509.DNSName(host)
        if name not in sans:
            sans.append(name)
    return sans


def generate(directory: Path, hosts: list[str]) -> Certificates:
    """Write ``ca.crt``, ``ca.key``, ``server.crt`` and ``server.key`` (keys 0600) into
    ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("wharf-kubesim-ca")
    ca = (
        _builder("wharf-kubesim-ca", ca_name, ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_CA_USAGE, critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        _builder("kube-apiserver", ca.subject, key.public_key())
        .add_extension(x509.SubjectAlternativeName(_sans(hosts)), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_pem = ca.public_bytes(serialization.Encoding.PEM)
    (directory / "ca.crt").write_bytes(ca_pem)
    _write_private(directory / "ca.key", _pkcs8(ca_key))
    cert_path = directory / "server.crt"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path = directory / "server.key"
    _write_private(key_path, _pkcs8(key))
    return Certificates(ca_pem, cert_path, key_path)


def write_kubeconfig(
    path: Path,
    *,
    server: str,
    context: str,
    token: str | None,
    ca_pem: bytes | None,
    namespace: str = "default",
    users: Mapping[str, str] | None = None,
) -> None:
    """Write a kubeconfig for one cluster, atomically and readable only by us: the context
    ``context`` (current) with ``token``, and a context ``<context>-<name>`` per entry of
    ``users`` (name -> its bearer token)."""
    cluster: dict[str, str] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    entries = [(context, {"token": token} if token else {})]
    entries += [(f"{context}-{name}", {"token": secret}) for name, secret in (users or {}).items()]
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": name, "user": user} for name, user in entries],
        "contexts": [
            {"name": name, "context": {"cluster": context, "user": name, "namespace": namespace}}
            for name, _ in entries
        ],
        "current-context": context,
        "preferences": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        yaml.safe_dump(doc, fh, sort_keys=False)
    tmp.replace(path)
