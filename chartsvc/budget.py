"""A byte budget for uploads in flight, so concurrent large uploads cannot exhaust memory.

Chart uploads are held in memory (Helm loads archives as bytes), so twenty simultaneous 100 MiB
uploads would need gigabytes. A request that carries one reserves its size before its body is read
and releases it when the response is done; one that cannot get its share within ``wait_s`` gets 503
with ``Retry-After``. The budget is four times the upload cap, at least 256 MiB. Both doors draw on
one budget per app: the REST multipart routes and the MCP posts that carry archives in base64
(``chartsvc.http.budget`` meters both). This module only counts; it knows nothing of HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import attrs

from common.errors import ServiceUnavailable

MiB = 1024 * 1024


@attrs.define
class UploadBudget:
    total: int
    wait_s: float = 30.0
    # What is in flight and who waits: state, not parameters.
    _used: int = attrs.field(default=0, init=False)
    _waiting: int = attrs.field(default=0, init=False)
    _changed: asyncio.Condition = attrs.field(factory=asyncio.Condition, init=False)

    @classmethod
    def for_cap(cls, max_upload_size: int) -> UploadBudget:
        return cls(total=max(4 * max_upload_size, 256 * MiB))

    @property
    def used(self) -> int:
        return self._used

    @contextlib.asynccontextmanager
    async def reserve(self, size: int) -> AsyncIterator[None]:
        size = min(size, self.total)  # one request may always use the whole budget alone
        if self._used + size > self.total:  # the common case (room) needs no lock and no task
            await self._wait_for_room(size)
        self._used += size
        try:
            yield
        finally:
            self._used -= size
            if self._waiting:
                async with self._changed:
                    self._changed.notify_all()

    async def _wait_for_room(self, size: int) -> None:
        self._waiting += 1
        try:
            async with self._changed:
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self._used + size <= self.total), self.wait_s
                )
        except TimeoutError:
            raise ServiceUnavailable(
                "too many uploads in progress; retry shortly", headers={"Retry-After": "5"}
            ) from None
        finally:
            self._waiting -= 1
