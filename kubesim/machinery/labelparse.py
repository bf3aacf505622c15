"""Label selector strings parsed as apimachinery's ``labels.Parse`` parses them.

A port of the lexer and parser in ``k8s.io/apimachinery/pkg/labels/selector.go``, so a selector
a real server refuses is refused here with the same words (``unable to parse requirement:
found '', expected: ',' or ')'``) and one it reads is read the same way (``a in (b,)``,
``!key``, ``x>3``). Label key and value syntax is not checked (a real server also refuses
``a b=c`` for its key).
"""

from __future__ import annotations

import attrs

_SPECIAL = "=!(),<>"
_SPACE = " \t\r\n"
_TOKENS = {
    ")": "ClosedPar",
    ",": "Comma",
    "!": "DoesNotExist",
    "==": "DoubleEquals",
    "=": "Equals",
    ">": "GreaterThan",
    "in": "In",
    "<": "LessThan",
    "!=": "NotEquals",
    "notin": "NotIn",
    "(": "OpenPar",
}
_OPERATORS = {
    "In": "in",
    "NotIn": "notin",
    "Equals": "=",
    "DoubleEquals": "==",
    "NotEquals": "!=",
    "GreaterThan": "gt",
    "LessThan": "lt",
}
_BINARY = "in, notin, =, ==, !=, gt, lt"


@attrs.frozen
class Requirement:
    """One term: ``key``, an operator (``in``, ``notin``, ``=``, ``==``, ``!=``, ``gt``, ``lt``,
    ``exists``, ``!``) and its values."""

    key: str
    operator: str
    values: tuple[str, ...] = ()


class SelectorError(ValueError):
    """A selector ``labels.Parse`` refuses; the message is its error text."""


def _lex(text: str) -> list[tuple[str, str]]:
    """Every token and its literal, ending with ``("End", "")`` (``Lexer.Lex``)."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _SPACE:
            i += 1
        if i >= n:
            out.append(("End", ""))
            return out
        start = i
        if text[i] in _SPECIAL:  # scanSpecialSymbol: the longest symbol that is a token
            last: tuple[str, str] | None = None
            while i < n and text[i] in _SPECIAL:
                candidate = text[start : i + 1]
                if candidate in _TOKENS:
                    last = (_TOKENS[candidate], candidate)
                elif last is not None:
                    break
                i += 1
            if last is None:
                out.append(("Error", f"error expected: keyword found '{text[start:i]}'"))
            else:
                out.append(last)
                i = start + len(last[1])
            continue
        while i < n and text[i] not in _SPECIAL and text[i] not in _SPACE:
            i += 1
        word = text[start:i]
        out.append((_TOKENS.get(word, "Identifier"), word))


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.at = 0

    def lookahead(self, *, values: bool = True) -> tuple[str, str]:
        tok, lit = self.items[self.at]
        if values and tok in ("In", "NotIn"):  # in the Values context keywords are names
            tok = "Identifier"
        return tok, lit

    def consume(self, *, values: bool = True) -> tuple[str, str]:
        found = self.lookahead(values=values)
        self.at = min(self.at + 1, len(self.items) - 1)
        return found

    def parse(self) -> list[Requirement]:
        out: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok == "End":
                return out
            if tok not in ("Identifier", "DoesNotExist"):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                out.append(self.requirement())
            except SelectorError as exc:
                raise SelectorError(f"unable to parse requirement: {exc}") from None
            tok, lit = self.consume()
            if tok == "End":
                return out
            if tok != "Comma":
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self.lookahead()
            if tok not in ("Identifier", "DoesNotExist"):
                raise SelectorError(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        tok, key = self.consume()
        negated = tok == "DoesNotExist"
        if negated:
            tok, key = self.consume()
        if tok != "Identifier":
            raise SelectorError(f"found '{key}', expected: identifier")
        if negated:  # unary: whatever follows the key is the caller's to refuse
            return Requirement(key, "!")
        if self.lookahead()[0] in ("End", "Comma"):
            return Requirement(key, "exists")
        tok, lit = self.consume(values=False)
        operator = _OPERATORS.get(tok)
        if operator is None:
            raise SelectorError(f"found '{lit}', expected: {_BINARY}")
        values = self.values() if operator in ("in", "notin") else self.exact()
        if operator in ("gt", "lt"):
            for i, value in enumerate(values):
                try:
                    int(value, 10)
                except ValueError:
                    raise SelectorError(
                        f'values[{i}]: Invalid value: "{value}": '
                        "for 'Gt', 'Lt' operators, the value must be an integer"
                    ) from None
        return Requirement(key, operator, values)

    def exact(self) -> tuple[str, ...]:
        if self.lookahead()[0] in ("End", "Comma"):
            return ("",)
        tok, lit = self.consume()
        if tok != "Identifier":
            raise SelectorError(f"found '{lit}', expected: identifier")
        return (lit,)

    def values(self) -> tuple[str, ...]:
        tok, lit = self.consume()
        if tok != "OpenPar":
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok == "ClosedPar":
            self.consume()
            return ("",)
        if tok not in ("Identifier", "Comma"):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        found = self.identifiers()
        if self.consume()[0] != "ClosedPar":
            raise SelectorError(f"found '{lit}', expected: ')'")
        return tuple(sorted(found))

    def identifiers(self) -> set[str]:
        found: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok == "Identifier":
                found.add(lit)
                tok2, lit2 = self.lookahead()
                if tok2 == "Comma":
                    continue
                if tok2 == "ClosedPar":
                    return found
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok != "Comma":
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")
            if not found:
                found.add("")  # "(,"
            tok2 = self.lookahead()[0]
            if tok2 == "ClosedPar":
                found.add("")  # ",)"
                return found
            if tok2 == "Comma":
                self.consume()
                found.add("")


def parse(text: str) -> list[Requirement]:
    """The requirements of a label selector string, or :class:`SelectorError`."""
    return _Parser(text).parse()


def matches(requirement: Requirement, labels: dict[str, str]) -> bool:
    """``Requirement.Matches``."""
    op, value = requirement.operator, labels.get(requirement.key)
    if op == "exists":
        return value is not None
    if op == "!":
        return value is None
    if op in ("in", "=", "=="):
        return value is not None and value in requirement.values
    if op in ("notin", "!="):
        return value is None or value not in requirement.values
    try:
        have, bound = int(value or ""), int(requirement.values[0])
    except ValueError:
        return False
    return have > bound if op == "gt" else have < bound
