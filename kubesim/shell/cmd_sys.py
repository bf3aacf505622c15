"""System commands: ``sh``, ``env``, ``test``, ``expr``, ``sleep``, ``hostname``, ``id``, ``uname``,
``date``, ``ps``."""

from __future__ import annotations

import asyncio
import posixpath
import time
from typing import TYPE_CHECKING

from kubesim.shell import arith
from kubesim.shell.fs import FsError
from kubesim.shell.io import IO, say
from kubesim.shell.registry import COMMANDS, Usage, command

if TYPE_CHECKING:
    from kubesim.shell.session import Session

SHELLS = ("sh", "bash", "ash", "dash")


@command(*SHELLS)
async def sh_command(sh: Session, argv: list[str], io: IO) -> int:
    from kubesim.shell.tty import repl

    args = argv[1:]
    script: str | None = None
    while args and args[0].startswith("-") and args[0] not in ("-", "--"):
        opt = args.pop(0)
        if "c" in opt:
            if not args:
                raise Usage("-c requires an argument")
            script = args.pop(0)
    child = sh.copy()
    if script is not None:
        child.args = [args[0] if args else posixpath.basename(argv[0]), *args[1:]]
        return await child.run(script, io)
    if args and args[0] != "-":
        try:
            source = sh.fs.read(args[0], sh.cwd).decode(errors="replace")
        except FsError as exc:
            await say(io.stderr, f"{posixpath.basename(argv[0])}: can't open '{args[0]}': {exc}\n")
            return 127
        child.args = args
        return await child.run(source, io)
    return await repl(child, io)


@command("env", "printenv")
async def env(sh: Session, argv: list[str], io: IO) -> int:
    args = argv[1:]
    if argv[0].endswith("printenv") and args:
        values = [sh.env[a] for a in args if a in sh.env]
        await say(io.stdout, "".join(v + "\n" for v in values))
        return 0 if len(values) == len(args) else 1
    overrides = {}
    while args and "=" in args[0]:
        k, v = args.pop(0).split("=", 1)
        overrides[k] = v
    if args:
        child = sh.copy()
        child.env.update(overrides)
        return await child.call(args, io)
    merged = {**sh.env, **overrides}
    await say(io.stdout, "".join(f"{k}={v}\n" for k, v in merged.items()))
    return 0


@command("pwd")
async def pwd(sh: Session, argv: list[str], io: IO) -> int:
    await say(io.stdout, sh.cwd + "\n")
    return 0


@command("true")
async def true(sh: Session, argv: list[str], io: IO) -> int:
    return 0


@command("false")
async def false(sh: Session, argv: list[str], io: IO) -> int:
    return 1


def _test(sh: Session, args: list[str]) -> bool:
    if not args:
        return False
    if "-o" in args:
        i = args.index("-o")
        return _test(sh, args[:i]) or _test(sh, args[i + 1 :])
    if "-a" in args[1:]:
        i = args.index("-a", 1)
        return _test(sh, args[:i]) and _test(sh, args[i + 1 :])
    if args[0] == "!":
        return not _test(sh, args[1:])
    if len(args) == 1:
        return bool(args[0])
    if len(args) == 2:
        op, operand = args
        if op == "-z":
            return not operand
        if op == "-n":
            return bool(operand)
        try:
            node = sh.fs.lookup(operand, sh.cwd, follow=op != "-L")
        except FsError:
            return False
        return {
            "-e": True,
            "-f": node.kind == "-",
            "-d": node.is_dir,
            "-L": node.kind == "l",
            "-h": node.kind == "l",
            "-s": node.size > 0,
            "-r": True,
            "-w": True,
            "-x": bool(node.mode & 0o111),
        }.get(op, False)
    left, op, right = args[0], args[1], args[2]
    if op in ("=", "=="):
        return left == right
    if op == "!=":
        return left != right
    try:
        a, b = int(left), int(right)
    except ValueError:
        return False
    return {
        "-eq": a == b,
        "-ne": a != b,
        "-lt": a < b,
        "-le": a <= b,
        "-gt": a > b,
        "-ge": a >= b,
    }.get(op, False)


@command("test", "[")
async def test(sh: Session, argv: list[str], io: IO) -> int:
    args = argv[1:]
    if argv[0] == "[":
        if not args or args[-1] != "]":
            await say(io.stderr, "sh: missing ]\n")
            return 2
        args = args[:-1]
    return 0 if _test(sh, args) else 1


def _seconds(text: str) -> float:
    if text in ("inf", "infinity"):
        return float("inf")
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    unit = units.get(text[-1:], 0)
    try:
        return float(text[:-1] if unit else text) * (unit or 1)
    except ValueError:
        raise Usage(f"invalid number '{text}'") from None


@command("sleep")
async def sleep(sh: Session, argv: list[str], io: IO) -> int:
    if len(argv) < 2:
        raise Usage("missing operand")
    total = sum(_seconds(a) for a in argv[1:])
    if total == float("inf"):
        await asyncio.Event().wait()
    await asyncio.sleep(total * sh.host.sleep_scale)
    return 0


@command("expr")
async def expr(sh: Session, argv: list[str], io: IO) -> int:
    """Prints the value; status 1 when it is null or 0, 2 on a bad expression (as coreutils)."""
    try:
        value = arith.expr(argv[1:])
    except arith.ArithError as exc:
        await say(io.stderr, f"expr: {exc}\n")
        return 2
    await say(io.stdout, value + "\n")
    return 1 if value in ("", "0") else 0


@command("hostname")
async def hostname(sh: Session, argv: list[str], io: IO) -> int:
    value = sh.host.pod_ip if "-i" in argv else sh.host.hostname
    await say(io.stdout, value + "\n")
    return 0


@command("whoami")
async def whoami(sh: Session, argv: list[str], io: IO) -> int:
    await say(io.stdout, sh.host.user + "\n")
    return 0


@command("id")
async def id_(sh: Session, argv: list[str], io: IO) -> int:
    if sh.host.user == "root":
        text = "uid=0(root) gid=0(root) groups=0(root),1(bin),2(daemon),3(sys),4(adm),6(disk),10(wheel)"
    else:
        text = f"uid=1000({sh.host.user}) gid=1000({sh.host.user}) groups=1000({sh.host.user})"
    await say(io.stdout, text + "\n")
    return 0


@command("uname")
async def uname(sh: Session, argv: list[str], io: IO) -> int:
    parts = {
        "s": "Linux",
        "n": sh.host.hostname,
        "r": "6.8.0-48-generic",
        "v": "#48-Ubuntu SMP PREEMPT_DYNAMIC Fri Sep 27 14:04:52 UTC 2024",
        "m": "x86_64",
        "o": "GNU/Linux",
    }
    flags = "".join(a.lstrip("-") for a in argv[1:]) or "s"
    keys = "snrvmo" if "a" in flags else [k for k in "snrvmo" if k in flags]
    await say(io.stdout, " ".join(parts[k] for k in keys) + "\n")
    return 0


@command("date")
async def date(sh: Session, argv: list[str], io: IO) -> int:
    fmt = next((a[1:] for a in argv[1:] if a.startswith("+")), None)
    now = time.gmtime()
    if fmt is None and any(a.startswith("-I") for a in argv[1:]):
        fmt = "%Y-%m-%dT%H:%M:%S+00:00"
    await say(io.stdout, time.strftime(fmt or "%a %b %e %H:%M:%S UTC %Y", now) + "\n")
    return 0


@command("ps")
async def ps(sh: Session, argv: list[str], io: IO) -> int:
    rows = ["PID   USER     TIME  COMMAND"]
    for pid, cmd in sh.host.processes():
        rows.append(f"{pid:>5} {sh.host.user:<8}  0:00 {cmd}")
    await say(io.stdout, "\n".join(rows) + "\n")
    return 0


@command("kill")
async def kill(sh: Session, argv: list[str], io: IO) -> int:
    pids = {str(p) for p, _ in sh.host.processes()}
    for arg in [a for a in argv[1:] if not a.startswith("-")]:
        if arg not in pids:
            await say(io.stderr, f"sh: can't kill pid {arg}: No such process\n")
            return 1
    return 0


@command("which")
async def which(sh: Session, argv: list[str], io: IO) -> int:
    status = 0
    for name in argv[1:]:
        if name in COMMANDS:
            await say(
                io.stdout, f"/usr/bin/{name}\n" if name in ("env", "which") else f"/bin/{name}\n"
            )
        else:
            status = 1
    return status


@command("clear")
async def clear(sh: Session, argv: list[str], io: IO) -> int:
    await say(io.stdout, "\x1b[H\x1b[2J")
    return 0


@command("uptime")
async def uptime(sh: Session, argv: list[str], io: IO) -> int:
    clock = time.strftime("%H:%M:%S", time.gmtime())
    await say(io.stdout, f" {clock} up 3 days,  2:11,  0 users,  load average: 0.15, 0.20, 0.18\n")
    return 0


@command("free")
async def free(sh: Session, argv: list[str], io: IO) -> int:
    await say(
        io.stdout,
        "               total        used        free      shared  buff/cache   available\n"
        "Mem:        16374584     3418252     9104320        4216     4180668    12956332\n"
        "Swap:              0           0           0\n",
    )
    return 0
