"""Word expansion: parameters, ``$(...)``, ``$((...))``, field splitting and pathname globbing."""

from __future__ import annotations

import fnmatch
import posixpath
import re
from typing import TYPE_CHECKING

from kubesim.shell import arith
from kubesim.shell.fs import FsError
from kubesim.shell.lex import Word

if TYPE_CHECKING:
    from kubesim.shell.session import Session

VAR = re.compile(r"\$(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*)|([?$#@*0-9!]))")


def variable(self: Session, name: str) -> str:
    if name == "?":
        return str(self.status)
    if name == "$":
        return str(self.host.pid)
    if name == "#":
        return str(len(self.args) - 1)
    if name in ("@", "*"):
        return " ".join(self.args[1:])
    if name.isdigit():
        i = int(name)
        return self.args[i] if i < len(self.args) else ""
    if name.startswith("#"):
        return str(len(variable(self, name[1:])))
    for op in (":-", "-", ":+"):
        if op in name:
            key, default = name.split(op, 1)
            value = self.env.get(key)
            if op == ":+":
                return default if value else ""
            if value is None or (op == ":-" and not value):
                return default
            return value
    return self.env.get(name, "")


def _subst(self: Session, text: str) -> str:
    return VAR.sub(lambda m: variable(self, m.group(1) or m.group(2) or m.group(3)), text)


async def fields(self: Session, word: Word) -> list[str]:
    """A word's fields: variables and ``$(...)`` substituted, unquoted results split, globbed."""
    fields: list[list[tuple[str, bool]]] = [[]]
    keep = [False]
    for seg in word.segments:
        if seg.kind == "sq":
            fields[-1].append((seg.text, False))
            keep[-1] = True
        elif seg.kind == "dq":
            fields[-1].append((_subst(self, seg.text), False))
            keep[-1] = True
        elif seg.kind == "arith":
            value = str(arith.evaluate(_subst(self, seg.text), self.env))
            fields[-1].append((value, False))
            keep[-1] = keep[-1] or seg.quoted
        elif seg.kind == "cmd":
            value = await self.capture(seg.text)
            if seg.quoted:
                fields[-1].append((value, False))
                keep[-1] = True
            else:
                _split_into(fields, keep, value)
        else:
            pos = 0
            for m in VAR.finditer(seg.text):
                fields[-1].append((seg.text[pos : m.start()], True))
                _split_into(fields, keep, variable(self, m.group(1) or m.group(2) or m.group(3)))
                pos = m.end()
            fields[-1].append((seg.text[pos:], True))
    out: list[str] = []
    for chunks, kept in zip(fields, keep, strict=True):
        text = "".join(t for t, _ in chunks)
        if not text and not kept:
            continue
        if any(g and any(c in t for c in "*?[") for t, g in chunks):
            matches = glob(self, text)
            if matches:
                out += matches
                continue
        out.append(text)
    return out


def _split_into(fields: list[list[tuple[str, bool]]], keep: list[bool], value: str) -> None:
    parts = re.split(r"[ \t\n]+", value)
    for i, part in enumerate(parts):
        if i:
            fields.append([])
            keep.append(False)
        if part:
            fields[-1].append((part, False))


def glob(self: Session, pattern: str) -> list[str]:
    absolute = pattern.startswith("/")
    parts = [p for p in pattern.split("/") if p]
    paths = ["/" if absolute else ""]
    for part in parts:
        nxt: list[str] = []
        for base in paths:
            if not any(c in part for c in "*?["):
                nxt.append(posixpath.join(base, part) if base else part)
                continue
            try:
                node = self.fs.lookup(base or ".", self.cwd)
            except FsError:
                continue
            if not node.is_dir:
                continue
            for name in sorted(node.children):
                if name.startswith(".") and not part.startswith("."):
                    continue
                if fnmatch.fnmatchcase(name, part):
                    nxt.append(posixpath.join(base, name) if base else name)
        paths = nxt
    return [p for p in paths if self.fs.exists(p, self.cwd)]
