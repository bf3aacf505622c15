"""A malformed ``{scrypt}`` admin password stops start-up naming the setting, as the console's does."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.config import ConfigError
from results.app import create_app
from tests.results.support import settings_for


@pytest.mark.parametrize("value", ["{scrypt}nonsense", "{scrypt}scrypt$3$8$1$c2FsdA$aGFzaA"])
def test_a_malformed_results_admin_hash_stops_start_up(tmp_path: Path, value: str) -> None:
    settings = settings_for(
        tmp_path,
        "results.security.admin.username=root",
        f"results.security.admin.password={value}",
    )
    with pytest.raises(ConfigError, match=r"results\.security\.admin\.password"):
        create_app(settings)
