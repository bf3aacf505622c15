"""The layer rule import-linter cannot say: which modules may import ``aiohttp.web``.

import-linter sees external packages only at their root (``aiohttp``), so it cannot forbid
``aiohttp.web`` while allowing ``aiohttp``'s client; who may import ``helm_python`` and how the
layers depend on each other are its contracts in ``pyproject.toml``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import chartsvc

PACKAGE = Path(chartsvc.__file__).parent
HTTP_MODULES = {"app.py", "gate.py", "keys.py"}  # plus everything under http/ and mcp/


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    """Import nodes under ``if TYPE_CHECKING:``: annotations only, never run."""
    skipped: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped.update(ast.walk(inner))
    return skipped


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    tree = ast.parse(path.read_text("utf-8"))
    skipped = _type_checking_only(tree)
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


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
