"""A ``{scrypt}`` password setting is judged once, for every service: a malformed hash stops
start-up naming the setting and the command that prints a good one."""

from __future__ import annotations

import pytest

from common import credentials
from common.config import ConfigError

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
