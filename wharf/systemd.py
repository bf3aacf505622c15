"""Telling systemd a served process is ready (``Type=notify`` units): the ``sd_notify`` protocol,
one datagram to ``$NOTIFY_SOCKET``. Nothing happens when the variable is unset (not under systemd).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping


def notify(state: str, environ: Mapping[str, str]) -> bool:
    """Send ``state`` (``READY=1``, ``STOPPING=1``); False when there is no one to tell."""
    address = environ.get("NOTIFY_SOCKET", "")
    if not address or address[0] not in "/@":
        return False
    if address[0] == "@":  # an abstract socket: a leading NUL byte instead of the "@"
        address = "\0" + address[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.connect(address)
        sock.sendall(state.encode())
    return True
