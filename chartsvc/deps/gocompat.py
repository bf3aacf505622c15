"""Go's encoding/json and sigs.k8s.io/yaml, as far as Helm's lock digest depends on them.

Helm hashes ``json.Marshal([2][]*chart.Dependency{requested, locked})``: struct fields in declaration
order with ``omitempty``, map keys sorted, ``<``, ``>``, ``&``, U+2028/9 escaped, numbers as float64.
Chart.yaml reaches that struct through sigs.k8s.io/yaml, which turns YAML numbers and booleans found
in string fields into strings and sanitises some fields. Reproducing each step is what makes our
digest byte-for-byte Helm's. This module must not do I/O.
"""

from __future__ import annotations

import hashlib
import math
import re
import struct
from decimal import Decimal
from typing import Any

from chartsvc.deps.model import Dependency, InvalidDependency


def go_json(value: Any) -> str:
    """``json.Marshal`` output: compact, map keys sorted, HTML-safe, numbers as float64."""
    if isinstance(value, Dependency):
        pairs = value.go_fields()  # a struct keeps its field order
        return "{" + ",".join(f"{_go_string(k)}:{go_json(v)}" for k, v in pairs) + "}"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _go_json_number(float(value))  # YAML numbers reach Go as float64
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, dict):
        # A map[string]interface{}: Go sorts its keys.
        items = sorted(((_go_key(k), v) for k, v in value.items()), key=lambda kv: kv[0])
        return "{" + ",".join(f"{_go_string(k)}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    raise InvalidDependency("?", f"holds a value Helm cannot encode ({type(value).__name__})")


_GO_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b"}
_GO_ESCAPES |= {"\f": "\\f", "<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_GO_ESCAPES |= {"\u2028": "\\u2028", "\u2029": "\\u2029"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029]')


def _go_string(text: str) -> str:
    def escape(match: re.Match[str]) -> str:
        char = match.group(0)
        return _GO_ESCAPES.get(char) or f"\\u{ord(char):04x}"

    return '"' + _NEEDS_ESCAPE.sub(escape, text) + '"'


def _go_json_number(number: float) -> str:
    """encoding/json's float64: shortest digits, 'f' form unless < 1e-6 or >= 1e21 ('e', e-7)."""
    if not math.isfinite(number):
        raise InvalidDependency("?", "holds a number JSON cannot carry")
    if number == 0:
        return "0"
    if 1e-6 <= abs(number) < 1e21:
        text = format(Decimal(repr(number)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return _exponent_form(repr(number), number)


def _exponent_form(shortest: str, number: float) -> str:
    sign, digits, exponent = Decimal(shortest).as_tuple()
    assert isinstance(exponent, int)
    scientific = len(digits) - 1 + exponent
    mantissa = "".join(map(str, digits)).rstrip("0") or "0"
    mantissa = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return ("-" if sign else "") + f"{mantissa}e{scientific:+03d}".replace("e-0", "e-")


def _go_key(key: Any) -> str:
    return key if isinstance(key, str) else yaml_scalar_as_string(key)


def yaml_scalar_as_string(value: Any) -> str:
    """What sigs.k8s.io/yaml stores in a Go string field given a YAML bool or number."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _format_float32_g(value)
    return str(value)


def _format_float32_g(number: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 32), which sigs.k8s.io/yaml uses for floats in strings."""
    if not math.isfinite(number):
        return "+Inf" if number > 0 else "-Inf" if number < 0 else "NaN"
    text = _shortest_float32(_to_float32(number))
    mantissa_text, exp_text = text.split("e")
    exponent = int(exp_text)
    if exponent < -4 or exponent >= 6:  # Go's shortest 'g' switches to 'e' at precision 6
        digits = mantissa_text.replace(".", "").lstrip("-").rstrip("0") or "0"
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return ("-" if number < 0 else "") + f"{mantissa}e{exponent:+03d}"
    return _go_json_number(float(Decimal(text)))


def _to_float32(number: float) -> float:
    converted: float = struct.unpack("f", struct.pack("f", number))[0]
    return converted


def _shortest_float32(as32: float) -> str:
    """The fewest significant digits (in 'e' form) that read back as the same float32."""
    for precision in range(1, 9):
        text = f"{as32:.{precision - 1}e}"
        if _to_float32(float(text)) == as32:
            return text
    return f"{as32:.8e}"  # nine significant digits always round-trip a float32


def hash_req(requested: list[Dependency], locked: list[Dependency]) -> str:
    """Helm's ``resolver.HashReq``: ``"sha256:" + hex(sha256(json.Marshal([req, lock])))``."""
    payload = go_json([requested, locked])
    return "sha256:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()


def sanitize(text: str) -> str:
    """Helm's ``sanitizeString``: whitespace becomes a space, unprintable characters go."""
    return "".join(
        " " if _go_is_space(c) else c for c in text if _go_is_space(c) or c.isprintable()
    )


def _go_is_space(char: str) -> bool:
    # unicode.IsSpace: these Latin-1 characters, else the White_Space property (Python's isspace
    # also counts U+001C..U+001F, which Go does not).
    return char in "\t\n\v\f\r \x85\xa0" or (ord(char) > 0xFF and char.isspace())
