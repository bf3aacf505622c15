"""The subset of Kubernetes JSONPath that CRD printer columns use.

Supported: ``.a.b``, ``.a[0]``, ``.a[*].b``, ``['key.with.dots']`` and ``[?(@.k=="v")].b`` filters.
Anything else yields no value, which prints as an empty cell, as kubectl does for a missing field.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(
    r"""\.([A-Za-z0-9_\-$]+)|\[(\d+|\*)\]|\['([^']*)'\]|\[\?\(@\.([\w.\-]+)\s*==\s*["']([^"']*)["']\)\]"""
)


def find(obj: Any, path: str) -> list[Any]:
    path = path.strip()
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1]
    if not path.startswith((".", "[")):
        path = "." + path
    current = [obj]
    pos = 0
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if m is None:
            return []
        pos = m.end()
        key, index, quoted, fkey, fval = m.groups()
        nxt: list[Any] = []
        for value in current:
            if key is not None or quoted is not None:
                k = key if key is not None else quoted
                if isinstance(value, dict) and k in value:
                    nxt.append(value[k])
            elif index is not None and isinstance(value, list):
                if index == "*":
                    nxt.extend(value)
                elif int(index) < len(value):
                    nxt.append(value[int(index)])
            elif fkey is not None and isinstance(value, list):
                nxt.extend(v for v in value if _lookup(v, fkey) == fval)
        current = nxt
    return current


def _lookup(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return None if value is None else (value if isinstance(value, str) else json.dumps(value))


def text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))
