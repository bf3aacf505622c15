"""Kubernetes quantities as numbers: CPU in cores (``250m``, ``1``, ``12345n``), sizes in bytes
(``64Mi``, ``1G``, ``1048576``). ValueError for anything else."""

from __future__ import annotations

import re

_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(n|u|m|Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")
_FACTORS: dict[str | None, float] = {
    None: 1.0,
    "n": 1e-9,
    "u": 1e-6,
    "m": 1e-3,
    **{s: float(1024 ** (i + 1)) for i, s in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))},
    **{s: float(1000 ** (i + 1)) for i, s in enumerate(("k", "M", "G", "T", "P", "E"))},
}


def parse(text: str) -> float:
    match = _QUANTITY.match(str(text).strip())
    if match is None:
        raise ValueError(f"not a quantity: {str(text)[:40]!r}")
    return float(match.group(1)) * _FACTORS[match.group(2)]


def cores(text: str) -> float:
    return parse(text)


def size_bytes(text: str) -> int:
    return int(parse(text))


def mebibytes(size: int) -> str:
    """``size`` bytes as whole mebibytes, rounded up (``134217728`` → ``128Mi``)."""
    return f"{-(-size // (1024 * 1024))}Mi"
