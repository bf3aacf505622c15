"""Who is looking: the request's principal turned into the ``CanRead`` the domain asks for.

The auth middleware (``results.auth``) puts the principal on the request; without one the caller is
anonymous and sees PUBLIC projects only. This module must not decide visibility itself: that is
``results.accounts.can_read``.
"""

from __future__ import annotations

import functools

from aiohttp import web

from results import accounts, auth
from results.runs import CanRead


def can_read(request: web.Request) -> CanRead:
    return functools.partial(accounts.can_read, auth.principal(request))
