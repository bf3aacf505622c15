"""More file commands: ``cp``, ``mv``, ``ln``, ``chmod``, ``readlink``, ``find``, ``df``, ``du``."""

from __future__ import annotations

import copy
import fnmatch
import posixpath
from typing import TYPE_CHECKING

from kubesim.shell.cmd_files import human
from kubesim.shell.fs import FsError
from kubesim.shell.io import IO, say
from kubesim.shell.registry import command, each_operand, getopt

if TYPE_CHECKING:
    from kubesim.shell.session import Session


@command("cp", "mv")
async def cp(sh: Session, argv: list[str], io: IO) -> int:
    name = posixpath.basename(argv[0])
    flags, _, paths = getopt(argv, "rRpafvn")
    if len(paths) < 2:
        await say(io.stderr, f"{name}: missing destination file operand\n")
        return 1
    *sources, dest = paths
    status = 0
    for src in sources:
        try:
            node = sh.fs.lookup(src, sh.cwd)
            if node.is_dir and name == "cp" and not flags & {"r", "R", "a"}:
                raise FsError(f"-r not specified; omitting directory '{src}'")
            target = dest
            if sh.fs.exists(dest, sh.cwd) and sh.fs.lookup(dest, sh.cwd).is_dir:
                target = posixpath.join(dest, posixpath.basename(src.rstrip("/")))
            sh.fs.attach(target, copy.deepcopy(node) if name == "cp" else node, sh.cwd)
            if name == "mv":
                sh.fs.remove(src, sh.cwd, recursive=True)
        except FsError as exc:
            await say(
                io.stderr,
                f"{name}: {exc}\n"
                if "omitting" in str(exc)
                else f"{name}: cannot stat '{src}': {exc}\n",
            )
            status = 1
    return status


@command("ln")
async def ln(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, paths = getopt(argv, "sfnv")
    if len(paths) != 2:
        await say(io.stderr, "ln: missing file operand\n")
        return 1
    try:
        if "f" in flags and sh.fs.exists(paths[1], sh.cwd):
            sh.fs.remove(paths[1], sh.cwd)
        if "s" in flags:
            sh.fs.symlink(paths[0], paths[1], sh.cwd)
        else:
            sh.fs.attach(paths[1], sh.fs.lookup(paths[0], sh.cwd), sh.cwd)
    except FsError as exc:
        await say(io.stderr, f"ln: failed to create link '{paths[1]}': {exc}\n")
        return 1
    return 0


@command("chmod")
async def chmod(sh: Session, argv: list[str], io: IO) -> int:
    _, _, args = getopt(argv, "Rv")
    if len(args) < 2:
        await say(io.stderr, "chmod: missing operand\n")
        return 1
    mode = args[0]

    def change(p: str) -> None:
        node = sh.fs.lookup(p, sh.cwd)
        if mode.isdigit():
            node.mode = int(mode, 8)
        elif mode.endswith("+x"):
            node.mode |= 0o111
        elif mode.endswith("-x"):
            node.mode &= ~0o111

    return await each_operand(io, args[1:], "chmod: cannot access '{}': {}", change)


@command("readlink", "realpath")
async def readlink(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, paths = getopt(argv, "fenmqsz")
    status = 0
    for p in paths:
        try:
            if "f" in flags or "e" in flags or "m" in flags or argv[0].endswith("realpath"):
                if "e" in flags:
                    sh.fs.lookup(p, sh.cwd)
                await say(io.stdout, sh.fs.realpath(p, sh.cwd) + "\n")
            else:
                node = sh.fs.lookup(p, sh.cwd, follow=False)
                if node.kind != "l":
                    status = 1
                    continue
                await say(io.stdout, node.target + "\n")
        except FsError:
            status = 1
    return status


@command("find")
async def find(sh: Session, argv: list[str], io: IO) -> int:
    args = argv[1:]
    roots = []
    while args and not args[0].startswith("-"):
        roots.append(args.pop(0))
    tests: dict[str, str] = {}
    end = "\n"
    while args:
        opt = args.pop(0)
        if opt in ("-print", "-print0"):
            end = "\0" if opt == "-print0" else end
            continue
        tests[opt] = args.pop(0) if args else ""
    status = 0
    for root in roots or ["."]:
        try:
            entries = sh.fs.walk(root, sh.cwd)
        except FsError as exc:
            await say(io.stderr, f"find: '{root}': {exc}\n")
            status = 1
            continue
        base_depth = root.rstrip("/").count("/")
        for path, node in entries:
            shown = (
                root.rstrip("/") + path[len(sh.fs.absolute(root, sh.cwd).rstrip("/")) :]
                if root != "/"
                else path
            )
            depth = shown.rstrip("/").count("/") - base_depth
            if "-maxdepth" in tests and depth > int(tests["-maxdepth"]):
                continue
            if "-mindepth" in tests and depth < int(tests["-mindepth"]):
                continue
            if "-type" in tests and node.kind != {"f": "-", "d": "d", "l": "l"}.get(tests["-type"]):
                continue
            if "-name" in tests and not fnmatch.fnmatchcase(
                posixpath.basename(path) or "/", tests["-name"]
            ):
                continue
            await say(io.stdout, (shown or root) + end)
    return status


@command("df")
async def df(sh: Session, argv: list[str], io: IO) -> int:
    await say(
        io.stdout,
        "Filesystem     1K-blocks    Used Available Use% Mounted on\n"
        "overlay        102626232 8123412  89243868   9% /\n"
        "tmpfs              65536       0     65536   0% /dev\n"
        "shm                65536       0     65536   0% /dev/shm\n",
    )
    return 0


@command("du")
async def du(sh: Session, argv: list[str], io: IO) -> int:
    flags, _, paths = getopt(argv, "shac")
    for p in paths or ["."]:
        try:
            total = sum(n.size for _, n in sh.fs.walk(p, sh.cwd) if not n.is_dir)
        except FsError as exc:
            await say(io.stderr, f"du: cannot access '{p}': {exc}\n")
            return 1
        kib = (total + 1023) // 1024
        await say(io.stdout, f"{human(total) if 'h' in flags else kib}\t{p}\n")
    return 0
