"""An in-memory POSIX-like filesystem: one per simulated container.

Directories, regular files and symlinks with mode bits, owner and modification time; paths are
resolved like the kernel does (``.``/``..``, symlinks followed up to a limit). Errors carry the
``strerror`` text the real commands print ("No such file or directory"). It knows nothing of the
shell or of Kubernetes; ``shell.image`` fills it with what a container would contain.
"""

from __future__ import annotations

import posixpath
import stat as stat_mod
import time

import attrs

MAX_LINKS = 40


class FsError(Exception):
    """A failed filesystem operation; ``str()`` is the errno text."""


ENOENT = "No such file or directory"
ENOTDIR = "Not a directory"
EISDIR = "Is a directory"
EEXIST = "File exists"
ENOTEMPTY = "Directory not empty"
ELOOP = "Symbolic link loop"


@attrs.define(eq=False)
class Node:
    kind: str  # "d" directory, "-" regular file, "l" symlink
    mode: int
    uid: int = 0
    gid: int = 0
    mtime: float = attrs.field(factory=time.time)
    data: bytearray = attrs.field(factory=bytearray)
    children: dict[str, Node] = attrs.field(factory=dict)
    target: str = ""
    inode: int = 0

    @property
    def is_dir(self) -> bool:
        return self.kind == "d"

    @property
    def size(self) -> int:
        if self.kind == "d":
            return 4096
        if self.kind == "l":
            return len(self.target)
        return len(self.data)

    @property
    def nlink(self) -> int:
        return 2 + sum(1 for c in self.children.values() if c.is_dir) if self.is_dir else 1

    def mode_string(self) -> str:
        bits = {"d": stat_mod.S_IFDIR, "-": stat_mod.S_IFREG, "l": stat_mod.S_IFLNK}[self.kind]
        return stat_mod.filemode(bits | self.mode)


class FileSystem:
    def __init__(self, *, mtime: float | None = None) -> None:
        self._inodes = 0
        self.root = self._node("d", 0o755, mtime=mtime)

    def _node(self, kind: str, mode: int, *, mtime: float | None = None, uid: int = 0) -> Node:
        self._inodes += 1
        node = Node(kind, mode, uid=uid, gid=uid, inode=self._inodes)
        if mtime is not None:
            node.mtime = mtime
        return node

    # -- path resolution ----------------------------------------------------------------------
    @staticmethod
    def absolute(path: str, cwd: str = "/") -> str:
        return posixpath.normpath(posixpath.join(cwd, path or ".")).replace("//", "/")

    def _walk(self, path: str, cwd: str, *, follow_last: bool) -> Node:
        full = self.absolute(path, cwd)
        for _ in range(MAX_LINKS):
            parts = [p for p in full.split("/") if p]
            node, restart = self.root, None
            for i, part in enumerate(parts):
                if not node.is_dir:
                    raise FsError(ENOTDIR)
                child = node.children.get(part)
                if child is None:
                    raise FsError(ENOENT)
                last = i == len(parts) - 1
                if child.kind == "l" and (follow_last or not last):
                    base = "/" + "/".join(parts[:i])
                    rest = "/".join(parts[i + 1 :])
                    restart = self.absolute(posixpath.join(child.target, rest), base)
                    break
                node = child
            if restart is None:
                return node
            full = restart
        raise FsError(ELOOP)

    def lookup(self, path: str, cwd: str = "/", *, follow: bool = True) -> Node:
        return self._walk(path, cwd, follow_last=follow)

    def exists(self, path: str, cwd: str = "/") -> bool:
        try:
            self.lookup(path, cwd)
        except FsError:
            return False
        return True

    def realpath(self, path: str, cwd: str = "/") -> str:
        """``readlink -f``: the absolute path with every symlink resolved."""
        parts = [p for p in self.absolute(path, cwd).split("/") if p]
        out: list[str] = []
        for _ in range(MAX_LINKS):
            if not parts:
                return "/" + "/".join(out)
            part = parts.pop(0)
            current = "/" + "/".join([*out, part])
            try:
                node = self.lookup(current, follow=False)
            except FsError:
                if parts:
                    raise
                return current
            if node.kind == "l":
                target = self.absolute(node.target, "/" + "/".join(out))
                parts = [p for p in target.split("/") if p] + parts
                out = []
            else:
                out.append(part)
        raise FsError(ELOOP)

    def parent(self, path: str, cwd: str = "/") -> tuple[Node, str]:
        full = self.absolute(path, cwd)
        head, name = posixpath.split(full)
        parent = self.lookup(head or "/")
        if not parent.is_dir:
            raise FsError(ENOTDIR)
        return parent, name

    # -- operations ---------------------------------------------------------------------------
    def mkdir(self, path: str, cwd: str = "/", *, parents: bool = False, mode: int = 0o755) -> Node:
        full = self.absolute(path, cwd)
        if parents:
            node = self.root
            for part in [p for p in full.split("/") if p]:
                child = node.children.get(part)
                if child is None:
                    child = node.children[part] = self._node("d", mode)
                    node.mtime = time.time()
                elif child.kind == "l":
                    child = self.lookup(full[: full.index(part) + len(part)])
                if not child.is_dir:
                    raise FsError(EEXIST)
                node = child
            return node
        parent, name = self.parent(full)
        if name in parent.children or not name:
            raise FsError(EEXIST)
        parent.children[name] = self._node("d", mode)
        parent.mtime = time.time()
        return parent.children[name]

    def write(
        self, path: str, data: bytes, cwd: str = "/", *, append: bool = False, mode: int = 0o644
    ) -> Node:
        try:
            node = self.lookup(path, cwd)
        except FsError as exc:
            if str(exc) != ENOENT:
                raise
            parent, name = self.parent(path, cwd)
            node = parent.children[name] = self._node("-", mode)
            parent.mtime = time.time()
        if node.is_dir:
            raise FsError(EISDIR)
        if not append:
            node.data = bytearray()
        node.data += data
        node.mtime = time.time()
        return node

    def read(self, path: str, cwd: str = "/") -> bytes:
        node = self.lookup(path, cwd)
        if node.is_dir:
            raise FsError(EISDIR)
        return bytes(node.data)

    def symlink(self, target: str, path: str, cwd: str = "/") -> None:
        parent, name = self.parent(path, cwd)
        if name in parent.children:
            raise FsError(EEXIST)
        node = self._node("l", 0o777)
        node.target = target
        parent.children[name] = node

    def remove(
        self, path: str, cwd: str = "/", *, recursive: bool = False, dirs: bool = False
    ) -> None:
        parent, name = self.parent(path, cwd)
        node = parent.children.get(name)
        if node is None:
            raise FsError(ENOENT)
        if node.is_dir and not recursive and not dirs:
            raise FsError(EISDIR)
        if node.is_dir and node.children and not recursive:
            raise FsError(ENOTEMPTY)
        del parent.children[name]
        parent.mtime = time.time()

    def attach(self, path: str, node: Node, cwd: str = "/") -> None:
        """Put an existing node (a copy, a moved file) at ``path``, replacing a file there."""
        parent, name = self.parent(path, cwd)
        old = parent.children.get(name)
        if old is not None and old.is_dir:
            raise FsError(EISDIR if not node.is_dir else EEXIST)
        parent.children[name] = node
        parent.mtime = time.time()

    def new_node(self, kind: str, mode: int) -> Node:
        return self._node(kind, mode)

    def walk(self, path: str, cwd: str = "/") -> list[tuple[str, Node]]:
        """Every path under ``path`` (itself first), depth first, symlinks not followed."""
        top = self.absolute(path, cwd)
        out: list[tuple[str, Node]] = []

        def visit(p: str, node: Node) -> None:
            out.append((p, node))
            if node.is_dir:
                for name in sorted(node.children):
                    visit(posixpath.join(p, name), node.children[name])

        visit(top, self.lookup(top, follow=False) if top != "/" else self.root)
        return out
