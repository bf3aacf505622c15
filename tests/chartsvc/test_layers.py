"""Layer rules import-linter cannot say per module: who may import helm_python and aiohttp.web."""

from __future__ import annotations

import ast
from pathlib import Path

import chartsvc

PACKAGE = Path(chartsvc.__file__).parent
HTTP_MODULES = {"app.py", "gate.py", "keys.py"}  # plus everything under http/ (and, later, mcp/)


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


def test_only_the_engine_imports_helm_python() -> None:
    # The release group keeps its own Helm adapter modules (release_*.py), written by its issue.
    users = [
        str(p.relative_to(PACKAGE))
        for p in modules()
        if any(n == "helm_python" or n.startswith("helm_python.") for n in imported(p))
        and not p.name.startswith("release_")
    ]
    assert users == ["engine.py"]


def test_domain_modules_do_not_import_aiohttp_web() -> None:
    offenders = []
    for path in modules():
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in ("http", "mcp") or str(relative) in HTTP_MODULES:
            continue
        if {"aiohttp.web", "aiohttp.web_request"} & imported(path):
            offenders.append(str(relative))
    assert offenders == []
