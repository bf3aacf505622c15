"""Kubernetes resource quantities (``250m``, ``1.5``, ``128Mi``, ``1G``) as numbers and back.

Only what the scheduler, the kubelet and the metrics API need: CPU in millicores and everything
else in bytes (or plain units), and the canonical forms metrics-server writes (``n`` cores, ``Ki``).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

_SUFFIX = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_RE = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")


def parse(value: Any) -> Decimal:
    """A quantity's value in base units; malformed input counts as zero, never raises."""
    if isinstance(value, int | float):
        return Decimal(str(value))
    match = _RE.match(str(value).strip())
    if not match:
        return Decimal(0)
    try:
        return Decimal(match.group(1)) * _SUFFIX[match.group(2) or ""]
    except InvalidOperation:
        return Decimal(0)


def millicores(value: Any) -> int:
    return int(parse(value) * 1000)


def as_int(value: Any) -> int:
    return int(parse(value))


def cpu_nanocores(nanocores: int) -> str:
    return f"{max(0, nanocores)}n"


def memory_ki(num_bytes: int) -> str:
    return f"{max(0, num_bytes) // 1024}Ki"


def container_requests(container: dict[str, Any]) -> tuple[int, int]:
    """(millicores, bytes) requested; limits stand in for missing requests, as defaulting does."""
    res = container.get("resources") or {}
    req, lim = res.get("requests") or {}, res.get("limits") or {}
    cpu = req.get("cpu", lim.get("cpu", 0))
    mem = req.get("memory", lim.get("memory", 0))
    return millicores(cpu), as_int(mem)


def pod_requests(spec: dict[str, Any]) -> tuple[int, int]:
    """What a pod needs on a node: app containers summed, init containers at their peak."""
    apps = [container_requests(c) for c in spec.get("containers") or []]
    inits = [container_requests(c) for c in spec.get("initContainers") or []]
    cpu = max([sum(a[0] for a in apps), *(i[0] for i in inits)])
    mem = max([sum(a[1] for a in apps), *(i[1] for i in inits)])
    return cpu, mem


_SPLIT = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_EXPONENT = re.compile(r"^[eE][-+]?[0-9]+$")


def syntax_error(value: Any) -> str | None:
    """Why ``resource.ParseQuantity`` refuses ``value`` (its exact error text), or None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return None
    match = re.match(_SPLIT, str(value).strip())
    if not match:
        return f"quantities must match the regular expression '{_SPLIT}'"
    number, suffix = match.groups()
    if number.count(".") > 1 or number.strip("+-") == ".":
        return "unable to parse numeric part of quantity"
    if suffix not in _SUFFIX and not _EXPONENT.match(suffix):
        return "unable to parse quantity's suffix"
    return None


_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (
    ("E", 18),
    ("P", 15),
    ("T", 12),
    ("G", 9),
    ("M", 6),
    ("k", 3),
    ("", 0),
    ("m", -3),
    ("u", -6),
    ("n", -9),
)


def is_binary(value: Any) -> bool:
    """Whether a quantity is written with a binary suffix (``Mi``), which its sums keep."""
    return str(value).strip().endswith("i")


def canonical(value: Decimal, *, binary: bool = False) -> str:
    """The canonical text of a quantity, as ``resource.Quantity.String()`` writes it: the largest
    binary suffix that divides it when ``binary``, else the largest power-of-1000 suffix that
    keeps the number whole (``1500``, ``2k``, ``1500m``)."""
    if value == 0:
        return "0"
    if binary and value == value.to_integral_value():
        for suffix, size in _BINARY:
            if value % size == 0:
                return f"{int(value / size)}{suffix}"
    for suffix, exponent in _DECIMAL:
        scaled = value.scaleb(-exponent)
        if scaled == scaled.to_integral_value():
            return f"{int(scaled)}{suffix}"
    return f"{int(value.scaleb(9).to_integral_value(rounding='ROUND_CEILING'))}n"


def qos_class(spec: dict[str, Any]) -> str:
    """A pod's QoS class, as the apiserver sets it on create and the kubelet reports it."""
    containers = (spec.get("containers") or []) + (spec.get("initContainers") or [])
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    for r in resources:
        limits, requests = r.get("limits") or {}, r.get("requests") or {}
        for res in ("cpu", "memory"):
            if res not in limits or parse(requests.get(res, limits[res])) != parse(limits[res]):
                return "Burstable"
    return "Guaranteed"
