"""What a module imports, read from its source: for the layer tests import-linter cannot express."""

from __future__ import annotations

import ast
from pathlib import Path


def imported(path: Path) -> set[str]:
    """Every module and ``module.name`` the file at ``path`` imports when it runs: imports under
    ``if TYPE_CHECKING:`` are annotations only and are left out."""
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


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    """Import nodes under ``if TYPE_CHECKING:``: annotations only, never run."""
    skipped: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped.update(ast.walk(inner))
    return skipped
