"""Layer rules import-linter cannot say per module: who may import helm_python and aiohttp.web."""

from __future__ import annotations

import ast
from pathlib import Path

import chartsvc

PACKAGE = Path(chartsvc.__file__).parent
HTTP_MODULES = {"app.py", "gate.py", "keys.py"}  # plus everything under http/ (and, later, mcp/)


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_only_the_engine_imports_helm_python() -> None:
    users = [
        str(p.relative_to(PACKAGE))
        for p in modules()
        if any(n == "helm_python" or n.startswith("helm_python.") for n in imported(p))
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
