"""The one error of the patch engines (``patching``, ``strategic``, ``apply``).

It carries the HTTP status kube-apiserver answers a refused patch with; ``fields`` turns it into a
``Status`` error. Nothing here knows about HTTP.
"""

from __future__ import annotations


class PatchError(Exception):
    """A patch the real apiserver would refuse, with the status it would answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
