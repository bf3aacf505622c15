"""Why Go's encoding/json refuses a body, in its words (``invalid character 'b' looking for
beginning of object key string``, ``unexpected end of JSON input``).

Python's decoder words its errors differently and accepts what Go refuses (``NaN``, nesting
Go allows is past Python's recursion limit the other way round), so when a body does not decode
this scanner, a port of the state machine in Go's ``encoding/json/scanner.go``, finds the first
byte Go stops at. It runs only on bodies that failed, never on the ones that decode.
"""

from __future__ import annotations

#: encoding/json's ``maxNestingDepth``.
MAX_DEPTH = 10000
_SPACE = b" \t\r\n"
_DIGITS = b"0123456789"
_HEX = b"0123456789abcdefABCDEF"
_ESCAPES = b'bfnrt\\/"'
_LITERALS = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}


_GO_ESCAPES = {
    7: "\\a",
    8: "\\b",
    9: "\\t",
    10: "\\n",
    11: "\\v",
    12: "\\f",
    13: "\\r",
    0x5C: "\\\\",
}


def _quote(c: int) -> str:
    """``quoteChar``: the byte as ``strconv.Quote`` shows it as a rune, in single quotes."""
    if c == ord("'"):
        return "'\\''"
    if c in _GO_ESCAPES:
        return f"'{_GO_ESCAPES[c]}'"
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if not chr(c).isprintable():
        return f"'\\u{c:04x}'"
    return f"'{chr(c)}'"


class _Stop(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _fail(c: int, context: str) -> _Stop:
    return _Stop(f"invalid character {_quote(c)} {context}")


class _Scanner:
    """One pass over the bytes; ``stack`` holds what each open ``{`` or ``[`` expects next."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.i = 0
        self.stack: list[str] = []  # "key", "value" (in an object) or "element" (in an array)

    def next(self) -> int:
        if self.i >= len(self.data):
            raise _Stop("unexpected end of JSON input")
        c = self.data[self.i]
        self.i += 1
        return c

    def skip_space(self) -> int:
        c = self.next()
        while c in _SPACE:
            c = self.next()
        return c

    def run(self) -> None:
        c: int | None = self.skip_space()
        while True:
            while c is not None:  # a container opened: its first element begins at c
                c = self.value(c)
            c = self.after_value()
            if c is None:
                return

    def after_value(self) -> int | None:
        """The byte after a complete value: where the enclosing structure goes on, or None at
        the end of the input (``stateEndValue``, ``stateEndTop``)."""
        while True:
            if not self.stack:
                for c in self.data[self.i :]:
                    if c not in _SPACE:
                        raise _fail(c, "after top-level value")
                return None
            c = self.skip_space()
            top = self.stack[-1]
            if top == "key":
                if c != ord(":"):
                    raise _fail(c, "after object key")
                self.stack[-1] = "value"
                return self.skip_space()
            closing, context = (
                (ord("}"), "after object key:value pair")
                if top == "value"
                else (ord("]"), "after array element")
            )
            if c == closing:
                self.stack.pop()
                continue
            if c != ord(","):
                raise _fail(c, context)
            if top == "value":
                self.stack[-1] = "key"
                self.key(self.skip_space())
                continue
            return self.skip_space()

    def key(self, c: int) -> None:
        if c != ord('"'):
            raise _fail(c, "looking for beginning of object key string")
        self.string()

    def value(self, c: int) -> int | None:
        """A value starting at byte ``c`` (``stateBeginValue``). A container is pushed: an
        object's first key is read, an array's first element's byte is returned to begin."""
        if c == ord("{") or c == ord("["):
            if len(self.stack) >= MAX_DEPTH:
                raise _fail(c, "exceeded max depth")
            first = self.skip_space()
            if first == (ord("}") if c == ord("{") else ord("]")):
                return None
            if c == ord("["):
                self.stack.append("element")
                return first
            self.stack.append("key")
            self.key(first)
        elif c == ord('"'):
            self.string()
        elif c == ord("-") or c in _DIGITS:
            self.number(c)
        elif c in _LITERALS:
            self.literal(_LITERALS[c])
        else:
            raise _fail(c, "looking for beginning of value")
        return None

    def string(self) -> None:
        while True:
            c = self.next()
            if c == ord('"'):
                return
            if c < 0x20:
                raise _fail(c, "in string literal")
            if c == ord("\\"):
                c = self.next()
                if c == ord("u"):
                    for _ in range(4):
                        h = self.next()
                        if h not in _HEX:
                            raise _fail(h, "in \\u hexadecimal character escape")
                elif c not in _ESCAPES:
                    raise _fail(c, "in string escape code")

    def peek(self) -> int | None:
        return self.data[self.i] if self.i < len(self.data) else None

    def number(self, c: int) -> None:
        if c == ord("-"):
            c = self.next()
            if c not in _DIGITS:
                raise _fail(c, "in numeric literal")
        if c != ord("0"):
            self.digits()
        if self.peek() == ord("."):
            self.i += 1
            c = self.next()
            if c not in _DIGITS:
                raise _fail(c, "after decimal point in numeric literal")
            self.digits()
        if self.peek() in (ord("e"), ord("E")):
            self.i += 1
            c = self.next()
            if c in (ord("+"), ord("-")):
                c = self.next()
            if c not in _DIGITS:
                raise _fail(c, "in exponent of numeric literal")
            self.digits()

    def digits(self) -> None:
        while (c := self.peek()) is not None and c in _DIGITS:
            self.i += 1

    def literal(self, word: bytes) -> None:
        for expected in word[1:]:
            c = self.next()
            if c != expected:
                raise _fail(c, f"in literal {word.decode()} (expecting {_quote(expected)})")


def syntax_error(data: bytes) -> str | None:
    """Go's error for ``data``, or None when encoding/json would read it."""
    try:
        _Scanner(data).run()
    except _Stop as stop:
        return stop.message
    return None
