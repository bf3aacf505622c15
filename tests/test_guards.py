"""Guards over the whole project: settings are documented and every doc string says something."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from common.cli import config_docs
from common.config import SERVICE_SECTIONS, describe

ROOT = Path(__file__).resolve().parents[1]


def test_configuration_docs_are_current() -> None:
    committed = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    assert committed == config_docs(), "regenerate with: wharf config-docs > docs/configuration.md"


def test_every_setting_has_a_doc_and_appears_in_the_docs() -> None:
    docs = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    services = [s for s in SERVICE_SECTIONS if importlib.util.find_spec(f"{s}.settings")]
    assert services, "no service declares settings"
    for service in services:
        for info in describe(importlib.import_module(f"{service}.settings").Settings):
            assert len(info.doc) > 10, info.key
            assert f"`{info.key}`" in docs, info.key
