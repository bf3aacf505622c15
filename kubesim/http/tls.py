"""A throwaway certificate authority and server certificate for the simulator, and its kubeconfig.

client-go sends no bearer token over plain HTTP, so a simulator that checks tokens must speak TLS.
Keys are ECDSA P-256: quick to generate, accepted by Go, Python and OpenSSL clients alike.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@attrs.frozen
class Certificates:
    ca_pem: bytes
    cert_path: Path
    key_path: Path

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert_path, self.key_path)
        return ctx


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
    """Write ``ca.crt``, ``server.crt`` and ``server.key`` (mode 0600) into ``directory``."""
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
    cert_path = directory / "server.crt"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    key_path = directory / "server.key"
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key_pem)
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
