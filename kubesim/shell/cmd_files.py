"""File commands: ``ls``, ``cat``, ``stat``, ``mkdir``, ``rm``, ``touch``, ``cp``, ``mv`` and friends.

Output follows GNU coreutils (what ``kubectl exec`` into a Debian-based image prints), which is what
a pod file browser parses: ``ls -la`` with a ``total`` line and aligned columns, ``stat`` with its
default block or a ``-c`` format.
"""

from __future__ import annotations

import posixpath
import time
from typing import TYPE_CHECKING

from kubesim.shell.fs import FileSystem, FsError, Node
from kubesim.shell.io import IO, say
from kubesim.shell.registry import command, each_operand, getopt

if TYPE_CHECKING:
    from kubesim.shell.session import Session

SIX_MONTHS = 182 * 86400


def owners(fs: FileSystem) -> tuple[dict[int, str], dict[int, str]]:
    """uid → user and gid → group from the container's /etc/passwd and /etc/group."""
    out: list[dict[int, str]] = []
    for path in ("/etc/passwd", "/etc/group"):
        table: dict[int, str] = {}
        try:
            for line in fs.read(path).decode(errors="replace").splitlines():
                parts = line.split(":")
                if len(parts) > 2 and parts[2].isdigit():
                    table[int(parts[2])] = parts[0]
        except FsError:
            pass
        out.append(table)
    return out[0], out[1]


def _when(mtime: float, style: str) -> str:
    t = time.gmtime(mtime)
    if style == "full-iso":
        return time.strftime("%Y-%m-%d %H:%M:%S.000000000 +0000", t)
    if style.startswith("+"):
        return time.strftime(style[1:], t)
    if abs(time.time() - mtime) > SIX_MONTHS:
        return time.strftime("%b %e  %Y", t)
    return time.strftime("%b %e %H:%M", t)


def human(n: int) -> str:
    for unit in ("", "K", "M", "G", "T"):
        if n < 1024 or unit == "T":
            return f"{n}{unit}" if unit == "" else f"{n:.1f}{unit}".replace(".0", "")
        n //= 1024
    return str(n)


@command("ls")
async def ls(sh: Session, argv: list[str], io: IO) -> int:
    flags, vals, paths = getopt(
        argv,
        "laA1hRdptrSF",
        longs={
            "all": "a",
            "almost-all": "A",
            "full-time": "T",
            "time-style=": "s",
            "color=": "C",
            "color": "C",
            "human-readable": "h",
            "directory": "d",
        },
    )
    style = "full-iso" if "T" in flags else vals.get("s", "")
    status, users = 0, owners(sh.fs)
    paths = paths or ["."]
    files: list[tuple[str, Node]] = []
    dirs: list[tuple[str, Node]] = []
    for p in paths:
        try:
            node = sh.fs.lookup(
                p, sh.cwd, follow=not ("l" in flags or "d" in flags) or p.endswith("/")
            )
        except FsError as exc:
            await say(io.stderr, f"ls: cannot access '{p}': {exc}\n")
            status = 2
            continue
        (dirs if node.is_dir and "d" not in flags else files).append((p, node))
    lines = _listing(sh, files, flags, style, users) if files else []
    for i, (p, node) in enumerate(dirs):
        if len(paths) > 1 or "R" in flags:
            lines.append(("" if not lines and i == 0 else "\n") + f"{p}:")
        entries = [
            (n, c)
            for n, c in node.children.items()
            if "a" in flags or "A" in flags or not n.startswith(".")
        ]
        if "a" in flags:
            entries = [(".", node), ("..", node), *entries]
        if "l" in flags:
            blocks = sum((c.size + 4095) // 4096 * 4 for _, c in entries)
            lines.append(f"total {blocks}")
        lines += _listing(sh, entries, flags, style, users)
        if "R" in flags:
            for name, child in sorted(node.children.items()):
                if child.is_dir and (not name.startswith(".") or "a" in flags):
                    await ls(sh, ["ls", *_flags(flags), posixpath.join(p, name)], io)
    text = "\n".join(lines)
    if text:
        await say(io.stdout, text + "\n")
    return status


def _flags(flags: set[str]) -> list[str]:
    return ["-" + "".join(sorted(flags))] if flags else []


def _listing(
    sh: Session,
    entries: list[tuple[str, Node]],
    flags: set[str],
    style: str,
    users: tuple[dict[int, str], dict[int, str]],
) -> list[str]:
    if "t" in flags:
        entries = sorted(entries, key=lambda e: -e[1].mtime)
    elif "S" in flags:
        entries = sorted(entries, key=lambda e: -e[1].size)
    else:
        entries = sorted(entries, key=lambda e: (e[0] not in (".", ".."), e[0].lstrip(".").lower()))
    if "r" in flags:
        entries.reverse()

    def name_of(name: str, node: Node) -> str:
        suffix = "/" if ("p" in flags or "F" in flags) and node.is_dir else ""
        return name + suffix

    if "l" not in flags:
        return [name_of(n, c) for n, c in entries]
    rows = []
    for name, node in entries:
        size = human(node.size) if "h" in flags else str(node.size)
        shown = name_of(name, node) + (f" -> {node.target}" if node.kind == "l" else "")
        rows.append(
            (
                node.mode_string(),
                str(node.nlink),
                users[0].get(node.uid, str(node.uid)),
                users[1].get(node.gid, str(node.gid)),
                size,
                _when(node.mtime, style),
                shown,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(6)] if rows else [0] * 6
    return [
        f"{r[0]} {r[1]:>{widths[1]}} {r[2]:<{widths[2]}} {r[3]:<{widths[3]}} "
        f"{r[4]:>{widths[4]}} {r[5]} {r[6]}"
        for r in rows
    ]


@command("cat")
async def cat(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, paths = getopt(argv, "nuA")
    status = 0
    for p in paths or ["-"]:
        try:
            data = await io.stdin.read() if p == "-" else sh.fs.read(p, sh.cwd)
        except FsError as exc:
            await say(io.stderr, f"cat: {p}: {exc}\n")
            status = 1
            continue
        if "n" in flags:
            lines = data.decode(errors="replace").splitlines(keepends=True)
            data = "".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, 1)).encode()
        await io.stdout.write(data)
    return status


@command("mkdir")
async def mkdir(sh: Session, argv: list[str], io: IO) -> int:
    flags, vals, paths = getopt(argv, "pv", "m", longs={"parents": "p"})
    mode = int(vals["m"], 8) if "m" in vals else 0o755

    def make(p: str) -> None:
        sh.fs.mkdir(p, sh.cwd, parents="p" in flags, mode=mode)

    return await each_operand(io, paths, "mkdir: cannot create directory '{}': {}", make)


@command("rm")
async def rm(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, paths = getopt(argv, "rRfvid", longs={"recursive": "r", "force": "f"})

    def remove(p: str) -> None:
        try:
            sh.fs.remove(p, sh.cwd, recursive=bool(flags & {"r", "R"}), dirs="d" in flags)
        except FsError as exc:
            if "f" not in flags or not str(exc).startswith("No such"):
                raise

    return await each_operand(io, paths, "rm: cannot remove '{}': {}", remove)


@command("rmdir")
async def rmdir(sh: Session, argv: list[str], io: IO) -> int:

    def remove(p: str) -> None:
        if not sh.fs.lookup(p, sh.cwd).is_dir:
            raise FsError("Not a directory")
        sh.fs.remove(p, sh.cwd, dirs=True)

    return await each_operand(io, getopt(argv, "p")[2], "rmdir: failed to remove '{}': {}", remove)


@command("touch")
async def touch(sh: Session, argv: list[str], io: IO) -> int:

    def stamp(p: str) -> None:
        if sh.fs.exists(p, sh.cwd):
            sh.fs.lookup(p, sh.cwd).mtime = time.time()
        else:
            sh.fs.write(p, b"", sh.cwd)

    return await each_operand(io, getopt(argv, "acm")[2], "touch: cannot touch '{}': {}", stamp)
