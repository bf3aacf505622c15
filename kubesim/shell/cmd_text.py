"""Text commands: ``echo``, ``printf``, ``head``, ``tail``, ``wc``, ``grep``, ``sort`` and friends."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from kubesim.shell.fs import FsError
from kubesim.shell.io import IO, say
from kubesim.shell.registry import Usage, command, getopt

if TYPE_CHECKING:
    from kubesim.shell.session import Session

_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "0": "\0",
}


_NUMERIC_ESCAPE = re.compile(r"\\([0-7]{1,3}|x[0-9A-Fa-f]{1,2})")


def unescape(text: str) -> tuple[str, bool]:
    """Backslash escapes as ``echo -e`` reads them; the flag says ``\\c`` cut the output. A byte
    by number (``\\351``, ``\\xe9``) past ASCII is held as Python holds an undecodable byte
    (``surrogateescape``), so it is written out as that one byte: a name need not be UTF-8."""
    out: list[str] = []
    i = 0
    while i < len(text):
        numeric = _NUMERIC_ESCAPE.match(text, i)
        if numeric:
            digits = numeric.group(1)
            value = int(digits[1:], 16) if digits[0] == "x" else int(digits, 8)
            out.append(bytes([value & 0xFF]).decode("utf-8", "surrogateescape"))
            i = numeric.end()
        elif text[i] == "\\" and i + 1 < len(text):
            c = text[i + 1]
            if c == "c":
                return "".join(out), True
            out.append(_ESCAPES.get(c, "\\" + c))
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out), False


@command("echo")
async def echo(sh: Session, argv: list[str], io: IO) -> int:
    args, newline, escapes = argv[1:], True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0] or (escapes and "E" not in args[0])
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text, cut = unescape(text)
        newline = newline and not cut
    await say(io.stdout, text + ("\n" if newline else ""))
    return 0


@command("printf")
async def printf(sh: Session, argv: list[str], io: IO) -> int:
    if len(argv) < 2:
        raise Usage("usage: printf format [arguments]")
    fmt, args = unescape(argv[1])[0], argv[2:]
    out = []
    while True:

        def sub(m: re.Match[str]) -> str:
            if m.group(0) == "%%":
                return "%"
            value = args.pop(0) if args else ""
            spec = m.group(0)
            if spec[-1] in "di":
                return (
                    spec[:-1].replace("%", "%") % ()
                    if False
                    else (spec[:-1] + "d") % int(value or 0)
                )
            return (spec[:-1] + "s") % value

        out.append(re.sub(r"%%|%[-0-9.]*[sdib]", sub, fmt))
        if not args or "%" not in fmt:
            break
    await say(io.stdout, "".join(out))
    return 0


async def _inputs(
    sh: Session, paths: list[str], io: IO, cmd: str
) -> list[tuple[str, bytes | None]]:
    out: list[tuple[str, bytes | None]] = []
    for p in paths or ["-"]:
        try:
            out.append((p, await io.stdin.read() if p == "-" else sh.fs.read(p, sh.cwd)))
        except FsError as exc:
            await say(io.stderr, f"{cmd}: cannot open '{p}' for reading: {exc}\n")
            out.append((p, None))
    return out


def _count_arg(argv: list[str]) -> list[str]:
    """``head -5`` / ``tail -5`` mean ``-n 5``."""
    return [f"-n{a[1:]}" if re.fullmatch(r"-\d+", a) else a for a in argv]


@command("head", "tail")
async def head_tail(sh: Session, argv: list[str], io: IO) -> int:
    cmd = posixpath.basename(argv[0])
    flags, vals, paths = getopt(_count_arg(argv), "qvf", "nc", longs={"lines=": "n", "bytes=": "c"})
    inputs = await _inputs(sh, paths, io, cmd)
    status = 0
    for i, (p, data) in enumerate(inputs):
        if data is None:
            status = 1
            continue
        if len(inputs) > 1 and "q" not in flags:
            await say(io.stdout, ("\n" if i else "") + f"==> {p} <==\n")
        if "c" in vals:
            n = int(vals["c"].lstrip("+"))
            await io.stdout.write(data[:n] if cmd == "head" else data[-n:] if n else b"")
            continue
        spec = vals.get("n", "10")
        lines = data.splitlines(keepends=True)
        if cmd == "head":
            n = int(spec)
            chosen = lines[:n]
        elif spec.startswith("+"):
            chosen = lines[max(0, int(spec[1:]) - 1) :]
        else:
            n = abs(int(spec))
            chosen = lines[-n:] if n else []
        await io.stdout.write(b"".join(chosen))
    return status


@command("wc")
async def wc(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, paths = getopt(argv, "lwcm")
    flags = flags or {"l", "w", "c"}
    status = 0
    for p, data in await _inputs(sh, paths, io, "wc"):
        if data is None:
            status = 1
            continue
        counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data), "m": len(data)}
        cols = [str(counts[k]) for k in "lwmc" if k in flags]
        width = 1 if len(cols) == 1 and p == "-" else 7
        line = " ".join(c.rjust(width) for c in cols)
        await say(io.stdout, line + ("" if p == "-" else f" {p}") + "\n")
    return status


@command("grep", "egrep", "fgrep")
async def grep(sh: Session, argv: list[str], io: IO) -> int:
    flags, vals, args = getopt(argv, "ivncqlEFhHwsro", "e")
    pattern = vals.get("e")
    if pattern is None:
        if not args:
            raise Usage("usage: grep [OPTIONS] PATTERN [FILE]...")
        pattern = args.pop(0)
    if "F" in flags or argv[0].endswith("fgrep"):
        pattern = re.escape(pattern)
    elif "E" not in flags and not argv[0].endswith("egrep"):
        pattern = pattern.replace(r"\|", "|").replace(r"\(", "(").replace(r"\)", ")")
    if "w" in flags:
        pattern = rf"\b(?:{pattern})\b"
    rx = re.compile(pattern, re.IGNORECASE if "i" in flags else 0)
    found, status = False, 0
    inputs = await _inputs(sh, args, io, "grep")
    for p, data in inputs:
        if data is None:
            status = 2
            continue
        lines = data.decode(errors="replace").splitlines()
        hits = [
            (n, line) for n, line in enumerate(lines, 1) if bool(rx.search(line)) != ("v" in flags)
        ]
        found = found or bool(hits)
        if "q" in flags:
            continue
        prefix = f"{p}:" if (len(inputs) > 1 or "H" in flags) and "h" not in flags else ""
        if "l" in flags:
            if hits:
                await say(io.stdout, p + "\n")
        elif "c" in flags:
            await say(io.stdout, f"{prefix}{len(hits)}\n")
        else:
            for n, line in hits:
                await say(io.stdout, f"{prefix}{f'{n}:' if 'n' in flags else ''}{line}\n")
    return status or (0 if found else 1)


@command("sort")
async def sort(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, paths = getopt(argv, "rnuf")
    lines: list[str] = []
    for _, data in await _inputs(sh, paths, io, "sort"):
        lines += (data or b"").decode(errors="replace").splitlines()

    def key(line: str) -> tuple[float, str]:
        if "n" in flags:
            m = re.match(r"\s*(-?\d+(?:\.\d+)?)", line)
            return (float(m.group(1)) if m else 0.0, line)
        return (0.0, line.lower() if "f" in flags else line)

    lines.sort(key=key, reverse="r" in flags)
    if "u" in flags:
        lines = list(dict.fromkeys(lines))
    await say(io.stdout, "".join(line + "\n" for line in lines))
    return 0


@command("uniq")
async def uniq(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, paths = getopt(argv, "cdu")
    data = (await _inputs(sh, paths[:1], io, "uniq"))[0][1] or b""
    groups: list[list[str]] = []
    for line in data.decode(errors="replace").splitlines():
        if groups and groups[-1][0] == line:
            groups[-1].append(line)
        else:
            groups.append([line])
    for g in groups:
        if ("d" in flags and len(g) < 2) or ("u" in flags and len(g) > 1):
            continue
        await say(io.stdout, (f"{len(g):>7} " if "c" in flags else "") + g[0] + "\n")
    return 0


@command("tee")
async def tee(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, paths = getopt(argv, "a")
    data = await io.stdin.read()
    for p in paths:
        try:
            sh.fs.write(p, data, sh.cwd, append="a" in flags)
        except FsError as exc:
            await say(io.stderr, f"tee: {p}: {exc}\n")
    await io.stdout.write(data)
    return 0


@command("cut")
async def cut(sh: Session, argv: list[str], io: IO) -> int:
    _, vals, paths = getopt(argv, "s", "dfc")
    delim = vals.get("d", "\t")
    wanted = vals.get("f") or vals.get("c") or "1"
    picks: list[int] = []
    for part in wanted.split(","):
        lo, _, hi = part.partition("-")
        picks += list(range(int(lo or 1), int(hi or lo or 1) + 1)) if _ else [int(lo)]
    for _, data in await _inputs(sh, paths, io, "cut"):
        for line in (data or b"").decode(errors="replace").splitlines():
            items = list(line) if "c" in vals else line.split(delim)
            chosen = [items[i - 1] for i in picks if 0 < i <= len(items)]
            await say(io.stdout, ("" if "c" in vals else delim).join(chosen) + "\n")
    return 0


@command("tr")
async def tr(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, sets = getopt(argv, "d")
    text = (await io.stdin.read()).decode(errors="replace")
    if "d" in flags and sets:
        text = "".join(c for c in text if c not in sets[0])
    elif len(sets) == 2:
        table = {"a-z": "abcdefghijklmnopqrstuvwxyz", "A-Z": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
        src, dst = table.get(sets[0], sets[0]), table.get(sets[1], sets[1])
        text = text.translate(str.maketrans(src, dst[: len(src)].ljust(len(src), dst[-1:] or " ")))
    await say(io.stdout, text)
    return 0


@command("seq")
async def seq(sh: Session, argv: list[str], io: IO) -> int:
    nums = [int(a) for a in argv[1:4]]
    first, step, last = (
        (1, 1, nums[0])
        if len(nums) == 1
        else (nums[0], 1, nums[1])
        if len(nums) == 2
        else tuple(nums)
    )
    await say(
        io.stdout,
        "".join(f"{i}\n" for i in range(first, last + (1 if step > 0 else -1), step or 1)),
    )
    return 0


@command("basename", "dirname")
async def base_dir(sh: Session, argv: list[str], io: IO) -> int:
    if len(argv) < 2:
        raise Usage("missing operand")
    path = argv[1].rstrip("/") or "/"
    if argv[0].endswith("dirname"):
        await say(io.stdout, (posixpath.dirname(path) or ".") + "\n")
    else:
        name = posixpath.basename(path) or "/"
        if len(argv) > 2 and name.endswith(argv[2]) and name != argv[2]:
            name = name[: -len(argv[2])]
        await say(io.stdout, name + "\n")
    return 0
