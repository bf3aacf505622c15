"""The table of commands the shell can run, filled by the ``shell.cmd_*`` modules."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from kubesim.shell.fs import FsError
from kubesim.shell.io import say

if TYPE_CHECKING:
    from kubesim.shell.io import IO
    from kubesim.shell.session import Session

Command = Callable[["Session", list[str], "IO"], Awaitable[int]]
COMMANDS: dict[str, Command] = {}


def command(*names: str) -> Callable[[Command], Command]:
    def register(fn: Command) -> Command:
        for name in names:
            COMMANDS[name] = fn
        return fn

    return register


async def each_operand(
    io: IO, operands: list[str], failure: str, act: Callable[[str], None]
) -> int:
    """``act`` on every operand, as coreutils goes through them: a failing one is reported on
    stderr (``failure`` formatted with the operand and the error) and makes the status 1, and the
    rest are still done."""
    status = 0
    for operand in operands:
        try:
            act(operand)
        except FsError as exc:
            await say(io.stderr, failure.format(operand, exc) + "\n")
            status = 1
    return status


class Usage(Exception):
    """A command line a command cannot accept; printed as ``<cmd>: <message>``, status 1."""


def getopt(
    argv: list[str],
    flags: str,
    values: str = "",
    longs: dict[str, str] | None = None,
) -> tuple[set[str], dict[str, str], list[str]]:
    """Parse ``-abc``, ``-n 5``/``-n5`` and ``--long[=v]`` options; returns (flags, values, operands).

    ``longs`` maps a long option to its short letter (``"all": "a"``) or to itself when it has no
    short form; a long option that takes a value is written with a trailing ``=`` (``"format=": "c"``).
    """
    found: set[str] = set()
    vals: dict[str, str] = {}
    operands: list[str] = []
    longs = longs or {}
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            operands += argv[i:]
            break
        if arg.startswith("--") and len(arg) > 2:
            name, eq, value = arg[2:].partition("=")
            if name + "=" in longs:
                if not eq:
                    if i >= len(argv):
                        raise Usage(f"option '--{name}' requires an argument")
                    value, i = argv[i], i + 1
                vals[longs[name + "="]] = value
            elif name in longs:
                found.add(longs[name])
            else:
                raise Usage(f"unrecognized option '--{name}'")
            continue
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        j = 1
        while j < len(arg):
            c = arg[j]
            if c in values:
                value = arg[j + 1 :]
                if not value:
                    if i >= len(argv):
                        raise Usage(f"option requires an argument -- '{c}'")
                    value, i = argv[i], i + 1
                vals[c] = value
                break
            if c not in flags:
                raise Usage(f"invalid option -- '{c}'")
            found.add(c)
            j += 1
    return found, vals, operands
