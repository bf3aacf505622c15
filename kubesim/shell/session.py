"""What a command sees of the shell that runs it: its state and the few ways it may call back.

Builtins, commands, word expansion and the terminal loop take a :class:`Session`; the interpreter
(``interp.Shell``) is one. Keeping them on this protocol lets the interpreter import them without
any of them importing the interpreter.
"""

from __future__ import annotations

from typing import Protocol

from kubesim.shell.fs import FileSystem
from kubesim.shell.host import Host
from kubesim.shell.io import IO
from kubesim.shell.parse import Node


class Session(Protocol):
    fs: FileSystem
    env: dict[str, str]
    host: Host
    cwd: str
    status: int
    args: list[str]

    def copy(self) -> Session:
        """A subshell: the same filesystem and host, a copy of the environment."""
        ...

    async def run(self, src: str, io: IO) -> int:
        """Parse and run a script; ``exit`` ends it with its status."""
        ...

    async def execute(self, node: Node, io: IO) -> int:
        """Run a parsed syntax tree."""
        ...

    async def call(self, argv: list[str], io: IO) -> int:
        """Run one command line (a builtin, a registered command or the host's programs)."""
        ...

    async def capture(self, src: str) -> str:
        """Run ``src`` in a subshell and return its output, as ``$(...)`` does."""
        ...
