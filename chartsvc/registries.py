"""OCI registry credentials from the Docker-style ``config.json`` that ``helm registry login`` writes.

The file maps registry hosts to base64 ``user:password`` (``{"auths": {"host": {"auth": "..."}}}``,
or separate ``username``/``password`` fields). An absent file means anonymous access. Credential
helpers (``credsStore``) are not run: the service never executes programs named in a config file.
This module never logs or returns what it reads except to the OCI client.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any

from common.errors import WharfError


class RegistryConfigInvalid(WharfError, code="registry-config-invalid"): ...


def read_credentials(path: Path) -> dict[str, tuple[str, str]]:
    """host → (user, password); {} when the file does not exist."""
    try:
        document = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise RegistryConfigInvalid(f"{path.name} is not a readable JSON file") from exc
    auths = document.get("auths") if isinstance(document, dict) else None
    if not isinstance(auths, dict):
        return {}
    found = {}
    for host, entry in auths.items():
        pair = _pair(entry) if isinstance(entry, dict) else None
        if pair is not None:
            found[_host(str(host))] = pair
    return found


def _pair(entry: dict[str, Any]) -> tuple[str, str] | None:
    if isinstance(entry.get("username"), str) and isinstance(entry.get("password"), str):
        return entry["username"], entry["password"]
    encoded = entry.get("auth")
    if not isinstance(encoded, str):
        return None
    try:
        user, sep, password = (
            base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
        )
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if sep else None


def _host(key: str) -> str:
    # Docker writes "https://index.docker.io/v1/" for Docker Hub and plain hosts for the rest.
    return key.removeprefix("https://").removeprefix("http://").split("/", 1)[0]
