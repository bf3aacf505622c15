"""The change under test for patch coverage: ``git diff --no-color <base>...HEAD`` of a work tree.

``wharf results upload`` sends it when it runs inside a git work tree. The base is ``--base``
when given, else the merge base of HEAD with the default branch: ``origin/HEAD`` (what the remote
calls its default), else ``main``, else ``master``. No work tree, no such branch or a failing git
is not an error of the upload: it goes without a diff and says why.
This module must not talk to the results server.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import attrs

DEFAULT_BRANCHES = ("origin/HEAD", "main", "master")


@attrs.frozen
class Change:
    base: str | None  # the base commit, full SHA
    diff: bytes | None  # None: no diff, ``why`` says why
    why: str = ""


def change(cwd: Path, base: str | None) -> Change:
    """The diff of HEAD against ``base`` (or the merge base with the default branch)."""
    if _git(cwd, "rev-parse", "--is-inside-work-tree") != b"true":
        return Change(None, None, "not in a git work tree")
    if base is None:
        for branch in DEFAULT_BRANCHES:
            found = _git(cwd, "merge-base", "HEAD", branch)
            if found:
                base = found.decode()
                break
        else:
            return Change(
                None, None, "no default branch (origin/HEAD, main, master) to diff against"
            )
    full = _git(cwd, "rev-parse", "--verify", f"{base}^{{commit}}")
    if not full:
        return Change(None, None, f"git knows no commit {base!r}")
    diff = _git(cwd, "diff", "--no-color", "--no-ext-diff", f"{full.decode()}...HEAD", strip=False)
    if diff is None:
        return Change(full.decode(), None, f"git diff {base}...HEAD failed")
    return Change(full.decode(), diff)


def _git(cwd: Path, *args: str, strip: bool = True) -> bytes | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() if strip else done.stdout
