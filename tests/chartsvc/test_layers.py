"""The layer rule import-linter cannot say: which modules may import ``aiohttp.web``.

import-linter sees external packages only at their root (``aiohttp``), so it cannot forbid
``aiohttp.web`` while allowing ``aiohttp``'s client; who may import ``helm_python`` and how the
layers depend on each other are its contracts in ``pyproject.toml``.
"""

from __future__ import annotations

from pathlib import Path

import chartsvc
from tests.imports import imported

PACKAGE = Path(chartsvc.__file__).parent
HTTP_MODULES = {"app.py", "gate.py", "keys.py"}  # plus everything under http/ and mcp/


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_domain_modules_do_not_import_aiohttp_web() -> None:
    offenders = []
    for path in modules():
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in ("http", "mcp") or str(relative) in HTTP_MODULES:
            continue
        if {"aiohttp.web", "aiohttp.web_request"} & imported(path):
            offenders.append(str(relative))
    assert offenders == []
