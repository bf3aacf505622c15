"""Password-guessing throttle: failed sign-ins cost the one guessing, not the server.

Failures are counted in a window under two keys: the account name *from that client address*,
and the client address alone (a budget for all the names it tries, ``address_free_failures``).
Counting an account only together with the address keeps the real admin signing in from their
own desk while someone elsewhere guesses their password five times a second: the guesser locks
only their own pair and their own address (issue 39, item 4), and a correct password from an
address with no failures is never refused. The ``free_failures``-th failure locks a key for 1 s,
and each further one doubles the lock (2 s, 4 s … up to ``max_lock_s``). While any key of an
attempt is locked the attempt is refused at once, before the password hash is computed, so a
flood of guesses costs the server a dictionary lookup each. A success clears the pair's key (not
the address's: one good password on a shared proxy does not reset the guessing of another
account behind it).

Memory is bounded: at most ``max_keys`` keys are kept, the least recently touched dropped first.
Time comes from a monotonic clock that tests may replace. :meth:`LoginThrottle.attempt` is the one
order every sign-in follows (check, verify, count the outcome); the services call only that.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import attrs

from common.errors import TooManyRequests, Unauthorized

T = TypeVar("T")


class TooManyAttempts(TooManyRequests, code="too-many-attempts"):
    def __init__(self, retry_after_s: float) -> None:
        seconds = max(1, math.ceil(retry_after_s))
        super().__init__(
            f"too many failed sign-ins; try again in {seconds} s",
            headers={"Retry-After": str(seconds)},
        )
        self.retry_after_s = seconds


@attrs.define
class _Record:
    failures: int = 0
    first: float = 0.0
    locked_until: float = 0.0


#: The prefix of an address's own key, whose budget is ``address_free_failures``.
ADDRESS = "addr:"


@attrs.define
class LoginThrottle:
    #: Wrong passwords one account may get from one address before a lock.
    free_failures: int = 5
    #: Wrong passwords one address may send, over every account name, before a lock: enough for
    #: an office behind one NAT mistyping now and then, far too few for a dictionary.
    address_free_failures: int = 30
    window_s: float = 15 * 60
    max_lock_s: float = 15 * 60
    max_keys: int = 10_000
    clock: Callable[[], float] = time.monotonic
    _records: OrderedDict[str, _Record] = attrs.field(factory=OrderedDict, init=False)

    async def attempt(
        self, user: str, address: str | None, verify: Callable[[], Awaitable[T]]
    ) -> T:
        """Sign ``user`` in from ``address`` with ``verify``, which raises ``Unauthorized`` on a
        wrong password: refused at once while locked (before the hash costs anything), a failure
        counted, a success clearing the account's count."""
        keys = login_keys(user, address)
        self.check(keys)
        try:
            signed_in = await verify()
        except Unauthorized:
            self.failed(keys)
            raise
        self.succeeded(keys[0])
        return signed_in

    def check(self, keys: Iterable[str]) -> None:
        """Raise :class:`TooManyAttempts` if any key is locked now."""
        now = self.clock()
        wait = max((self._wait(key, now) for key in keys), default=0.0)
        if wait > 0:
            raise TooManyAttempts(wait)

    def failed(self, keys: Iterable[str]) -> None:
        now = self.clock()
        for key in keys:
            record = self._records.pop(key, None)
            if record is None or now - record.first > self.window_s:
                record = _Record(first=now)
            record.failures += 1
            free = self.address_free_failures if key.startswith(ADDRESS) else self.free_failures
            over = record.failures - free
            if over >= 0:
                record.locked_until = now + min(self.max_lock_s, 2.0**over)
            self._records[key] = record
            while len(self._records) > self.max_keys:
                self._records.popitem(last=False)

    def succeeded(self, key: str) -> None:
        self._records.pop(key, None)

    def _wait(self, key: str, now: float) -> float:
        record = self._records.get(key)
        if record is None:
            return 0.0
        self._records.move_to_end(key)
        return max(0.0, record.locked_until - now)


def login_keys(user: str, address: str | None) -> tuple[str, ...]:
    """The keys one sign-in attempt is counted under: the account from this address (first: the
    one a success clears), then the address alone."""
    named = f"user:{user.strip().lower()[:256]}@{address or ''}"
    return (named, f"{ADDRESS}{address}") if address else (named,)
