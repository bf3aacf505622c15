"""The shell interpreter: expands words and runs the syntax tree ``parse`` builds.

One :class:`Shell` is one ``sh`` process: its environment, working directory, last status and the
container's filesystem. Commands come from ``registry.COMMANDS``; a few that must change the shell
itself (``cd``, ``export``, ``exit``, ``read``...) are built in here. Pipelines run their stages one
after another through buffers, which is exact for the commands this shell offers.
"""

from __future__ import annotations

import posixpath

from kubesim.shell import arith, expand
from kubesim.shell import parse as ast
from kubesim.shell.builtins import BUILTINS, Break, ExitShell
from kubesim.shell.fs import FileSystem, FsError
from kubesim.shell.host import Host
from kubesim.shell.io import IO, BufferWriter, BytesReader, DevNull, FileWriter, Writer, say
from kubesim.shell.lex import ParseError, Word
from kubesim.shell.registry import COMMANDS, Usage

MAX_LOOP = 100_000


class Shell:
    def __init__(
        self,
        fs: FileSystem,
        env: dict[str, str],
        host: Host,
        *,
        cwd: str = "/",
        args: list[str] | None = None,
    ) -> None:
        self.fs = fs
        self.env = dict(env)
        self.host = host
        self.cwd = cwd
        self.status = 0
        self.args = args or ["sh"]
        self.env.setdefault("PWD", cwd)

    def copy(self) -> Shell:
        child = Shell(self.fs, self.env, self.host, cwd=self.cwd, args=list(self.args))
        child.status = self.status
        return child

    # -- entry points ---------------------------------------------------------------------------
    async def run(self, src: str, io: IO) -> int:
        """Parse and run a script; ``exit`` ends it with its status."""
        try:
            tree = ast.parse(src)
        except ParseError as exc:
            await say(io.stderr, f"sh: {exc}\n")
            self.status = 2
            return 2
        try:
            self.status = await self.execute(tree, io)
        except ExitShell as exc:
            self.status = exc.code
        except arith.ArithError as exc:  # fatal in a non-interactive sh, as in dash
            await say(io.stderr, f"sh: {exc}\n")
            self.status = 2
        return self.status

    async def run_program(self, argv: list[str], io: IO) -> int:
        """Run ``argv`` as a whole process (an exec session, a container's command); ``exit`` ends
        it with its status."""
        try:
            return await self.call(argv, io)
        except ExitShell as exc:
            return exc.code

    async def execute(self, node: ast.Node, io: IO) -> int:
        if isinstance(node, ast.Simple):
            status = await self._simple(node, io)
        elif isinstance(node, ast.Sequence):
            status = 0
            for item in node.items:
                status = await self.execute(item, io)
        elif isinstance(node, ast.AndOr):
            status = await self.execute(node.first, io)
            for op, nxt in node.rest:
                if (op == "&&") == (status == 0):
                    status = await self.execute(nxt, io)
        elif isinstance(node, ast.Pipeline):
            status = await self._pipeline(node, io)
        elif isinstance(node, ast.If):
            status = await self._if(node, io)
        elif isinstance(node, ast.For):
            status = await self._for(node, io)
        elif isinstance(node, ast.Loop):
            status = await self._loop(node, io)
        else:
            assert isinstance(node, ast.Group)
            io = await self._redirected(node.redirects, io)
            shell = self.copy() if node.subshell else self
            try:
                status = await shell.execute(node.body, io)
            except ExitShell as exc:
                if not node.subshell:
                    raise
                status = exc.code
        self.status = status
        return status

    # -- compound commands ----------------------------------------------------------------------
    async def _pipeline(self, node: ast.Pipeline, io: IO) -> int:
        data: bytes | None = None
        status = 0
        for i, cmd in enumerate(node.commands):
            last = i == len(node.commands) - 1
            out = io.stdout if last else BufferWriter()
            stage = (
                io.but(stdout=out) if data is None else io.but(stdin=BytesReader(data), stdout=out)
            )
            shell = self if len(node.commands) == 1 else self.copy()
            try:
                status = await shell.execute(cmd, stage)
            except ExitShell as exc:
                status = exc.code
            if isinstance(out, BufferWriter):
                data = bytes(out.data)
        return (0 if status else 1) if node.negate else status

    async def _if(self, node: ast.If, io: IO) -> int:
        for cond, body in node.branches:
            if await self.execute(cond, io) == 0:
                return await self.execute(body, io)
        if node.otherwise is not None:
            return await self.execute(node.otherwise, io)
        return 0

    async def _for(self, node: ast.For, io: IO) -> int:
        values: list[str] = []
        if node.words is None:
            values = self.args[1:]
        else:
            for w in node.words:
                values += await self.expand(w)
        status = 0
        for value in values:
            self.env[node.name] = value
            try:
                status = await self.execute(node.body, io)
            except Break:
                break
        return status

    async def _loop(self, node: ast.Loop, io: IO) -> int:
        status = 0
        for _ in range(MAX_LOOP):
            ok = await self.execute(node.cond, io) == 0
            if ok == node.until:
                return status
            try:
                status = await self.execute(node.body, io)
            except Break:
                return status
        return status

    # -- simple commands ------------------------------------------------------------------------
    async def _simple(self, node: ast.Simple, io: IO) -> int:
        argv: list[str] = []
        for w in node.words:
            argv += await self.expand(w)
        assigns = {name: await self.expand_one(w) for name, w in node.assigns}
        try:
            io = await self._redirected(node.redirects, io)
        except FsError as exc:
            await say(io.stderr, f"sh: {exc}\n")
            return 1
        if not argv:
            self.env.update(assigns)
            return 0
        saved = dict(self.env)
        self.env.update(assigns)
        try:
            return await self.call(argv, io)
        finally:
            if assigns and argv[0] not in ("export", "cd", "unset", "read"):
                self.env = {**saved, **{k: v for k, v in self.env.items() if k not in assigns}}

    async def _redirected(self, redirects: tuple[ast.Redirect, ...], io: IO) -> IO:
        for r in redirects:
            target = await self.expand_one(r.target) if r.target is not None else ""
            if r.op == "2>&1":
                io = io.but(stderr=io.stdout)
            elif r.op in (">&2", "1>&2"):
                io = io.but(stdout=io.stderr)
            elif r.op == "<":
                try:
                    io = io.but(stdin=BytesReader(self.fs.read(target, self.cwd)))
                except FsError as exc:
                    raise FsError(f"can't open '{target}': {exc}") from None
            else:
                writer = self._open(target, append=r.op.endswith(">>"))
                if r.op.startswith("2"):
                    io = io.but(stderr=writer)
                elif r.op == "&>":
                    io = io.but(stdout=writer, stderr=writer)
                else:
                    io = io.but(stdout=writer)
        return io

    def _open(self, path: str, *, append: bool) -> Writer:
        if path in ("/dev/null", "/dev/stdout", "/dev/stderr"):
            return DevNull()
        return FileWriter(self.fs, path, self.cwd, append=append)

    async def call(self, argv: list[str], io: IO) -> int:
        name = argv[0]
        builtin = BUILTINS.get(name)
        if builtin is not None:
            return await builtin(self, argv, io)
        fn = COMMANDS.get(posixpath.basename(name) if name.startswith("/") else name)
        if fn is None:
            if self.host.unknown is not None:
                return await self.host.unknown(self, argv, io)
            await say(io.stderr, f"sh: {name}: not found\n")
            return 127
        try:
            return await fn(self, argv, io)
        except Usage as exc:
            await say(io.stderr, f"{posixpath.basename(name)}: {exc}\n")
            return 1

    # -- expansion (see ``expand``) --------------------------------------------------------------
    def var(self, name: str) -> str:
        return expand.variable(self, name)

    async def expand(self, word: Word) -> list[str]:
        return await expand.fields(self, word)

    async def expand_one(self, word: Word) -> str:
        return " ".join(await expand.fields(self, word))

    async def capture(self, src: str) -> str:
        """Run ``src`` in a subshell and return its output, as ``$(...)`` does."""
        out = BufferWriter()
        child = self.copy()
        await child.run(src, IO(BytesReader(), out, DevNull()))
        self.status = child.status
        return out.data.decode(errors="surrogateescape").rstrip("\n")
