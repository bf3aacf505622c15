"""``stat``: GNU coreutils' default block and ``-c``/``--printf`` formats, which file browsers parse."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from kubesim.shell.cmd_files import owners
from kubesim.shell.fs import FsError, Node
from kubesim.shell.io import IO, say
from kubesim.shell.registry import command, getopt

if TYPE_CHECKING:
    from kubesim.shell.session import Session


def _file_type(node: Node) -> str:
    if node.kind == "d":
        return "directory"
    if node.kind == "l":
        return "symbolic link"
    return "regular file" if node.data else "regular empty file"


def stat_format(
    fmt: str, path: str, node: Node, users: tuple[dict[int, str], dict[int, str]]
) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S.000000000 +0000", time.gmtime(node.mtime))
    values = {
        "n": path,
        "N": f"'{path}'" + (f" -> '{node.target}'" if node.kind == "l" else ""),
        "s": str(node.size),
        "F": _file_type(node),
        "a": f"{node.mode:o}",
        "A": node.mode_string(),
        "u": str(node.uid),
        "g": str(node.gid),
        "U": users[0].get(node.uid, "UNKNOWN"),
        "G": users[1].get(node.gid, "UNKNOWN"),
        "Y": str(int(node.mtime)),
        "X": str(int(node.mtime)),
        "Z": str(int(node.mtime)),
        "W": "0",
        "y": stamp,
        "x": stamp,
        "z": stamp,
        "w": "-",
        "i": str(node.inode),
        "h": str(node.nlink),
        "b": str((node.size + 511) // 512),
        "B": "512",
        "o": "4096",
        "f": f"{node.mode | {'d': 0o040000, '-': 0o100000, 'l': 0o120000}[node.kind]:x}",
        "%": "%",
    }
    out, i = [], 0
    while i < len(fmt):
        if fmt[i] == "%" and i + 1 < len(fmt):
            out.append(values.get(fmt[i + 1], "?"))
            i += 2
        elif fmt[i] == "\\" and i + 1 < len(fmt):
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(fmt[i + 1], fmt[i + 1]))
            i += 2
        else:
            out.append(fmt[i])
            i += 1
    return "".join(out)


_STAT_DEFAULT = (
    "  File: %N\\n  Size: %-10s\\tBlocks: %-10b IO Block: 4096   %F\\n"
    "Device: 0,52\\tInode: %-11i Links: %h\\n"
    "Access: (0%a/%A)  Uid: (%u/%U)   Gid: (%g/%G)\\n"
    "Access: %x\\nModify: %y\\nChange: %z\\n Birth: -\\n"
)


@command("stat")
async def stat(sh: Session, argv: list[str], io: IO) -> int:
    flags, vals, paths = getopt(
        argv, "Lt", "c", longs={"format=": "c", "printf=": "p", "dereference": "L"}
    )
    users, status = owners(sh.fs), 0
    if not paths:
        await say(io.stderr, "stat: missing operand\n")
        return 1
    for p in paths:
        try:
            node = sh.fs.lookup(p, sh.cwd, follow="L" in flags)
        except FsError as exc:
            await say(io.stderr, f"stat: cannot statx '{p}': {exc}\n")
            status = 1
            continue
        if "p" in vals:
            await say(io.stdout, stat_format(vals["p"], p, node, users))
        elif "c" in vals:
            await say(io.stdout, stat_format(vals["c"], p, node, users) + "\n")
        else:
            text = stat_format(
                _STAT_DEFAULT.replace("%-10s", "%s").replace("%-10b", "%b").replace("%-11i", "%i"),
                p,
                node,
                users,
            )
            await say(io.stdout, text)
    return status
