"""repositories.yaml in Helm's own format, so the ``helm`` CLI and this service can share it.

Entries we did not write (credentials, TLS files added by ``helm repo add``) are kept as they are on
rewrite. Reading and writing are synchronous and small; writers take Helm's lock file. This module never
returns credentials to callers: :class:`Repository` carries only the name and URL.
"""

from __future__ import annotations

import fcntl
import os
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import yarl

from chartsvc.repos.files import write_atomic
from common import yamlio
from common.errors import BadRequest, WharfError
from common.netguard import AddressPolicy, url_pattern

#: A repository name: safe as a file-name prefix in the cache (``<name>-index.yaml``), so not
#: ``.`` or ``..``; the lookahead holds where a name ends the text or is followed by ``/`` (in a
#: chart reference). ECMA-262 and Python alike: the spec's ``RepositoryName`` is made of it.
NAME_PATTERN = r"(?!\.\.?(?:/|$))[A-Za-z0-9._-]{1,100}"
NAME = re.compile(NAME_PATTERN)
#: The URLs a repository is added under (an OCI registry is not one: its charts are referenced
#: directly), as the spec's ``RepositoryUrl`` states them.
URL_PATTERN = url_pattern(("http", "https"))


class InvalidRepositoryName(BadRequest, code="invalid-repository-name"): ...


class RepositoryFileCorrupt(WharfError, code="repository-file-corrupt"): ...


@attrs.frozen
class Repository:
    name: str
    url: str
    # Basic-auth credentials `helm repo add --username` stored; sent to the repository's own host
    # only, unless the entry says pass_credentials_all (Helm's rule). Never encoded or logged.
    credentials: tuple[str, str] | None = attrs.field(default=None, repr=False)
    pass_credentials_all: bool = False

    @classmethod
    def from_entry(cls, entry: dict[str, Any]) -> Repository:
        url, in_url = split_credentials(str(entry.get("url", "")))
        user, password = entry.get("username"), entry.get("password")
        return cls(
            name=str(entry.get("name", "")),
            url=url,
            credentials=(str(user), str(password or "")) if user else in_url,
            pass_credentials_all=bool(entry.get("pass_credentials_all", False)),
        )

    def credentials_for(self, url: str) -> tuple[str, str] | None:
        if self.credentials is None:
            return None
        same_host = yarl.URL(url).host == yarl.URL(self.url).host
        return self.credentials if same_host or self.pass_credentials_all else None


def check_name(name: str) -> str:
    """The name, if it is safe as a file-name prefix in the cache (``<name>-index.yaml``)."""
    if not NAME.fullmatch(name):
        raise InvalidRepositoryName(
            f"invalid repository name {name[:100]!r}: use 1-100 letters, digits, '.', '_' and '-' "
            "(not '.' or '..')",
            extra={"errors": [{"in": "body", "field": "name", "message": "is invalid"}]},
        )
    return name


#: How long a read of repositories.yaml is trusted before the file is checked for changes again:
#: an edit made outside the service (the helm CLI, an editor) shows in listings within this. The
#: check is a ``stat``: several microseconds, which every listing paid when it was made each time.
RECHECK_S = 1.0
_ABSENT = (-1, -1, -1)  # the stamp of a missing file


@attrs.define
class EntriesCache:
    """The repositories of the last read of repositories.yaml, reused while the file is the same.

    Every chart listing asks which repositories exist; the helm CLI may change the file at any
    time. Whether it did is checked at most once per ``recheck_s`` (or at once when asked
    ``fresh``) and parsed again only after a change. Both writers replace the file by rename, so the
    inode changes with every write even when mtime and size do not. The tuple handed out is the
    same object until the file is read again, so what is made of it may be kept as long.
    """

    recheck_s: float = RECHECK_S
    clock: Callable[[], float] = time.monotonic
    _stamp: tuple[int, int, int] | None = None
    _checked: float = 0.0  # when the stamp was last found current, by ``clock``
    _repos: tuple[Repository, ...] = ()

    def read(self, path: Path) -> tuple[Repository, ...]:
        """The repositories the file names now, parsed again only if it changed."""
        repos = self.unchanged(path, fresh=True)
        if repos is not None:
            return repos
        stamp = _stamp(path)
        self._repos = tuple(Repository.from_entry(entry) for entry in read_entries(path))
        self._stamp, self._checked = stamp, self.clock()
        return self._repos

    def unchanged(self, path: Path, *, fresh: bool = False) -> tuple[Repository, ...] | None:
        """The repositories read last unless the file changed since (then None). Within
        ``recheck_s`` of the last check the file is not looked at, unless ``fresh``."""
        now = self.clock()
        if self._stamp is not None and not fresh and now - self._checked < self.recheck_s:
            return self._repos
        if _stamp(path) != self._stamp:
            return None
        self._checked = now
        return self._repos

    def forget(self) -> None:
        """After our own write: a reused inode within one clock tick must not look unchanged."""
        self._stamp = None


def _stamp(path: Path) -> tuple[int, int, int]:
    try:
        stat = os.stat(path)  # pathlib's own stat adds a fifth to it
    except FileNotFoundError:
        return _ABSENT
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)


def check_url(policy: AddressPolicy, url: str) -> None:
    """An http(s) URL the address policy allows, or a 400 naming ``url``."""
    if policy.check_url(url).scheme not in ("http", "https"):
        raise BadRequest(
            "a chart repository URL must be http(s); use oci:// references directly "
            "in chartRef or pull instead of adding a registry",
            extra={"errors": [{"in": "body", "field": "url", "message": "must be http(s)"}]},
        )


def read_entries(path: Path) -> list[dict[str, Any]]:
    """The raw entries of repositories.yaml; an absent file is an empty list."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return []
    try:
        document = yamlio.load(text)
    except yamlio.YAMLError as exc:
        raise RepositoryFileCorrupt(f"{path.name} is not valid YAML") from exc
    if document is None:
        return []
    entries = document.get("repositories") or [] if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise RepositoryFileCorrupt(f"{path.name} has no repositories list")
    return [e for e in entries if isinstance(e, dict) and e.get("name")]


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """The URL without ``user:password@`` and those credentials. Listings need no key, so a URL
    with credentials in it must never be shown as it was given."""
    try:
        parsed = yarl.URL(url)
    except ValueError:
        return url, None
    if not parsed.user:
        return url, None
    return str(parsed.with_user(None)), (parsed.user, parsed.password or "")


def new_entry(name: str, url: str) -> dict[str, Any]:
    """An entry with every field ``helm repo add`` writes, so Helm reads it without surprises;
    credentials given inside the URL go where ``helm repo add --username`` puts them."""
    url, credentials = split_credentials(url)
    user, password = credentials or ("", "")
    return {
        "caFile": "",
        "certFile": "",
        "insecure_skip_tls_verify": False,
        "keyFile": "",
        "name": name,
        "pass_credentials_all": False,
        "password": password,
        "url": url,
        "username": user,
    }


def write_entries(path: Path, entries: list[dict[str, Any]]) -> None:
    document = {
        "apiVersion": "",
        "generated": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "repositories": entries,
    }
    text = yamlio.dump(document, sort_keys=True)
    write_atomic(path, text.encode("utf-8"))


Entries = list[dict[str, Any]]


def change_entries(path: Path, change: Callable[[Entries], Entries]) -> None:
    """Read, change and rewrite repositories.yaml under Helm's own lock file.

    ``helm repo add``/``remove`` take an exclusive lock on ``repositories.lock`` next to the file;
    taking the same lock keeps the CLI and the service from overwriting each other's changes.
    ``change`` may raise to abandon the write.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_suffix(".lock").open("a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            write_entries(path, change(read_entries(path)))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
