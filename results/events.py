"""Live run events: fan-out of every committed ingest to the open event streams allowed to see it.

Ingest calls :meth:`EventHub.publish` after its transaction commits; publishing only puts the event
into each subscriber's bounded queue and never waits on a subscriber. A subscriber whose queue is full
is a laggard: its queue is emptied, it is told it was dropped, and its stream is closed so the client
reconnects with ``Last-Event-ID`` and catches up from the store. Private projects' events reach only
their members and admins, decided at publish time against the current membership list.

This module must not know HTTP or SSE framing (``results.http.events`` writes the stream) or SQL
(the store answers :class:`EventStore`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from typing import Protocol

import attrs

from common.errors import ServiceUnavailable, TooManyRequests
from results.runs import RunSummary, Visibility
from results.users import Principal

logger = logging.getLogger(__name__)


class EventStore(Protocol):
    """What the hub reads from the store: who belongs to a project, and runs to replay."""

    async def member_ids(self, project_id: int) -> frozenset[int]: ...
    async def recent_runs_after(self, run_id: int, *, limit: int) -> list[RunSummary]:
        """The newest ``limit`` runs above ``run_id``, oldest first."""


class TooManySubscribers(ServiceUnavailable, code="too-many-subscribers"):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the event stream is at its limit of {limit} subscribers; retry later",
            headers={"Retry-After": "10"},
        )


class TooManyFromAddress(TooManyRequests, code="too-many-streams"):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"this address already holds {limit} anonymous event streams; close some, log in, "
            "or retry later",
            headers={"Retry-After": "10"},
        )


def visible(principal: Principal | None, run: RunSummary, *, member: bool) -> bool:
    """Public runs go to every stream; private ones to admins and, when ``member``, members."""
    if run.visibility is not Visibility.PRIVATE:
        return True
    return principal is not None and (principal.is_admin or member)


@attrs.define(eq=False, slots=True)
class Subscription:
    """One open stream's mailbox: the events it has yet to send, at most ``limit`` of them.

    Held by every idle stream, so it is small: a list that stays empty while nothing happens and
    a future only while the stream waits (an ``asyncio.Queue`` holds three deques and an event,
    3 KB, for the same job). ``next()`` returning None means: you were dropped, stop.
    """

    principal: Principal | None
    limit: int
    on_drop: Callable[[], None] | None = None
    dropped: bool = False
    address: str | None = None  # set for an anonymous stream: it counts against its address
    pending: list[RunSummary] = attrs.field(factory=list)
    _waiter: asyncio.Future[None] | None = None

    def offer(self, event: RunSummary) -> bool:
        """Keep ``event`` without waiting; False (and the subscriber dropped) when it is full."""
        if self.dropped:
            return False
        if len(self.pending) >= self.limit:
            self.drop()
            return False
        self.pending.append(event)
        self._wake()
        return True

    def drop(self) -> None:
        self.dropped = True
        self.pending.clear()
        self._wake()
        if self.on_drop is not None:
            self.on_drop()

    async def next(self) -> RunSummary | None:
        while not self.pending and not self.dropped:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return None if self.dropped else self.pending.pop(0)

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


@attrs.define
class EventHub:
    store: EventStore
    queue_size: int = 256
    max_subscribers: int = 10_000
    replay_limit: int = 100
    max_anonymous_per_address: int = 64
    # State, not parameters: the open streams, events dropped for slow ones, and the open
    # anonymous streams by address.
    subscriptions: set[Subscription] = attrs.field(factory=set, init=False)
    dropped_total: int = attrs.field(default=0, init=False)
    anonymous: Counter[str] = attrs.field(factory=Counter, init=False)

    def subscribe(self, principal: Principal | None, *, address: str | None = None) -> Subscription:
        """A new stream's mailbox. Anonymous streams count against their client's address, so
        one host cannot take the slots everyone shares."""
        if len(self.subscriptions) >= self.max_subscribers:
            raise TooManySubscribers(self.max_subscribers)
        counted = address if principal is None else None
        if counted is not None:
            if self.anonymous[counted] >= self.max_anonymous_per_address:
                raise TooManyFromAddress(self.max_anonymous_per_address)
            self.anonymous[counted] += 1
        sub = Subscription(principal, self.queue_size, address=counted)
        self.subscriptions.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub not in self.subscriptions:
            return
        self.subscriptions.discard(sub)
        if sub.address is not None:
            self.anonymous[sub.address] -= 1
            if self.anonymous[sub.address] <= 0:
                del self.anonymous[sub.address]

    async def publish(self, event: RunSummary) -> None:
        """Deliver ``event`` to every allowed subscriber; waits only for the membership lookup."""
        private = event.visibility is Visibility.PRIVATE
        members = await self.store.member_ids(event.project_id) if private else frozenset()
        for sub in list(self.subscriptions):
            member = sub.principal is not None and sub.principal.user.id in members
            if visible(sub.principal, event, member=member) and not sub.offer(event):
                self.dropped_total += 1
                logger.warning("event subscriber dropped: %d events behind", self.queue_size)

    async def missed(self, principal: Principal | None, last_event_id: int) -> list[RunSummary]:
        """Runs after ``last_event_id`` that ``principal`` may see, oldest first, the newest
        ``replay_limit`` at most (older ones are on the dashboard, not worth a stream's burst)."""
        events = await self.store.recent_runs_after(last_event_id, limit=self.replay_limit)
        mine = principal.project_ids if principal is not None else frozenset()
        return [e for e in events if visible(principal, e, member=e.project_id in mine)]
