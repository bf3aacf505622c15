"""Reads the ``time`` attribute of JUnit reports, which producers write in several notations.

Seen in the wild: ``"0.03"``, ``"0,03"`` (locale decimal comma, old Surefire), ``"2,120.532"``
(thousands separator, Surefire 3.1.0 and the JUnit console launcher), ``"1E-07"`` (.NET). The
original project read the comma forms as 0; here they are read as what they mean and reported.
Unusable values (negative, NaN, infinite, garbage) become None, never 0. This module must not
guess units: times are seconds.
"""

from __future__ import annotations

import math


def parse_duration(text: str | None) -> tuple[float | None, str | None]:
    """Return ``(seconds, note)``; ``note`` is None for a plain decimal, else what was fixed."""
    if text is None:
        return None, None
    try:
        value = float(text)
    except ValueError:
        return _lenient(text)
    if not math.isfinite(value) or value < 0:
        return None, f"time {text!r} is not a usable duration; stored as unknown"
    if "e" in text or "E" in text:
        return value, f"time {text!r} in exponent notation read as {value:g} s"
    return value, None


def _lenient(text: str) -> tuple[float | None, str | None]:
    cleaned = _normalise_separators(text.strip())
    try:
        value = float(cleaned)
    except ValueError:
        return None, f"time {text!r} is not a number; stored as unknown"
    if not math.isfinite(value) or value < 0:
        return None, f"time {text!r} is not a usable duration; stored as unknown"
    return value, f"time {text!r} read as {value:g} s"


def _normalise_separators(text: str) -> str:
    if "," in text and "." in text:
        if text.rfind(",") < text.rfind("."):
            return text.replace(",", "")  # 2,120.532: comma groups thousands
        return text.replace(".", "").replace(",", ".")  # 2.120,532: dot groups thousands
    if text.count(",") == 1:
        return text.replace(",", ".")  # 0,03: decimal comma
    return text.replace(",", "")  # 1,234,567: only thousands separators
