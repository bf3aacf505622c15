"""Who is looking: the request's principal turned into the ``CanRead`` the domain asks for.

Until the auth middleware is wired every caller is anonymous and sees PUBLIC projects only. This
module must not decide visibility itself.
"""

from __future__ import annotations

from aiohttp import web

from results.runs import CanRead, public_only


def can_read(request: web.Request) -> CanRead:
    return public_only
