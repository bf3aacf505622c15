"""``tar``: create, extract and list archives against the container's filesystem.

``kubectl cp`` runs ``tar cf - <path>`` in the pod to copy out and ``tar -xmf - -C <dir>`` to copy
in; a pod file browser streams directories the same way. Options can be bundled without a dash
(``tar xmf -``) like GNU tar accepts. Member names never escape the extraction directory.
"""

from __future__ import annotations

import io as iolib
import posixpath
import tarfile
from typing import TYPE_CHECKING

from kubesim.shell.cmd_files import owners
from kubesim.shell.fs import FsError, Node
from kubesim.shell.io import IO, say
from kubesim.shell.registry import Usage, command

if TYPE_CHECKING:
    from kubesim.shell.session import Session

_VALUED = "fCb"


def _parse(argv: list[str]) -> tuple[set[str], dict[str, str], list[str]]:
    args = list(argv[1:])
    flags: set[str] = set()
    vals: dict[str, str] = {}
    operands: list[str] = []
    pending: list[str] = []
    if args and not args[0].startswith("-"):
        bundle = args.pop(0)
        flags |= set(bundle)
        pending = [c for c in bundle if c in _VALUED]
    while args:
        arg = args.pop(0)
        if pending and (not arg.startswith("-") or arg == "-"):
            vals[pending.pop(0)] = arg
        elif arg.startswith("--"):
            name = arg[2:].split("=", 1)[0]
            if name == "directory":
                vals["C"] = arg.split("=", 1)[1] if "=" in arg else args.pop(0)
            elif name == "file":
                vals["f"] = arg.split("=", 1)[1] if "=" in arg else args.pop(0)
        elif arg.startswith("-") and len(arg) > 1:
            for i, c in enumerate(arg[1:]):
                flags.add(c)
                if c in _VALUED:
                    rest = arg[i + 2 :]
                    if rest:
                        vals[c] = rest
                    else:
                        pending.append(c)
                    break
        else:
            operands.append(arg)
    for c in pending:
        if c in flags and c not in vals:
            raise Usage(f"option requires an argument -- '{c}'")
    return flags, vals, operands


@command("tar")
async def tar(sh: Session, argv: list[str], io: IO) -> int:
    flags, vals, operands = _parse(argv)
    base = sh.fs.absolute(vals.get("C", "."), sh.cwd)
    mode = next((m for m in "cxt" if m in flags), "")
    if not mode:
        await say(
            io.stderr,
            "tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options\n",
        )
        return 2
    if mode == "c":
        return await _create(sh, io, flags, vals, operands, base)
    return await _extract(sh, io, flags, vals, base, list_only=mode == "t")


async def _create(
    sh: Session, io: IO, flags: set[str], vals: dict[str, str], operands: list[str], base: str
) -> int:
    if not operands:
        await say(io.stderr, "tar: Cowardly refusing to create an empty archive\n")
        return 2
    users, groups = owners(sh.fs)
    buf = iolib.BytesIO()
    status = 0
    with tarfile.open(
        fileobj=buf, mode="w:gz" if "z" in flags else "w", format=tarfile.GNU_FORMAT
    ) as archive:
        for path in operands:
            name = path.rstrip("/") or "/"
            if name.startswith("/"):
                await say(io.stderr, "tar: Removing leading `/' from member names\n")
            try:
                entries = sh.fs.walk(path, base)
            except FsError as exc:
                await say(io.stderr, f"tar: {path}: Cannot stat: {exc}\n")
                status = 2
                continue
            top = entries[0][0]
            for full, node in entries:
                arc = (name + full[len(top) :]).lstrip("/") or "."
                info = _info(arc, node, users, groups)
                archive.addfile(info, iolib.BytesIO(bytes(node.data)) if node.kind == "-" else None)
                if "v" in flags:
                    await say(io.stderr, arc + ("/" if node.is_dir else "") + "\n")
    data = buf.getvalue()
    target = vals.get("f", "-")
    if target == "-":
        await io.stdout.write(data)
    else:
        sh.fs.write(target, data, sh.cwd)
    return status


def _info(arc: str, node: Node, users: dict[int, str], groups: dict[int, str]) -> tarfile.TarInfo:
    info = tarfile.TarInfo(arc)
    info.mode, info.mtime, info.uid, info.gid = node.mode, int(node.mtime), node.uid, node.gid
    info.uname, info.gname = users.get(node.uid, ""), groups.get(node.gid, "")
    if node.is_dir:
        info.type = tarfile.DIRTYPE
    elif node.kind == "l":
        info.type, info.linkname = tarfile.SYMTYPE, node.target
    else:
        info.size = len(node.data)
    return info


def _safe(name: str) -> str:
    parts = [p for p in name.split("/") if p not in ("", ".", "..")]
    return "/".join(parts)


async def _extract(
    sh: Session, io: IO, flags: set[str], vals: dict[str, str], base: str, *, list_only: bool
) -> int:
    source = vals.get("f", "-")
    try:
        data = await io.stdin.read() if source == "-" else sh.fs.read(source, sh.cwd)
        archive = tarfile.open(fileobj=iolib.BytesIO(data), mode="r:*")  # noqa: SIM115
    except (FsError, tarfile.TarError) as exc:
        await say(io.stderr, f"tar: {exc}\ntar: Error is not recoverable: exiting now\n")
        return 2
    with archive:
        for member in archive.getmembers():
            name = _safe(member.name)
            if list_only or "v" in flags:
                await say(io.stdout, member.name + "\n")
            if list_only or not name:
                continue
            target = posixpath.join(base, name)
            try:
                _extract_one(sh, archive, member, target, keep_time="m" not in flags)
            except FsError as exc:
                await say(io.stderr, f"tar: {name}: Cannot open: {exc}\n")
                return 2
    return 0


def _extract_one(
    sh: Session, archive: tarfile.TarFile, member: tarfile.TarInfo, target: str, *, keep_time: bool
) -> None:
    parent = posixpath.dirname(target)
    sh.fs.mkdir(parent, parents=True)
    if member.isdir():
        node = sh.fs.mkdir(target, parents=True)
    elif member.issym():
        if sh.fs.exists(target) or _is_link(sh, target):
            sh.fs.remove(target, recursive=True)
        sh.fs.symlink(member.linkname, target)
        return
    else:
        handle = archive.extractfile(member)
        content = handle.read() if handle is not None else b""
        node = sh.fs.write(target, content)
    node.mode = member.mode & 0o7777
    if keep_time:
        node.mtime = float(member.mtime)


def _is_link(sh: Session, path: str) -> bool:
    try:
        return sh.fs.lookup(path, follow=False).kind == "l"
    except FsError:
        return False
