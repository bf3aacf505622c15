"""Collects parse diagnostics, folding repeats so a 20,000-case file yields a handful of entries.

A parser records what it noticed (``note(code, message)``); the first message of a code is kept
as the example and later ones only raise its count. This module must not decide whether a
diagnostic is fatal: refusals are exceptions from ``errors``.
"""

from __future__ import annotations

from results.parsers.model import Diagnostic


class DiagnosticLog:
    def __init__(self) -> None:
        self._first: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def note(self, code: str, message: str) -> None:
        if code in self._counts:
            self._counts[code] += 1
            return
        self._first[code] = message
        self._counts[code] = 1

    def extend(self, diagnostics: tuple[Diagnostic, ...]) -> None:
        for diag in diagnostics:
            if diag.code in self._counts:
                self._counts[diag.code] += diag.count
            else:
                self._first[diag.code] = diag.message
                self._counts[diag.code] = diag.count

    def result(self) -> tuple[Diagnostic, ...]:
        return tuple(
            Diagnostic(code=code, message=message, count=self._counts[code])
            for code, message in self._first.items()
        )
