"""Chart dependency resolution into Chart.lock content that Helm accepts as its own.

``resolve_lock`` reads ``Chart.yaml`` (``requirements.yaml`` for apiVersion v1 charts) from a chart
archive, resolves each dependency's version constraint against its repository's versions, and
renders the lock. Its ``digest`` is byte-for-byte Helm's ``resolver.HashReq``: the sha256 of Go's
``json.Marshal([2][]*chart.Dependency{requested, locked})`` — struct field order, ``omitempty``,
HTML-safe escaping and all — so ``helm dependency build`` does not call the lock out of sync.

Two choices differ from the ``helm`` CLI on purpose: a dependency whose repository URL is not a
configured repository is still resolved (the caller's ``versions_for`` fetches it) instead of being
locked to the constraint as written; ``file://`` dependencies are refused because the server has no
chart directories.

This module must not fetch anything itself (the caller's callbacks do, through the address guard),
extract archives to disk, or know about HTTP.
"""

from __future__ import annotations

from chartsvc.deps.gocompat import go_json, hash_req
from chartsvc.deps.model import (
    BadChartArchive,
    ChartArchiveTooLarge,
    Dependency,
    InvalidDependency,
    LocalDependencyRefused,
    NoMatchingVersion,
    UnknownRepositoryAlias,
)
from chartsvc.deps.resolve import render_lock, resolve_lock, rfc3339

__all__ = [
    "BadChartArchive",
    "ChartArchiveTooLarge",
    "Dependency",
    "InvalidDependency",
    "LocalDependencyRefused",
    "NoMatchingVersion",
    "UnknownRepositoryAlias",
    "go_json",
    "hash_req",
    "render_lock",
    "resolve_lock",
    "rfc3339",
]
