"""A small built-in shell with an in-memory filesystem: what a simulated container runs.

``kubectl exec`` sessions, container ``command:`` scripts and Helm test hooks all run here. It is a
POSIX ``sh`` subset (see ``parse``) with BusyBox/coreutils-like commands (``cmd_*`` modules) over
a per-container :class:`FileSystem`. It never touches the host: no real files, processes or sockets.
"""

from kubesim.shell import (
    cmd_fileops,
    cmd_files,
    cmd_net,
    cmd_stat,
    cmd_sys,
    cmd_tar,
    cmd_text,
)
from kubesim.shell.builtins import ExitShell
from kubesim.shell.fs import FileSystem, FsError, Node
from kubesim.shell.host import Host, HttpReply, Network
from kubesim.shell.interp import Shell
from kubesim.shell.io import (
    IO,
    BufferWriter,
    BytesReader,
    FuncWriter,
    NullWriter,
    Pipe,
    Reader,
    Writer,
)
from kubesim.shell.registry import COMMANDS
from kubesim.shell.tty import TtyInput, TtyOutput, process_streams, repl

_COMMAND_MODULES = (cmd_fileops, cmd_files, cmd_net, cmd_stat, cmd_sys, cmd_tar, cmd_text)

__all__ = [
    "COMMANDS",
    "IO",
    "BufferWriter",
    "BytesReader",
    "ExitShell",
    "FileSystem",
    "FsError",
    "FuncWriter",
    "Host",
    "HttpReply",
    "Network",
    "Node",
    "NullWriter",
    "Pipe",
    "Reader",
    "Shell",
    "TtyInput",
    "TtyOutput",
    "Writer",
    "process_streams",
    "repl",
]
