"""Builtins that change the shell itself: ``cd``, ``export``, ``unset``, ``exit``, ``exec``, ``read``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesim.shell.fs import FsError
from kubesim.shell.io import IO, say

if TYPE_CHECKING:
    from kubesim.shell.session import Session


class ExitShell(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Break(Exception):
    """``break`` leaving the innermost loop."""


async def _cd(sh: Session, argv: list[str], io: IO) -> int:
    target = argv[1] if len(argv) > 1 else sh.env.get("HOME", "/")
    if target == "-":
        target = sh.env.get("OLDPWD", sh.cwd)
    path = sh.fs.absolute(target, sh.cwd)
    try:
        node = sh.fs.lookup(path)
    except FsError as exc:
        await say(io.stderr, f"sh: cd: can't cd to {target}: {exc}\n")
        return 2
    if not node.is_dir:
        await say(io.stderr, f"sh: cd: can't cd to {target}: Not a directory\n")
        return 2
    sh.env["OLDPWD"], sh.cwd = sh.cwd, path
    sh.env["PWD"] = path
    return 0


async def _export(sh: Session, argv: list[str], io: IO) -> int:
    if len(argv) == 1 or argv[1] == "-p":
        for k in sorted(sh.env):
            await say(io.stdout, f"export {k}='{sh.env[k]}'\n")
    for arg in argv[1:]:
        if "=" in arg:
            k, v = arg.split("=", 1)
            sh.env[k] = v
    return 0


async def _unset(sh: Session, argv: list[str], io: IO) -> int:
    for arg in argv[1:]:
        sh.env.pop(arg, None)
    return 0


async def _exit(sh: Session, argv: list[str], io: IO) -> int:
    try:
        code = int(argv[1]) if len(argv) > 1 else sh.status
    except ValueError:
        await say(io.stderr, f"sh: exit: Illegal number: {argv[1]}\n")
        code = 2
    raise ExitShell(code & 0xFF)


async def _exec(sh: Session, argv: list[str], io: IO) -> int:
    if len(argv) == 1:
        return 0
    raise ExitShell(await sh.call(argv[1:], io))


async def _read(sh: Session, argv: list[str], io: IO) -> int:
    names = [a for a in argv[1:] if not a.startswith("-")] or ["REPLY"]
    line = await io.stdin.readline()
    if not line:
        return 1
    values = line.decode(errors="replace").rstrip("\n").split(maxsplit=len(names) - 1)
    for i, name in enumerate(names):
        sh.env[name] = values[i] if i < len(values) else ""
    return 0


async def _noop(sh: Session, argv: list[str], io: IO) -> int:
    return 0


async def _break(sh: Session, argv: list[str], io: IO) -> int:
    raise Break


async def _shift(sh: Session, argv: list[str], io: IO) -> int:
    n = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
    sh.args = sh.args[:1] + sh.args[1 + n :]
    return 0


BUILTINS = {
    "cd": _cd,
    "export": _export,
    "unset": _unset,
    "exit": _exit,
    "exec": _exec,
    "read": _read,
    "set": _noop,
    "trap": _noop,
    "ulimit": _noop,
    "umask": _noop,
    ":": _noop,
    "break": _break,
    "shift": _shift,
}
