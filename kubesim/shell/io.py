"""Byte streams for the shell: what a command reads from and writes to.

A command sees ``stdin`` as a :class:`Reader` and ``stdout``/``stderr`` as :class:`Writer` s. The
exec session feeds a :class:`Pipe` from the WebSocket, pipelines connect commands through buffers,
redirections write into the container's filesystem.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import attrs

from kubesim.shell.fs import FileSystem


class Reader:
    async def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes (all until EOF when ``n`` < 0); ``b""`` at EOF."""
        raise NotImplementedError

    async def readline(self) -> bytes:
        """One line including its newline; ``b""`` at EOF."""
        raise NotImplementedError


class BytesReader(Reader):
    def __init__(self, data: bytes = b"") -> None:
        self.data = data
        self.pos = 0

    async def read(self, n: int = -1) -> bytes:
        end = len(self.data) if n < 0 else self.pos + n
        out = self.data[self.pos : end]
        self.pos += len(out)
        return out

    async def readline(self) -> bytes:
        end = self.data.find(b"\n", self.pos)
        end = len(self.data) if end < 0 else end + 1
        out = self.data[self.pos : end]
        self.pos = end
        return out


class Pipe(Reader):
    """Bytes arriving from elsewhere (a WebSocket), read as they come."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._eof = False
        self._more = asyncio.Event()

    def feed(self, data: bytes) -> None:
        self._buf += data
        self._more.set()

    def feed_eof(self) -> None:
        self._eof = True
        self._more.set()

    @property
    def at_eof(self) -> bool:
        return self._eof and not self._buf

    async def _wait(self) -> None:
        self._more.clear()
        await self._more.wait()

    async def read(self, n: int = -1) -> bytes:
        while not self._buf and not self._eof:
            await self._wait()
        if n < 0:
            while not self._eof:
                await self._wait()
            n = len(self._buf)
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    async def readline(self) -> bytes:
        while b"\n" not in self._buf and not self._eof:
            await self._wait()
        end = self._buf.find(b"\n")
        end = len(self._buf) if end < 0 else end + 1
        out = bytes(self._buf[:end])
        del self._buf[:end]
        return out


class Writer:
    async def write(self, data: bytes) -> None:
        raise NotImplementedError


class NullWriter(Writer):
    async def write(self, data: bytes) -> None:
        return None


class BufferWriter(Writer):
    def __init__(self) -> None:
        self.data = bytearray()

    async def write(self, data: bytes) -> None:
        self.data += data


class FuncWriter(Writer):
    def __init__(self, fn: Callable[[bytes], Awaitable[None]]) -> None:
        self.fn = fn

    async def write(self, data: bytes) -> None:
        if data:
            await self.fn(data)


class FileWriter(Writer):
    """``> path`` / ``>> path``: the file is created (or truncated) when the redirection opens."""

    def __init__(self, fs: FileSystem, path: str, cwd: str, *, append: bool) -> None:
        self.fs, self.path, self.cwd = fs, path, cwd
        fs.write(path, b"", cwd, append=append)

    async def write(self, data: bytes) -> None:
        self.fs.write(self.path, data, self.cwd, append=True)


class DevNull(Writer):
    async def write(self, data: bytes) -> None:
        return None


@attrs.frozen
class IO:
    stdin: Reader
    stdout: Writer
    stderr: Writer

    def but(self, **kw: Reader | Writer) -> IO:
        return attrs.evolve(self, **kw)  # type: ignore[arg-type]


async def say(w: Writer, text: str) -> None:
    # A name or text holding undecodable bytes (see ``cmd_text.unescape``) goes out as those bytes.
    await w.write(text.encode("utf-8", "surrogateescape"))
