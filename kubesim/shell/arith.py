"""Shell arithmetic: the integer expressions of ``$((...))``, and what ``expr`` evaluates.

``$((...))`` follows POSIX sh: integers, variables by bare name or ``$name`` (unset or empty is 0),
``+ - * / %``, comparisons, ``&& || !``, bitwise ``& | ^ ~ << >>``, parentheses and ``?:``;
division truncates toward zero as C's does. Assignments (``i+=1``) are not supported. The
expression is parsed by Python's parser into a tree of which only those operators are evaluated,
so nothing else can run.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Mapping

_NAME = re.compile(r"\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_NUMBER = re.compile(r"\b0[xX][0-9a-fA-F]+\b|\b0[0-7]+\b")


class ArithError(Exception):
    """An expression the shell cannot evaluate (its message is what sh prints)."""


def _truncating_div(a: int, b: int) -> int:
    if b == 0:
        raise ArithError("divide by zero")
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _c_mod(a: int, b: int) -> int:
    return a - b * _truncating_div(a, b)


_BINARY: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: _truncating_div,
    ast.Mod: _c_mod,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_COMPARE: dict[type[ast.cmpop], Callable[[int, int], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def evaluate(text: str, variables: Mapping[str, str]) -> int:
    """The value of ``text`` (what ``$((text))`` expands to)."""
    if not text.strip():
        return 0
    source = _NUMBER.sub(
        lambda m: str(int(m.group(0), 0 if "x" in m.group(0).lower() else 8)), text
    )
    source = _NAME.sub(lambda m: str(_variable(variables, m.group(1))), source)
    source = source.replace("&&", " and ").replace("||", " or ")
    source = re.sub(r"!(?!=)", " not ", source).replace("/", "//")
    source = _ternary(source)
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        raise ArithError(f"arithmetic syntax error: {text.strip()}") from None
    return _eval(tree.body, text)


def _variable(variables: Mapping[str, str], name: str) -> int:
    value = variables.get(name, "").strip()
    if not value:
        return 0
    try:
        return int(value, 0) if value.lower().startswith("0x") else int(value)
    except ValueError:
        raise ArithError(f"arithmetic syntax error: {value}") from None


def _ternary(source: str) -> str:
    """``c ? a : b`` as Python's ``(a if c else b)``: the lowest-precedence operator, so split at
    the first ``?`` outside parentheses and its matching ``:``; parenthesised parts recurse."""
    out, depth, start, question = [], 0, 0, -1
    for i, ch in enumerate(source):
        if ch == "(":
            if depth == 0:
                out.append(source[start:i])
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                out.append("(" + _ternary(source[start + 1 : i]) + ")")
                start = i + 1
        elif ch == "?" and depth == 0:
            question = i
            break
    if question < 0:
        return "".join(out) + source[start:]
    nested, colon = 0, -1
    for j in range(question + 1, len(source)):
        ch = source[j]
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and ch == "?":
            nested += 1
        elif depth == 0 and ch == ":":
            if not nested:
                colon = j
                break
            nested -= 1
    if colon < 0:
        raise ArithError("arithmetic syntax error: expecting ':'")
    cond = "".join(out) + source[start:question]
    then, other = source[question + 1 : colon], source[colon + 1 :]
    return f"(({_ternary(then)}) if ({_ternary(cond)}) else ({_ternary(other)}))"


def _eval(node: ast.expr, text: str) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return int(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left, text), _eval(node.right, text))
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, text)
        unary = {ast.USub: -value, ast.UAdd: value, ast.Invert: ~value, ast.Not: int(not value)}
        if type(node.op) in unary:
            return unary[type(node.op)]
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, text) for v in node.values)
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    if isinstance(node, ast.Compare) and all(type(o) in _COMPARE for o in node.ops):
        left = _eval(node.left, text)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, text)
            if not _COMPARE[type(op)](left, right):
                return 0
            left = right
        return 1
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, text) else node.orelse, text)
    raise ArithError(f"arithmetic syntax error: {text.strip()}")


# --- expr ----------------------------------------------------------------------------------------
# expr's operators by precedence, lowest first; ``:`` (regex match) is not supported.
_EXPR_LEVELS = (
    ("|",),
    ("&",),
    ("<", "<=", "=", "==", "!=", ">=", ">"),
    ("+", "-"),
    ("*", "/", "%"),
)


def expr(args: list[str]) -> str:
    """What ``expr ARGS`` prints (without the newline); ArithError for a syntax error."""
    value, rest = _expr_level(args, 0)
    if rest:
        raise ArithError("syntax error")
    return value


def _expr_level(args: list[str], level: int) -> tuple[str, list[str]]:
    if level == len(_EXPR_LEVELS):
        return _expr_primary(args)
    left, rest = _expr_level(args, level + 1)
    while rest and rest[0] in _EXPR_LEVELS[level]:
        op = rest[0]
        right, rest = _expr_level(rest[1:], level + 1)
        left = _expr_apply(op, left, right)
    return left, rest


def _expr_primary(args: list[str]) -> tuple[str, list[str]]:
    if not args:
        raise ArithError("syntax error")
    if args[0] == "(":
        value, rest = _expr_level(args[1:], 0)
        if not rest or rest[0] != ")":
            raise ArithError("syntax error")
        return value, rest[1:]
    if args[0] == "length" and len(args) > 1:
        return str(len(args[1])), args[2:]
    return args[0], args[1:]


def _integer(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ArithError("non-integer argument") from None


def _expr_apply(op: str, left: str, right: str) -> str:
    if op == "|":
        return left if left not in ("", "0") else (right if right not in ("", "0") else "0")
    if op == "&":
        return left if left not in ("", "0") and right not in ("", "0") else "0"
    if op in ("+", "-", "*", "/", "%"):
        a, b = _integer(left), _integer(right)
        if op in ("/", "%") and b == 0:
            raise ArithError("division by zero")
        calc = {
            "+": operator.add,
            "-": operator.sub,
            "*": operator.mul,
            "/": _truncating_div,
            "%": _c_mod,
        }[op]
        return str(calc(a, b))
    try:
        a_num: int | str = int(left)
        b_num: int | str = int(right)
    except ValueError:
        a_num, b_num = left, right
    compare = {
        "<": operator.lt,
        "<=": operator.le,
        "=": operator.eq,
        "==": operator.eq,
        "!=": operator.ne,
        ">=": operator.ge,
        ">": operator.gt,
    }[op]
    return "1" if compare(a_num, b_num) else "0"
