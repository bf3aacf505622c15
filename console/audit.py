"""The audit trail: every mutating action (never a dry run) in a ring of 500 and on a logger.

Handlers of mutating endpoints call :func:`record` once the outcome is known, or wrap the action in
:func:`audited`, which records ``success`` or ``failure`` (with the error's code) and re-raises. The
ring is this process's memory, served newest first by ``GET /api/v1/audit``; every entry is also
written to the logger ``console.audit`` so a log pipeline keeps the history, and, when the console
has a database (SQLite or the PostgreSQL that replicas share), to its ``audit`` table, which keeps
everything: :func:`keep_durably` writes entries there in the background, in order, in batches, so a
handler never waits on it (and flushes what is queued when the console stops). Entries name the
target, never a body: no manifest, kubeconfig or password reaches the trail.

Every entry names the person (user and groups, as ``console.auth.acting_identity`` says) and the
identity the cluster saw: the person (``impersonated`` true), the console's own credentials
(false), or none when no cluster was called (null). The cluster access layer marks the request
with :data:`IMPERSONATED` when it builds the request's cluster API.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

import attrs
from aiohttp import web

from common.db import Database
from common.errors import WharfError
from console.auth import acting_identity, current_user

logger = logging.getLogger("console.audit")
RING_SIZE = 500
ANONYMOUS = "anonymous"


@attrs.frozen
class AuditEntry:
    time: float
    user: str
    cluster: str | None
    action: str
    target: str | None
    outcome: str
    detail: str | None = None
    groups: tuple[str, ...] = ()
    #: The cluster saw the person (True), the console's own identity (False), or no call (None).
    impersonated: bool | None = None


#: Set on a request by the cluster access layer: whether its cluster calls impersonate the person.
IMPERSONATED = web.RequestKey("console.impersonated", bool)


class AuditLog:
    def __init__(self, size: int = RING_SIZE) -> None:
        self._ring: deque[AuditEntry] = deque(maxlen=size)
        self._durable: asyncio.Queue[AuditEntry] | None = None

    def add(self, entry: AuditEntry) -> AuditEntry:
        self._ring.append(entry)
        if self._durable is not None:
            self._durable.put_nowait(entry)
        logger.info(
            "user=%s groups=%s as=%s cluster=%s action=%s target=%s outcome=%s%s",
            entry.user,
            ",".join(entry.groups) or "-",
            _cluster_identity(entry),
            entry.cluster or "-",
            entry.action,
            entry.target or "-",
            entry.outcome,
            f" detail={entry.detail}" if entry.detail else "",
        )
        return entry

    def newest_first(self, limit: int | None = None) -> list[AuditEntry]:
        entries = list(reversed(self._ring))
        return entries[:limit] if limit is not None else entries

    def __len__(self) -> int:
        return len(self._ring)


def _cluster_identity(entry: AuditEntry) -> str:
    if entry.impersonated is None:
        return "-"
    return "impersonated" if entry.impersonated else "console"


AUDIT = web.AppKey("console.audit", AuditLog)
_INSERT = (
    "INSERT INTO audit (time, username, cluster, action, target, outcome, detail, user_groups, "
    "impersonated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


async def keep_durably(log: AuditLog, db: Database) -> None:
    """Write every entry ``log`` gets from now on into ``db``'s ``audit`` table, until cancelled
    (then what is still queued is written before returning)."""
    queue: asyncio.Queue[AuditEntry] = asyncio.Queue()
    log._durable = queue
    writing: asyncio.Future[None] | None = None
    try:
        while True:
            batch = [await queue.get(), *_drain(queue)]
            writing = asyncio.ensure_future(_write(db, batch))
            await asyncio.shield(writing)  # a stop mid-write must not lose the batch
            writing = None
    except asyncio.CancelledError:
        log._durable = None
        if writing is not None:
            await writing  # the batch in flight is finished, neither lost nor written twice
        if left := _drain(queue):
            await _write(db, left)
        raise


def _drain(queue: asyncio.Queue[AuditEntry]) -> list[AuditEntry]:
    entries = []
    while not queue.empty():
        entries.append(queue.get_nowait())
    return entries


async def _write(db: Database, entries: list[AuditEntry]) -> None:
    rows = [
        (
            e.time,
            e.user,
            e.cluster,
            e.action,
            e.target,
            e.outcome,
            e.detail,
            ",".join(e.groups),
            None if e.impersonated is None else int(e.impersonated),
        )
        for e in entries
    ]
    try:
        async with db.transaction() as conn:
            await conn.executemany(_INSERT, rows)
    except Exception:  # the entries are in the ring and the log; the table misses them
        logger.exception("%d audit entries not written to the database", len(rows))


def record(
    request: web.Request,
    *,
    action: str,
    cluster: str | None = None,
    target: str | None = None,
    outcome: str = "success",
    detail: str | None = None,
) -> AuditEntry:
    """Record one mutating action done for ``request``'s user (``anonymous`` when none)."""
    entry = AuditEntry(
        time=time.time(),
        user=current_user(request) or ANONYMOUS,
        groups=acting_identity(request).groups if current_user(request) else (),
        impersonated=request.get(IMPERSONATED),
        cluster=cluster,
        action=action,
        target=target,
        outcome=outcome,
        detail=detail[:500] if detail else None,
    )
    return request.app[AUDIT].add(entry)


@contextmanager
def audited(
    request: web.Request, *, action: str, cluster: str | None = None, target: str | None = None
) -> Iterator[None]:
    """``with audited(request, action="scale", cluster=cid, target="apps/deployments/ns/web"):``"""
    try:
        yield
    except BaseException as exc:
        record(
            request,
            action=action,
            cluster=cluster,
            target=target,
            outcome="failure",
            detail=_failure(exc),
        )
        raise
    record(request, action=action, cluster=cluster, target=target)


def _failure(exc: BaseException) -> str:
    """Our error's status, code and detail; of anything else, only its type (it may hold a secret)."""
    if isinstance(exc, WharfError):
        return f"{exc.status} {exc.code or ''}: {exc.detail}".strip()
    return type(exc).__name__
