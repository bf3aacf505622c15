"""Provenance: is this chart archive the one its author signed? ``helm verify`` over bytes.

A ``.prov`` is Helm's clear-signed document: the chart's Chart.yaml, a line ``...``, then
``files:`` naming the archive with its ``sha256:<hex>``, signed with OpenPGP. Helm itself checks the
signature and the digest (``chartsvc.helm``, against a binary keyring); the keys come from the
keyring file ``chartsvc.security.keyring``, read once (``chartsvc.gpg``), which also says which
key a signer's user id belongs to, and gives a keyring of one key when a request names it. Every
failure is a 400 ``provenance-failed`` with a one-word ``reason``. No cryptography here, no HTTP.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import attrs

from chartsvc.gpg import Keyring, PublicKey
from chartsvc.helm import ProvenanceFailed
from common import yamlio
from common.errors import ServiceUnavailable

_BEGIN = "-----BEGIN PGP SIGNED MESSAGE-----"
_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
#: What a signed file may be called: a plain archive name, so it can be saved as given.
_FILE_NAME = re.compile(r"^[A-Za-z0-9_+][A-Za-z0-9._+-]{0,250}\.tgz$")
MAX_PROVENANCE_BYTES = 1024 * 1024  # a Chart.yaml and a signature; Helm's own are a few KiB


class Verifier(Protocol):
    async def verify(
        self, archive: bytes, provenance: bytes, keyring: Any, *, file_name: str
    ) -> dict[str, Any]: ...


class ProvenanceUnavailable(ServiceUnavailable, code="provenance-unavailable"):
    """A check was asked, but the keyring could not be read on this machine (no ``gpg``)."""


@attrs.frozen
class Provenance:
    name: str
    version: str
    signer: str
    key: PublicKey
    digest: str
    file_name: str


@attrs.frozen
class Signed:
    """What a ``.prov`` says, before anyone checks it: the chart's metadata and the signed file."""

    metadata: dict[str, Any]
    file_name: str
    digest: str

    @classmethod
    def parse(cls, provenance: bytes) -> Signed:
        try:
            text = provenance.decode("utf-8")
        except UnicodeDecodeError:
            raise _invalid("it is not UTF-8 text") from None
        if _BEGIN not in text or _SIGNATURE not in text:
            raise _invalid("it is not a clear-signed document")
        body = text.split(_BEGIN, 1)[1].split(_SIGNATURE, 1)[0]
        body = body.split("\n\n", 1)[1] if "\n\n" in body else ""  # after the Hash: header
        lines = [line[2:] if line.startswith("- ") else line for line in body.splitlines()]
        chart, _, files = "\n".join(lines).partition("\n...\n")
        try:
            metadata, listed = yamlio.load(chart), (yamlio.load(files) or {}).get("files")
        except (yamlio.YAMLError, AttributeError):
            raise _invalid("its signed text is not Chart.yaml, '...', files:") from None
        if not isinstance(metadata, dict) or not isinstance(listed, dict) or len(listed) != 1:
            raise _invalid("its signed text does not name one chart archive")
        ((file_name, digest),) = listed.items()
        if not isinstance(file_name, str) or not _FILE_NAME.match(file_name):
            raise _invalid("the file it signs is not named like a chart archive")
        return cls(metadata, file_name, str(digest))


@attrs.define
class ProvenanceChecker:
    """``helm verify`` with the configured keyring (None: no keyring, nothing verifies)."""

    engine: Verifier
    keyring: Keyring | None
    #: Why the configured keyring could not be read (``gpg`` missing); None when it was, or
    #: when none is configured.
    unavailable: str | None = None

    async def verify(
        self, archive: bytes, provenance: bytes | None, *, key_id: str | None = None
    ) -> Provenance:
        if self.unavailable is not None:
            raise ProvenanceUnavailable(
                f"provenance cannot be checked on this server: {self.unavailable}"
            )
        if self.keyring is None:
            raise ProvenanceFailed(
                "no-keyring", "no keyring is configured (chartsvc.security.keyring)"
            )
        if not provenance:
            raise ProvenanceFailed("no-provenance", "the chart has no .prov file")
        if len(provenance) > MAX_PROVENANCE_BYTES:
            raise _invalid(f"it is larger than {MAX_PROVENANCE_BYTES} bytes")
        signed = Signed.parse(provenance)
        chosen = self.keyring.find(key_id) if key_id else None
        if key_id and chosen is None:
            raise ProvenanceFailed("unknown-key", f"key {key_id} is not in the keyring")
        ring = chosen.keyring if chosen is not None else self.keyring.path
        found = await self.engine.verify(archive, provenance, ring, file_name=signed.file_name)
        signers = [str(s) for s in found.get("signed_by") or []]
        key = chosen or await self._signer(archive, provenance, signed, signers)
        return Provenance(
            name=str(signed.metadata.get("name", "")),
            version=str(signed.metadata.get("version", "")),
            signer=signers[0] if signers else next(iter(key.user_ids), ""),
            key=key,
            digest=str(found.get("file_hash") or signed.digest),
            file_name=signed.file_name,
        )

    async def _signer(
        self, archive: bytes, provenance: bytes, signed: Signed, signers: list[str]
    ) -> PublicKey:
        """The key that signed: the one with the signer's user id; when several keys share it,
        the one whose own keyring verifies the signature."""
        assert self.keyring is not None
        candidates = self.keyring.signed_by(signers) or list(self.keyring.keys)
        for key in candidates[:-1]:
            try:
                await self.engine.verify(
                    archive, provenance, key.keyring, file_name=signed.file_name
                )
            except ProvenanceFailed:
                continue
            return key
        return candidates[-1]


def _invalid(why: str) -> ProvenanceFailed:
    return ProvenanceFailed("invalid-provenance", f"the .prov file is not Helm's format: {why}")
