"""The shell's lexer: source text into words (with their quoting) and operators.

A word keeps its quoting as segments, because expansion (in ``interp``) treats unquoted,
single-quoted and double-quoted text differently; ``$(...)`` is kept as its own segment.
"""

from __future__ import annotations

import attrs

_OPERATORS = (
    "&&",
    "||",
    ";;",
    ">>",
    "2>>",
    "2>&1",
    ">&2",
    "1>&2",
    "&>",
    "2>",
    ">",
    "<",
    "|",
    ";",
    "&",
    "(",
    ")",
    "\n",
)


class ParseError(Exception):
    """A syntax error; ``incomplete`` means more input could still make it valid."""

    def __init__(self, message: str, *, incomplete: bool = False) -> None:
        super().__init__(message)
        self.incomplete = incomplete


@attrs.frozen
class Segment:
    text: str
    # "lit" (unquoted), "sq" (single-quoted or escaped), "dq" (double-quoted), "cmd" ($(...)),
    # "arith" ($((...)))
    kind: str
    quoted: bool = False  # for "cmd" and "arith": inside double quotes (no field splitting)


@attrs.frozen
class Word:
    segments: tuple[Segment, ...]

    @property
    def plain(self) -> str | None:
        """The text if the word is one unquoted literal (reserved words, names)."""
        if len(self.segments) == 1 and self.segments[0].kind == "lit":
            return self.segments[0].text
        return None


# -- lexer ----------------------------------------------------------------------------------------
def _read_substitution(src: str, i: int) -> tuple[str, int]:
    """``src[i:]`` follows ``$(``; returns the inner text and the index after ``)``."""
    depth, j, quote = 1, i, ""
    while j < len(src):
        ch = src[j]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"':
                j += 1
        elif ch in "'\"":
            quote = ch
        elif ch == "\\":
            j += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return src[i:j], j + 1
        j += 1
    raise ParseError("unterminated $(", incomplete=True)


def _read_arithmetic(src: str, i: int) -> tuple[str, int]:
    """``src[i:]`` follows ``$((``; returns the expression and the index after ``))``."""
    depth = 0
    for j in range(i, len(src)):
        if src.startswith("))", j) and depth == 0:
            return src[i:j], j + 2
        depth += (src[j] == "(") - (src[j] == ")")
    raise ParseError("unterminated $((", incomplete=True)


def tokenize(src: str) -> list[Word | str]:
    tokens: list[Word | str] = []
    i, n = 0, len(src)
    segs: list[Segment] = []
    buf: list[str] = []
    in_word = False

    def flush_lit() -> None:
        if buf:
            segs.append(Segment("".join(buf), "lit"))
            buf.clear()

    def end_word() -> None:
        nonlocal in_word
        flush_lit()
        if in_word:
            tokens.append(Word(tuple(segs)))
        segs.clear()
        in_word = False

    while i < n:
        ch = src[i]
        if ch in " \t":
            end_word()
            i += 1
            continue
        if ch == "#" and not in_word:
            while i < n and src[i] != "\n":
                i += 1
            continue
        if ch == "\\" and i + 1 < n and src[i + 1] == "\n":
            i += 2
            continue
        op = next((o for o in _OPERATORS if src.startswith(o, i)), None)
        if op and not (op[0] == "2" and in_word) and not (op[0] == "1" and in_word):
            end_word()
            tokens.append(op)
            i += len(op)
            continue
        in_word = True
        if ch == "\\":
            flush_lit()
            if i + 1 < n:
                segs.append(Segment(src[i + 1], "sq"))
            i += 2
        elif ch == "'":
            end = src.find("'", i + 1)
            if end < 0:
                raise ParseError("unterminated quoted string", incomplete=True)
            flush_lit()
            segs.append(Segment(src[i + 1 : end], "sq"))
            i = end + 1
        elif ch == '"':
            flush_lit()
            i = _double_quoted(src, i + 1, segs)
        elif src.startswith("$((", i):
            flush_lit()
            inner, i = _read_arithmetic(src, i + 3)
            segs.append(Segment(inner, "arith"))
        elif src.startswith("$(", i):
            flush_lit()
            inner, i = _read_substitution(src, i + 2)
            segs.append(Segment(inner, "cmd"))
        else:
            buf.append(ch)
            i += 1
    end_word()
    return tokens


def _double_quoted(src: str, i: int, segs: list[Segment]) -> int:
    buf: list[str] = []
    segs.append(Segment("", "dq"))  # keeps "" a word of its own
    while i < len(src):
        ch = src[i]
        if ch == '"':
            if buf:
                segs.append(Segment("".join(buf), "dq"))
            return i + 1
        if ch == "\\" and i + 1 < len(src) and src[i + 1] in '$`"\\\n':
            if buf:
                segs.append(Segment("".join(buf), "dq"))
                buf = []
            segs.append(Segment(src[i + 1], "sq"))
            i += 2
        elif src.startswith("$(", i):
            if buf:
                segs.append(Segment("".join(buf), "dq"))
                buf = []
            if src.startswith("$((", i):
                inner, i = _read_arithmetic(src, i + 3)
                segs.append(Segment(inner, "arith", quoted=True))
            else:
                inner, i = _read_substitution(src, i + 2)
                segs.append(Segment(inner, "cmd", quoted=True))
        else:
            buf.append(ch)
            i += 1
    raise ParseError("unterminated quoted string", incomplete=True)
