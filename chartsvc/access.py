"""Who may run a mutating operation: the deny-by-default API-key policy shared by REST and MCP.

Mutating is enabled only in FULL mode with a non-blank key; then the caller must present that key.
The MCP HTTP endpoints require the key whenever one is configured (``require_key``). Keys are
compared in constant time. Which operations mutate is the spec's ``x-mutating`` (read by
``chartsvc.operations``). This module knows nothing of HTTP; ``chartsvc.gate`` applies it to requests.
"""

from __future__ import annotations

import attrs

from chartsvc.settings import AccessMode, SecuritySettings
from common import credentials
from common.errors import Forbidden, Unauthorized

API_KEY_HEADER = "X-API-Key"


class MutationsDisabled(Forbidden, code="mutations-disabled"): ...


class InvalidApiKey(Unauthorized, code="invalid-api-key"): ...


@attrs.frozen
class AccessPolicy:
    mode: AccessMode
    api_key: str | None = attrs.field(default=None, repr=False)

    @classmethod
    def from_settings(cls, security: SecuritySettings) -> AccessPolicy:
        return cls(mode=security.mode, api_key=security.api_key)

    @property
    def key_configured(self) -> bool:
        return bool(self.api_key and self.api_key.strip())

    @property
    def mutating_enabled(self) -> bool:
        return self.mode is AccessMode.FULL and self.key_configured

    def allow_mutation(self, presented: str | None) -> None:
        """For a mutating operation: 403 when mutations are off, 401 when the key is missing or
        wrong."""
        if not self.mutating_enabled:
            raise MutationsDisabled(
                "mutating operations are disabled: set chartsvc.security.mode=FULL and "
                "chartsvc.security.api-key to enable them"
            )
        self.require_key(presented)

    def require_key(self, presented: str | None) -> None:
        """Raise 401 unless ``presented`` is the configured key."""
        if not self.key_matches(presented):
            raise InvalidApiKey(
                f"missing or invalid API key in the {API_KEY_HEADER} header",
                headers={"WWW-Authenticate": f'ApiKey header="{API_KEY_HEADER}"'},
            )

    def key_matches(self, presented: str | None) -> bool:
        if not self.api_key or presented is None:
            return False
        return credentials.same_secret(presented, self.api_key)
