"""Where the simulator knowingly differs from kube-apiserver, as data: the bullets of the
simulator's ``README.md`` (its one list), each with the heading it stands under.

Served at :data:`PATH` (public, like ``/version``) so that a client which finds a simulator — the
console's ``/api/v1/about`` — can say what it should not trust it for. Read once per process.
"""

from __future__ import annotations

import functools
from pathlib import Path

#: Where the list is served. The ``X-Kubesim`` header on ``/version`` names the same path.
PATH = "/kubesim/differences"
README = Path(__file__).parents[1] / "README.md"


@functools.cache
def differences() -> tuple[dict[str, str], ...]:
    """``({"area": heading, "text": bullet}, ...)`` in the README's order."""
    return tuple(parse(README.read_text("utf-8")))


def parse(markdown: str) -> list[dict[str, str]]:
    """The ``- `` bullets under each ``## `` heading; a bullet's indented lines join it."""
    found: list[dict[str, str]] = []
    area = ""
    for line in markdown.splitlines():
        if line.startswith("## "):
            area = line[3:].strip()
        elif line.startswith("- ") and area:
            found.append({"area": area, "text": line[2:].strip()})
        elif line.startswith("  ") and line.strip() and found and found[-1]["area"] == area:
            found[-1]["text"] += " " + line.strip()
    return found
