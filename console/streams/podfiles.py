"""Pod files: list, read, write and delete files in a container through its exec channel.

Each operation runs the image's own tools (``readlink -f``, ``stat -c``, ``find``, ``cat``,
``head -c``, ``mv``, ``rm``) as separate exec commands, never a shell line built from the path: the
path is always one argv element. A path must be absolute; it is checked against the allowed roots
as written and again after the container resolved its links, so neither ``..`` nor a symlink
leads out. Writes go to a temporary file next to the target and are renamed over it, so a reader
never sees half a file; a symlink at the target is replaced, never followed. Sizes are capped
before anything is read or sent.

This module must not know HTTP.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from datetime import UTC, datetime

import attrs

from common.errors import BadRequest, Conflict, Forbidden, NotFound, PayloadTooLarge
from console.resources.kubeapi import KubeApi
from console.streams.podexec import ExecRequest, Exit, Output, open_session

#: Most entries a listing returns (``truncated`` says when a directory had more).
MAX_ENTRIES = 2000
#: Paths given to one ``stat`` command.
STAT_BATCH = 200
MAX_PATH = 4096
#: Most bytes of a command's output kept that is not file content (listings, stat lines).
MAX_LISTING_BYTES = 4 * 1024 * 1024
UPLOAD_SUFFIX = ".wharf-upload"
_TYPES = {
    "regular file": "file",
    "regular empty file": "file",
    "directory": "directory",
    "symbolic link": "symlink",
}


class FilesDisabled(NotFound, code="files-disabled"): ...


class FilesReadOnly(Forbidden, code="files-read-only"): ...


class PathNotAllowed(Forbidden, code="path-not-allowed"): ...


class FileNotFound(NotFound, code="file-not-found"): ...


class FileTooLarge(PayloadTooLarge, code="file-too-large"): ...


class NotAFile(BadRequest, code="not-a-file"): ...


class NotADirectory(BadRequest, code="not-a-directory"): ...


class DirectoryNotEmpty(Conflict, code="directory-not-empty"): ...


class FilesFailed(BadRequest, code="files-failed"):
    """The container's tools refused (permission, a read-only filesystem, no such tool)."""


@attrs.frozen
class Limits:
    roots: tuple[str, ...]
    max_read: int
    max_write: int


@attrs.frozen
class Place:
    namespace: str
    pod: str
    container: str | None = None


@attrs.frozen
class Entry:
    name: str
    path: str
    type: str  # file, directory, symlink, other
    size: int
    mode: str
    modified: str


@attrs.frozen
class Skipped:
    """A directory entry a listing leaves out, and why: ``name`` with each byte that is not UTF-8
    written ``\\xNN`` (as ``ls -b`` writes it), so a person can find it by other means."""

    name: str
    reason: str


#: Why an entry is left out of a listing: a path is JSON text in every request, so a name that is
#: not UTF-8 could be neither shown as it is nor named again to read, write or delete it.
NOT_UTF8 = "its name is not UTF-8"


@attrs.frozen
class Listing:
    path: str
    entries: tuple[Entry, ...]
    truncated: bool
    skipped: tuple[Skipped, ...] = ()


@attrs.frozen
class _Run:
    out: bytes
    err: bytes
    code: int | None
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.code == 0


async def _run(
    api: KubeApi, place: Place, argv: Sequence[str], *, stdin: bytes = b"", limit: int
) -> _Run:
    """``argv`` in the container: its output (at most ``limit`` bytes, else ``FileTooLarge``)."""
    wanted = ExecRequest(place.namespace, place.pod, place.container, command=tuple(argv))
    out, err = bytearray(), bytearray()
    async with open_session(api, wanted) as session:
        if stdin:
            await session.stdin(stdin)
        await session.close_stdin()
        async for item in session.output():
            if isinstance(item, Output):
                (out if item.channel == 1 else err).extend(item.data)
                if len(out) > limit:
                    raise FileTooLarge(f"more than {limit} bytes: larger than the cap")
            elif isinstance(item, Exit):
                return _Run(bytes(out), bytes(err[:2000]), item.code, item.message)
    return _Run(bytes(out), bytes(err[:2000]), None, "the exec session ended without a status")


def _failed(run: _Run, path: str, what: str) -> Exception:
    text = (run.err.decode("utf-8", "replace") or run.message or "").strip()
    if "No such file" in text:
        return FileNotFound(f"{path}: no such file or directory")
    if "Not a directory" in text:
        return NotADirectory(f"{path}: not a directory")
    if "executable file not found" in text:
        return FilesFailed(f"the container cannot {what}: its image lacks the tools ({text[:300]})")
    return FilesFailed(f"{what} {path}: {text[:500] or f'exit code {run.code}'}")


def clean(path: str) -> str:
    """An absolute, normalised path (``..`` folded); a 400 for anything else."""
    if not path.startswith("/") or "\x00" in path or len(path) > MAX_PATH:
        raise BadRequest(f"path must be absolute, without NUL, at most {MAX_PATH} characters")
    normal = posixpath.normpath(path)
    return "/" if normal.startswith("//") else normal


def inside(path: str, roots: Sequence[str]) -> bool:
    for root in roots:
        base = posixpath.normpath(root)
        if base == "/" or path == base or path.startswith(base.rstrip("/") + "/"):
            return True
    return False


def _allow(path: str, limits: Limits) -> str:
    if not inside(path, limits.roots):
        raise PathNotAllowed(f"{path} is outside the allowed roots ({', '.join(limits.roots)})")
    return path


async def realpath(api: KubeApi, place: Place, path: str, limits: Limits) -> str:
    """``path`` with every link resolved by the container, within the roots."""
    lexical = _allow(clean(path), limits)
    run = await _run(api, place, ["readlink", "-f", "--", lexical], limit=MAX_PATH * 2)
    resolved = run.out.decode("utf-8", "replace").rstrip("\n")
    if not run.ok or not resolved.startswith("/"):
        raise FileNotFound(f"{lexical}: no such file or directory")
    if not inside(resolved, limits.roots):
        raise PathNotAllowed(f"{lexical} leads outside the allowed roots (to {resolved})")
    return resolved


async def locate(api: KubeApi, place: Place, path: str, limits: Limits) -> str:
    """``path``'s directory resolved and its last name kept as is (a link there is the link)."""
    lexical = _allow(clean(path), limits)
    if lexical == "/":
        return lexical
    parent = await realpath(api, place, posixpath.dirname(lexical), limits)
    return _allow(posixpath.join(parent, posixpath.basename(lexical)), limits)


async def _stat(
    api: KubeApi, place: Place, paths: Sequence[str], *, strict: bool = False
) -> list[Entry]:
    """The entries of ``paths`` that exist (links not followed); ``strict``: one must."""
    # ``-c``, not ``--printf``: busybox's stat has no --printf, so records end in a newline, which
    # a name may hold too; ``_stat_records`` reads them knowing the names.
    argv = ["stat", "-c", "%F|%s|%a|%Y|%n", "--", *paths]
    run = await _run(api, place, argv, limit=MAX_LISTING_BYTES)
    if not run.ok and strict:
        raise _failed(run, paths[0], "stat")
    return _stat_records(run.out, paths)


def _stat_records(out: bytes, paths: Sequence[str]) -> list[Entry]:
    """The records of ``stat -c '%F|%s|%a|%Y|%n' paths``: one per path stat could read, in the
    order given (a path it could not read has none). A record is its four fields, then the path
    as given and a newline, so it is matched against the path expected, never split at newlines
    a name may contain (or at a ``|``)."""
    entries, at = [], 0
    for path in paths:
        fields = _fields(out, at, 4)
        if fields is None:
            break
        (kind, size, mode, mtime), start = fields
        named = path.encode() + b"\n"
        if not out.startswith(named, start) or not size.isdigit() or not mtime.isdigit():
            continue  # no record for this path: the next one starts here
        at = start + len(named)
        stamp = datetime.fromtimestamp(int(mtime), UTC).isoformat().replace("+00:00", "Z")
        entries.append(
            Entry(
                name=posixpath.basename(path) or path,
                path=path,
                type=_TYPES.get(kind.decode(), "other"),
                size=int(size),
                mode=mode.decode().rjust(4, "0"),
                modified=stamp,
            )
        )
    return entries


def _fields(out: bytes, at: int, count: int) -> tuple[list[bytes], int] | None:
    """The ``count`` fields ending in ``|`` from ``at`` in ``out``, and where the rest starts."""
    fields = []
    for _ in range(count):
        end = out.find(b"|", at)
        if end < 0:
            return None
        fields.append(out[at:end])
        at = end + 1
    return fields, at


async def stat(api: KubeApi, place: Place, path: str) -> Entry:
    found = await _stat(api, place, [path], strict=True)
    if not found:
        raise FileNotFound(f"{path}: no such file or directory")
    return found[0]


async def list_dir(api: KubeApi, place: Place, path: str, limits: Limits) -> Listing:
    directory = await realpath(api, place, path, limits)
    if (await stat(api, place, directory)).type != "directory":
        raise NotADirectory(f"{directory} is not a directory")
    argv = ["find", directory, "-mindepth", "1", "-maxdepth", "1", "-print0"]
    run = await _run(api, place, argv, limit=MAX_LISTING_BYTES)
    if not run.ok:
        raise _failed(run, directory, "list")
    names, skipped = _found(run.out)
    shown = names[:MAX_ENTRIES]
    entries: list[Entry] = []
    for start in range(0, len(shown), STAT_BATCH):
        entries += await _stat(api, place, shown[start : start + STAT_BATCH])
    entries.sort(key=lambda e: (e.type != "directory", e.name))
    return Listing(directory, tuple(entries), truncated=len(names) > len(shown), skipped=skipped)


def _found(out: bytes) -> tuple[list[str], tuple[Skipped, ...]]:
    """``find -print0``'s paths, sorted (any byte but NUL may be in a name: newlines, tabs),
    and the entries whose name is not UTF-8, left out and reported (``NOT_UTF8``)."""
    names, skipped = [], []
    for raw in sorted(n for n in out.split(b"\x00") if n):
        try:
            names.append(raw.decode())
        except UnicodeDecodeError:
            shown = posixpath.basename(raw).decode("utf-8", "backslashreplace")
            skipped.append(Skipped(name=shown, reason=NOT_UTF8))
    return names, tuple(skipped)


async def read_file(api: KubeApi, place: Place, path: str, limits: Limits) -> tuple[str, bytes]:
    """The resolved path and the file's bytes (at most ``limits.max_read``)."""
    resolved = await realpath(api, place, path, limits)
    entry = await stat(api, place, resolved)
    if entry.type != "file":
        raise NotAFile(f"{resolved} is a {entry.type}, not a file")
    if entry.size > limits.max_read:
        raise FileTooLarge(f"{resolved} has {entry.size} bytes; the cap is {limits.max_read}")
    run = await _run(api, place, ["cat", "--", resolved], limit=limits.max_read)
    if not run.ok:
        raise _failed(run, resolved, "read")
    return resolved, run.out


async def write_file(
    api: KubeApi, place: Place, path: str, data: bytes, limits: Limits
) -> tuple[str, int]:
    """Replace (or create) the file at ``path`` with ``data``: written beside it, then renamed."""
    if len(data) > limits.max_write:
        raise FileTooLarge(f"{len(data)} bytes; the cap is {limits.max_write}")
    target = await locate(api, place, path, limits)
    existing = await _stat(api, place, [target]) if target != "/" else None
    if target == "/" or (existing and existing[0].type == "directory"):
        raise NotAFile(f"{target} is a directory")
    script = 'head -c "$1" > "$2$3" && mv -f -- "$2$3" "$2"'
    argv = ["sh", "-c", script, "sh", str(len(data)), target, UPLOAD_SUFFIX]
    run = await _run(api, place, argv, stdin=data, limit=MAX_PATH)
    if not run.ok:
        await _run(api, place, ["rm", "-f", "--", target + UPLOAD_SUFFIX], limit=MAX_PATH)
        raise _failed(run, target, "write")
    return target, len(data)


async def delete(api: KubeApi, place: Place, path: str, limits: Limits) -> Entry:
    """Remove a file or link (the link, not what it points to), or an empty directory."""
    target = await locate(api, place, path, limits)
    if target == "/" or any(posixpath.normpath(r) == target for r in limits.roots):
        raise PathNotAllowed(f"{target} is an allowed root: it is not deleted")
    entry = await stat(api, place, target)
    argv = ["rmdir", "--", target] if entry.type == "directory" else ["rm", "-f", "--", target]
    run = await _run(api, place, argv, limit=MAX_PATH)
    if not run.ok:
        text = run.err.decode("utf-8", "replace")
        if "not empty" in text.lower():
            raise DirectoryNotEmpty(f"{target} is a directory that is not empty")
        raise _failed(run, target, "delete")
    return entry
