"""Passwords for every service: a ``{scrypt}`` password setting is judged once (a malformed hash
stops start-up naming the setting and the command that prints a good one), and accounts hash theirs
through one ``Hasher``."""

from __future__ import annotations

import pytest

from common import credentials
from common.config import ConfigError
from common.errors import BadRequest

MALFORMED = ["{scrypt}nonsense", "{scrypt}scrypt$3$8$1$c2FsdA$aGFzaA"]


def test_a_plain_password_carries_no_hash() -> None:
    assert credentials.setting_hash("plain", setting="results.security.admin.password") is None
    made = credentials.settings_hash("s3cret")
    found = credentials.setting_hash(made, setting="results.security.admin.password")
    assert found is not None
    assert credentials.matches("s3cret", found)


@pytest.mark.parametrize("value", MALFORMED)
def test_a_malformed_hash_names_the_setting_and_its_command(value: str) -> None:
    with pytest.raises(ConfigError, match=r"results\.security\.admin\.password") as raised:
        credentials.setting_hash(value, setting="results.security.admin.password")
    assert "wharf results hash-password" in str(raised.value)
    assert value not in str(raised.value)


async def test_the_accounts_hasher_refuses_an_empty_password_and_no_hash_never_matches() -> None:
    hasher = credentials.Hasher()
    with pytest.raises(BadRequest, match="must not be empty"):
        await hasher.hash("")
    encoded = await hasher.hash("s3cret")
    assert await hasher.verify("s3cret", encoded)
    assert not await hasher.verify("other", encoded)
    assert not await hasher.verify("s3cret", None)  # an unknown account: a dummy hash is checked
