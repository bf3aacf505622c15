"""Running ``wharf`` as a user does: a real subprocess started from the checkout, its output as
text, its exit status left for the test to judge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_wharf(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``wharf ARGS`` with ``stdin`` as its input (a minute at most)."""
    return subprocess.run(
        [sys.executable, "-m", "wharf", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
