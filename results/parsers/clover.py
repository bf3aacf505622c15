"""Clover XML coverage reports (PHPUnit ``--coverage-clover``, Istanbul/jest ``clover``).

Shape: ``coverage(generated) > project > [package >] file(name, path) > line(num, type, count)``
with ``type`` ``stmt`` (a statement line), ``cond`` (a branch line with ``truecount`` and
``falsecount``) or ``method`` (a declaration, which is not a line of its own here). The root is
``<coverage>`` as in Cobertura; the two are told apart by their attributes (Cobertura's root
always has ``line-rate``). This module must not resolve paths against any filesystem.
"""

from __future__ import annotations

from results.parsers.diagnostics import DiagnosticLog
from results.parsers.errors import InvalidReport
from results.parsers.linedata import FileTable, LineData, build_report
from results.parsers.model import CoverageReport


def is_clover_root(attrs: dict[str, str]) -> bool:
    return "line-rate" not in attrs and ("clover" in attrs or "generated" in attrs)


class CloverHandler:
    end_tags: frozenset[str] | None = frozenset({"file"})

    def __init__(self, log: DiagnosticLog) -> None:
        self._log = log
        self._files = FileTable()
        self._path = ""
        self._data: LineData | None = None

    def start(self, tag: str, attrs: dict[str, str]) -> int:
        if tag == "line" and self._data is not None:
            _line(self._data, attrs)
        elif tag == "file":
            self._path = attrs.get("path") or attrs.get("name", "")
            self._data = LineData()
        return 0

    def end(self, tag: str, text: str | None) -> None:
        if self._data is not None:
            self._files.add(self._path, self._data)
            self._data = None

    def result(self) -> CoverageReport:
        return build_report("clover", self._files.freeze(), self._log)


def _line(data: LineData, attrs: dict[str, str]) -> None:
    kind = attrs.get("type", "stmt")
    if kind == "method":
        return
    try:
        number = int(attrs["num"])
        ran = int(attrs.get("count", "0")) > 0
        if kind == "cond":
            taken = (int(attrs.get("truecount", "0")) > 0) + (int(attrs.get("falsecount", "0")) > 0)
            data.branch(number, taken, 2)
            ran = ran or taken > 0
    except (KeyError, ValueError) as exc:
        raise InvalidReport(f"bad Clover <line> {attrs}", reason="bad-value") from exc
    data.line(number, ran)
