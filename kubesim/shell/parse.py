"""The shell's grammar: a POSIX ``sh`` subset parsed into a small syntax tree.

Enough for the scripts people put in ``command:`` and type into ``kubectl exec -it``: quoting,
``$VAR``/``${VAR}``/``$?``/``$(...)``, assignments, redirections (``>``, ``>>``, ``<``, ``2>``,
``2>&1``), pipelines, ``&&``/``||``/``;``/``!``, ``if``/``elif``/``else``, ``for``, ``while``,
``until``, ``{ ...; }`` and ``( ... )``. Anything else (here-documents, ``case``, functions) is a
syntax error, so a script never half-runs. Expansion happens later, in ``interp``.
"""

from __future__ import annotations

import re

import attrs

from kubesim.shell.lex import ParseError, Word, tokenize

RESERVED = frozenset(
    {"if", "then", "elif", "else", "fi", "for", "in", "do", "done", "while", "until", "{", "}", "!"}
)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@attrs.frozen
class Redirect:
    op: str
    target: Word | None = None


@attrs.frozen
class Simple:
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...] = ()
    assigns: tuple[tuple[str, Word], ...] = ()


@attrs.frozen
class Pipeline:
    commands: tuple[Node, ...]
    negate: bool = False


@attrs.frozen
class AndOr:
    first: Node
    rest: tuple[tuple[str, Node], ...]


@attrs.frozen
class Sequence:
    items: tuple[Node, ...]


@attrs.frozen
class If:
    branches: tuple[tuple[Sequence, Sequence], ...]
    otherwise: Sequence | None


@attrs.frozen
class For:
    name: str
    words: tuple[Word, ...] | None
    body: Sequence


@attrs.frozen
class Loop:
    cond: Sequence
    body: Sequence
    until: bool


@attrs.frozen
class Group:
    body: Sequence
    subshell: bool
    redirects: tuple[Redirect, ...] = ()


Node = Simple | Pipeline | AndOr | Sequence | If | For | Loop | Group


_TERMINATORS = frozenset({"then", "elif", "else", "fi", "do", "done", "}", ")"})
_REDIRECTS = frozenset({">", ">>", "<", "2>", "2>>", "&>", "2>&1", ">&2", "1>&2"})


class Parser:
    def __init__(self, src: str) -> None:
        self.tokens = tokenize(src)
        self.pos = 0

    # -- token helpers --------------------------------------------------------------------------
    def peek(self) -> Word | str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def peek_reserved(self) -> str | None:
        tok = self.peek()
        if isinstance(tok, Word) and tok.plain in RESERVED:
            return tok.plain
        if tok == ")":
            return ")"
        return None

    def take(self) -> Word | str:
        tok = self.peek()
        if tok is None:
            raise ParseError("unexpected end of input", incomplete=True)
        self.pos += 1
        return tok

    def expect(self, word: str) -> None:
        tok = self.peek()
        if tok is None:
            raise ParseError(f"expected '{word}'", incomplete=True)
        if (tok.plain if isinstance(tok, Word) else tok) != word:
            raise ParseError(f'syntax error: unexpected {_show(tok)} (expecting "{word}")')
        self.pos += 1

    def skip_newlines(self) -> None:
        while self.peek() in ("\n", ";"):
            self.pos += 1

    # -- grammar --------------------------------------------------------------------------------
    def parse(self) -> Sequence:
        seq = self.sequence()
        if self.peek() is not None:
            raise ParseError(f"syntax error: unexpected {_show(self.take())}")
        return seq

    def sequence(self) -> Sequence:
        items: list[Node] = []
        while True:
            while self.peek() in ("\n", ";", "&"):
                self.pos += 1
            if self.peek() is None or self.peek_reserved() in _TERMINATORS:
                return Sequence(tuple(items))
            items.append(self.and_or())
            if (
                self.peek() not in ("\n", ";", "&", None)
                and self.peek_reserved() not in _TERMINATORS
            ):
                raise ParseError(f"syntax error: unexpected {_show(self.take())}")

    def and_or(self) -> Node:
        first = self.pipeline()
        rest: list[tuple[str, Node]] = []
        while self.peek() in ("&&", "||"):
            op = str(self.take())
            while self.peek() == "\n":
                self.pos += 1
            rest.append((op, self.pipeline()))
        return AndOr(first, tuple(rest)) if rest else first

    def pipeline(self) -> Node:
        negate = self.peek_reserved() == "!"
        if negate:
            self.pos += 1
        commands = [self.command()]
        while self.peek() == "|":
            self.pos += 1
            while self.peek() == "\n":
                self.pos += 1
            commands.append(self.command())
        if len(commands) == 1 and not negate:
            return commands[0]
        return Pipeline(tuple(commands), negate)

    def command(self) -> Node:
        word = self.peek_reserved()
        if word == "if":
            return self.if_clause()
        if word == "for":
            return self.for_clause()
        if word in ("while", "until"):
            self.pos += 1
            cond = self.sequence()
            self.expect("do")
            body = self.sequence()
            self.expect("done")
            return Loop(cond, body, until=word == "until")
        if word == "{" or self.peek() == "(":
            subshell = self.take() == "("
            body = self.sequence()
            self.expect(")" if subshell else "}")
            return Group(body, subshell, tuple(self.redirects()))
        return self.simple()

    def if_clause(self) -> If:
        self.pos += 1
        branches = []
        while True:
            cond = self.sequence()
            self.expect("then")
            branches.append((cond, self.sequence()))
            word = self.peek_reserved()
            if word == "elif":
                self.pos += 1
                continue
            otherwise = None
            if word == "else":
                self.pos += 1
                otherwise = self.sequence()
            self.expect("fi")
            return If(tuple(branches), otherwise)

    def for_clause(self) -> For:
        self.pos += 1
        name = self.take()
        if not isinstance(name, Word) or not name.plain or not _NAME.match(name.plain):
            raise ParseError("syntax error: bad for loop variable")
        words: list[Word] | None = None
        self.skip_newlines()
        if self.peek_reserved() == "in":
            self.pos += 1
            words = []
            while isinstance(self.peek(), Word) and self.peek_reserved() != "do":
                words.append(self.take())  # type: ignore[arg-type]
        self.skip_newlines()
        self.expect("do")
        body = self.sequence()
        self.expect("done")
        return For(name.plain, tuple(words) if words is not None else None, body)

    def redirects(self) -> list[Redirect]:
        out = []
        while self.peek() in _REDIRECTS:
            op = str(self.take())
            target = None
            if op not in ("2>&1", ">&2", "1>&2"):
                tok = self.take()
                if not isinstance(tok, Word):
                    raise ParseError(f"syntax error: unexpected {_show(tok)}")
                target = tok
            out.append(Redirect(op, target))
        return out

    def simple(self) -> Simple:
        words: list[Word] = []
        redirects: list[Redirect] = []
        assigns: list[tuple[str, Word]] = []
        while True:
            tok = self.peek()
            if tok in _REDIRECTS:
                redirects.extend(self.redirects())
            elif isinstance(tok, Word) and not (words or assigns) and tok.plain in _TERMINATORS:
                break
            elif isinstance(tok, Word):
                self.pos += 1
                assign = _assignment(tok) if not words else None
                if assign is not None:
                    assigns.append(assign)
                else:
                    words.append(tok)
            else:
                break
        if not (words or redirects or assigns):
            tok = self.peek()
            if tok is None:
                raise ParseError("unexpected end of input", incomplete=True)
            raise ParseError(f"syntax error: unexpected {_show(tok)}")
        return Simple(tuple(words), tuple(redirects), tuple(assigns))


def _assignment(word: Word) -> tuple[str, Word] | None:
    first = word.segments[0]
    if first.kind != "lit" or "=" not in first.text:
        return None
    name, value = first.text.split("=", 1)
    if not _NAME.match(name):
        return None
    rest = ((type(first)(value, "lit"),) if value else ()) + word.segments[1:]
    return name, Word(rest)


def _show(tok: Word | str) -> str:
    if isinstance(tok, Word):
        return f'"{"".join(s.text for s in tok.segments)}"'
    return "newline" if tok == "\n" else f'"{tok}"'


def parse(src: str) -> Sequence:
    return Parser(src).parse()
