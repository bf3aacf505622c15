"""Decoded documents (JSON and YAML bodies) within one nesting limit, checked in one place.

A body nested a thousand levels deep is a few kilobytes, yet every recursive step after the decoder
(the schema validator, a merge of values, an encoder) would meet Python's recursion limit and fail
as a 500. So every JSON a request carries is decoded by :func:`load_json` and every YAML document by
``common.yamlio`` (which calls :func:`deeper_than`), and a document nested past ``MAX_DEPTH`` levels
is refused as bad input naming the limit. This module must not know HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: Levels of nested objects and arrays a request document may have. Kubernetes objects, Helm values
#: and CRD schemas stay well under 50; Python's own recursion limit (1,000) is far above it, so no
#: code that walks a document recursively can fail on one that passed.
MAX_DEPTH = 100


#: Why a document was refused, after the name of what carried it ("body", "part 'request'").
TOO_DEEP = f"is nested deeper than the limit of {MAX_DEPTH} levels"
NOT_JSON = "is not valid JSON"


def deeper_than(document: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``document`` (plain data) nests objects or arrays more than ``limit`` levels deep,
    found without recursion, level by level. A container met several times on one level (YAML
    aliases repeat one object) is walked once there: a few hundred bytes of aliases to aliases
    stand for 10^8 values, which a walk of every value would spend a minute and gigabytes on. So
    each distinct container is walked at most ``limit`` times, whatever the aliases."""
    level: list[Any] = [document]
    depth = 0
    while level:
        containers = {id(v): v for v in level if isinstance(v, (dict, list))}
        if not containers:
            return False
        depth += 1
        if depth > limit:
            return True
        level = [c for v in containers.values() for c in (v.values() if isinstance(v, dict) else v)]
    return False


def load_json(data: bytes | str, *, parse_float: Callable[[str], Any] = float) -> Any:
    """``data`` as JSON; ``ValueError`` saying why not (``NOT_JSON`` or ``TOO_DEEP``).
    ``parse_float`` reads each JSON number with a fraction or exponent, as ``json.loads``'s does."""
    try:
        document = json.loads(data, parse_float=parse_float)
    except RecursionError:  # nested past the interpreter's limit, so past ours too
        raise ValueError(TOO_DEEP) from None
    except (ValueError, UnicodeDecodeError):
        raise ValueError(NOT_JSON) from None
    if deeper_than(document):
        raise ValueError(TOO_DEEP)
    return document
