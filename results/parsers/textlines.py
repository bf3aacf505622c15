"""Line-by-line reading of the text coverage formats (LCOV, Go coverprofile) under a length cap.

A text report is streamed like the XML ones: one line in memory at a time, and a line longer
than ``ParseLimits.max_line_chars`` is refused instead of buffered. Bytes that are not UTF-8
are replaced, not fatal. This module must not know any format.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from results.parsers.errors import InvalidReport
from results.parsers.model import ParseLimits


def text_lines(stream: io.BufferedIOBase, limits: ParseLimits) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, stripped text)`` from 1; a leading BOM is dropped."""
    longest = limits.max_line_chars
    number = 0
    while raw := stream.readline(longest + 1):
        number += 1
        if len(raw) > longest and not raw.endswith(b"\n"):
            raise InvalidReport(
                f"line {number} is longer than {longest} bytes", reason="line-too-long", line=number
            )
        text = raw.decode("utf-8", "replace").strip()
        if number == 1:
            text = text.lstrip("\ufeff")
        yield number, text
