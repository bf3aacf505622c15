"""Logs (``spec/console.logs.yaml``): the sources followed and each line, as SSE data."""

from __future__ import annotations

from typing import TypedDict

from console.streams.logmux import Sources
from console.streams.logs import LogLine


class LogSource(TypedDict):
    pod: str
    container: str
    init: bool


class LogSources(TypedDict):
    sources: list[LogSource]
    total: int
    truncated: bool


class LogEvent(TypedDict):
    pod: str
    container: str
    time: str
    line: str


def encode_sources(found: Sources) -> LogSources:
    return {
        "sources": [
            {"pod": s.pod, "container": s.container, "init": s.init} for s in found.followed
        ],
        "total": found.total,
        "truncated": found.truncated,
    }


def encode_line(line: LogLine) -> LogEvent:
    return {
        "pod": line.source.pod,
        "container": line.source.container,
        "time": line.time,
        "line": line.text,
    }
