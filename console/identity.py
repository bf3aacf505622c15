"""Who a request acts as toward a cluster: a user name and its groups.

The auth middleware (``console.auth``) decides a request's identity once: a signed-in person's
name and groups, or the anonymous identity the settings name for public reads in open mode. The
cluster access layer sends it as ``Impersonate-User`` and ``Impersonate-Group`` headers where a
cluster impersonates, and the audit trail records it. This module only declares the value: it
does no I/O and knows nothing of HTTP.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Identity:
    """A person (or the anonymous visitor) as the cluster should see them."""

    user: str
    groups: tuple[str, ...] = ()
    #: True for the anonymous visitor of open mode (no credential was sent).
    anonymous: bool = False
