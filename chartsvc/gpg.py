"""The keyring of chart signers, read with the ``gpg`` binary (GnuPG, from the OS packages).

Helm verifies a ``.prov`` against a binary OpenPGP keyring and says who signed by user id only. This
adapter reads the configured keyring once (armoured or binary), in a private, throw-away GNUPGHOME
with no agent and no network, and keeps: each key's fingerprint, long key id and user ids, a binary
keyring file holding that key alone (to verify "signed by this key" with Helm), and one holding
them all. Blocking: call :meth:`Keyring.load` off the event loop, once. It does no cryptography of
its own and knows nothing of charts or HTTP.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import attrs

from common.config import ConfigError

GPG_TIMEOUT_S = 30
KEY = "chartsvc.security.keyring"


class GpgMissing(ConfigError):
    """The ``gpg`` binary is not installed: the keyring cannot be read on this machine."""


@attrs.frozen
class PublicKey:
    fingerprint: str  # 40 hex digits, upper case as gpg prints it
    user_ids: tuple[str, ...]
    keyring: Path  # a binary keyring with this key alone

    @property
    def key_id(self) -> str:
        return self.fingerprint[-16:]

    def named(self, key_id: str) -> bool:
        """Whether ``key_id`` (fingerprint, 16- or 8-digit key id, ``0x`` optional) is this key."""
        wanted = key_id.upper().removeprefix("0X")
        return len(wanted) in (8, 16, 40) and self.fingerprint.endswith(wanted)


@attrs.define
class Keyring:
    """The keys of a keyring file, each with its own keyring; :meth:`close` removes the copies."""

    path: Path  # every key, binary
    keys: tuple[PublicKey, ...]
    _workdir: Path

    @classmethod
    def load(cls, source: Path) -> Keyring:
        work = Path(tempfile.mkdtemp(prefix="wharf-keyring-"))
        try:
            return cls._read(source, work)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise

    @classmethod
    def _read(cls, source: Path, work: Path) -> Keyring:
        home = work / "gnupg"
        home.mkdir(mode=0o700)
        if not source.is_file():
            raise ConfigError(KEY, f"a file of OpenPGP public keys ({source.name} is not a file)")
        _gpg(home, "--import", str(source))
        listing = _gpg(home, "--with-colons", "--list-keys").decode("utf-8", "replace")
        keys = []
        for fingerprint, user_ids in _keys(listing):
            ring = work / f"{fingerprint}.gpg"
            ring.write_bytes(_gpg(home, "--export", fingerprint))
            keys.append(PublicKey(fingerprint, user_ids, ring))
        if not keys:
            raise ConfigError(KEY, f"a file of OpenPGP public keys ({source.name} holds none)")
        everything = work / "keyring.gpg"
        everything.write_bytes(_gpg(home, "--export"))
        return cls(everything, tuple(keys), work)

    def find(self, key_id: str) -> PublicKey | None:
        return next((k for k in self.keys if k.named(key_id)), None)

    def signed_by(self, user_ids: list[str]) -> list[PublicKey]:
        """The keys that carry one of ``user_ids`` (Helm names a signer by user id)."""
        return [k for k in self.keys if set(k.user_ids) & set(user_ids)]

    def close(self) -> None:
        shutil.rmtree(self._workdir, ignore_errors=True)


def _gpg(home: Path, *args: str) -> bytes:
    command = ["gpg", "--homedir", str(home), "--batch", "--no-tty", "--quiet", "--no-autostart"]
    try:
        done = subprocess.run(
            [*command, *args], capture_output=True, timeout=GPG_TIMEOUT_S, check=False
        )
    except FileNotFoundError:
        raise GpgMissing(KEY, "gpg (GnuPG) installed to read it") from None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["failed"]
        raise ConfigError(KEY, f"a keyring gpg can read (gpg: {reason[0][:200]})")
    return done.stdout


def _keys(listing: str) -> list[tuple[str, tuple[str, ...]]]:
    """(fingerprint, user ids) of each primary key in ``gpg --with-colons`` output."""
    found: list[tuple[str, list[str]]] = []
    expect_fingerprint = False
    for line in listing.splitlines():
        fields = line.split(":")
        if fields[0] == "pub":
            expect_fingerprint = True
        elif fields[0] == "fpr" and expect_fingerprint:
            found.append((fields[9], []))
            expect_fingerprint = False
        elif fields[0] == "uid" and found:
            found[-1][1].append(_unescape(fields[9]))
    return [(fpr, tuple(uids)) for fpr, uids in found]


def _unescape(text: str) -> str:
    r"""gpg's colon listings spell ``:`` and ``\`` in a user id as ``\x3a`` and ``\x5c``."""
    return text.replace("\\x3a", ":").replace("\\x5c", "\\")
