"""A terminal for ``kubectl exec -it``: the pty's line discipline and the interactive shell loop.

With a TTY the client sends raw keystrokes and expects the remote side to echo them, edit the line
(backspace, Ctrl-U), turn Ctrl-C into an interrupt of the running command and Ctrl-D into end of
input, and translate ``\\n`` to ``\\r\\n`` on output -- what a kernel pty in cooked mode does.
Without a TTY, stdin is read line by line and run as it arrives, with no prompt.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from kubesim.shell.builtins import ExitShell
from kubesim.shell.io import IO, Pipe, Reader, Writer, say
from kubesim.shell.lex import ParseError
from kubesim.shell.parse import parse

if TYPE_CHECKING:
    from kubesim.shell.session import Session


class TtyOutput(Writer):
    """Output post-processing (``onlcr``)."""

    def __init__(self, raw: Writer) -> None:
        self.raw = raw

    async def write(self, data: bytes) -> None:
        await self.raw.write(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))


class TtyInput(Reader):
    """Cooked-mode input: keystrokes are processed as they arrive, lines are read whole."""

    def __init__(self, echo: Writer) -> None:
        self.echo = echo
        self._line = bytearray()
        self._cooked = bytearray()
        self._eof = False
        self._more = asyncio.Event()
        self._escape = b""
        self.foreground: asyncio.Task[int] | None = None
        self.columns, self.rows = 80, 24

    async def feed(self, data: bytes) -> None:
        out = bytearray()
        for b in data:
            ch = bytes([b])
            if self._escape or ch == b"\x1b":
                self._escape += ch  # cursor keys and other sequences: swallowed, no history here
                if len(self._escape) > 1 and (
                    self._escape[-1:].isalpha() or self._escape[-1:] == b"~"
                ):
                    self._escape = b""
                continue
            if ch in (b"\r", b"\n"):
                out += b"\r\n"
                self._cooked += bytes(self._line) + b"\n"
                self._line.clear()
            elif ch in (b"\x7f", b"\x08"):
                if self._line:
                    self._line.pop()
                    out += b"\b \b"
            elif ch == b"\x15":
                out += b"\b \b" * len(self._line)
                self._line.clear()
            elif ch == b"\x03":
                out += b"^C\r\n"
                self._line.clear()
                if self.foreground is not None and not self.foreground.done():
                    self.foreground.cancel()
                else:
                    self._cooked += b"\x03"
            elif ch == b"\x04":
                if not self._line:
                    self._eof = True
            elif ch == b"\t":
                continue
            elif b >= 0x20:
                self._line += ch
                out += ch
        if out:
            await self.echo.write(bytes(out))
        self._more.set()

    def feed_eof(self) -> None:
        self._eof = True
        self._more.set()

    def resize(self, columns: int, rows: int) -> None:
        self.columns, self.rows = columns, rows

    async def readline(self) -> bytes:
        while b"\n" not in self._cooked and b"\x03" not in self._cooked and not self._eof:
            self._more.clear()
            await self._more.wait()
        if self._cooked.startswith(b"\x03"):
            del self._cooked[:1]
            raise KeyboardInterrupt
        end = self._cooked.find(b"\n")
        if end < 0:
            if self._eof:
                self._eof = bool(self._cooked)  # a Ctrl-D on a non-empty line flushes it first
                out = bytes(self._cooked)
                self._cooked.clear()
                return out
            return b""
        out = bytes(self._cooked[: end + 1])
        del self._cooked[: end + 1]
        return out

    async def read(self, n: int = -1) -> bytes:
        chunks: list[bytes] = []
        while True:
            line = await self.readline()
            if not line:
                return b"".join(chunks)
            chunks.append(line)
            if 0 <= n <= sum(len(c) for c in chunks):
                return b"".join(chunks)


def process_streams(out: Writer, *, stdin: bool, tty: bool) -> tuple[Writer, Reader | None]:
    """A process's output and its standard input (None: it has none), as an exec session or a
    container sets them up: with a terminal, output goes through the pty and input through its line
    discipline, echoed on that output; without one, input is a pipe fed from outside."""
    if tty:
        out = TtyOutput(out)
    if not stdin:
        return out, None
    return out, TtyInput(out) if tty else Pipe()


def prompt(sh: Session) -> str:
    home = sh.env.get("HOME", "/root")
    where = "~" + sh.cwd[len(home) :] if sh.cwd.startswith(home) and home != "/" else sh.cwd
    return f"{where} {'#' if sh.host.user == 'root' else '$'} "


async def repl(sh: Session, io: IO) -> int:
    """Read commands from stdin and run them until EOF or ``exit``."""
    tty = io.stdin if isinstance(io.stdin, TtyInput) else None
    pending = ""
    while True:
        if tty is not None:
            await say(io.stdout, "> " if pending else prompt(sh))
        try:
            line = await io.stdin.readline()
        except KeyboardInterrupt:
            pending = ""
            continue
        if not line:
            return sh.status
        pending += line.decode(errors="replace")
        try:
            tree = parse(pending)
        except ParseError as exc:
            if exc.incomplete:
                continue
            await say(io.stderr, f"sh: {exc}\n")
            pending, sh.status = "", 2
            continue
        pending = ""
        task = asyncio.ensure_future(sh.execute(tree, io))
        if tty is not None:
            tty.foreground = task
        try:
            sh.status = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            sh.status = 130  # Ctrl-C interrupted the command, not the session
        except ExitShell as exc:
            return exc.code
        finally:
            if tty is not None:
                tty.foreground = None
