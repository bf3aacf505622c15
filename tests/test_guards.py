"""Guards over the whole project: settings are documented and every doc string says something."""

from __future__ import annotations

from pathlib import Path

from common.config import describe
from tests.imports import imported
from wharf.cli import config_docs
from wharf.services import SERVICES

ROOT = Path(__file__).resolve().parents[1]


def test_configuration_docs_are_current() -> None:
    committed = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    assert committed == config_docs(), "regenerate with: wharf config-docs > docs/configuration.md"


def test_every_setting_has_a_doc_and_appears_in_the_docs() -> None:
    docs = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    for service in SERVICES.values():
        for info in describe(service.settings):
            assert len(info.doc) > 10, info.key
            assert f"`{info.key}`" in docs, info.key


# Domain modules: plain async functions and attrs classes that know nothing of HTTP serving.
# import-linter cannot forbid a subpackage of an external package (aiohttp.web), so this reads
# the imports itself.
DOMAIN = [
    "chartsvc/charts.py",
    "chartsvc/repos",
    "chartsvc/deps",
    "chartsvc/semver.py",
    "chartsvc/hub.py",
    "chartsvc/oci",
    "chartsvc/operations.py",
    "chartsvc/releases",
    "chartsvc/helm",
    # results: the store and everything under it in its layers contract.
    "results/parsers",
    "results/store",
    "results/accounts.py",
    "results/badges.py",
    "results/batch.py",
    "results/browse.py",
    "results/compare.py",
    "results/dashboard.py",
    "results/errors.py",
    "results/events.py",
    "results/fields.py",
    "results/flakiness.py",
    "results/gate.py",
    "results/history.py",
    "results/ingest.py",
    "results/metrics.py",
    "results/reads.py",
    "results/replicas.py",
    "results/runs.py",
    "results/runstore.py",
    "results/settings.py",
    "results/trends.py",
    "results/users.py",
    # console: everything under audit and auth in its layers contract.
    "console/actions",
    "console/clusters",
    "console/diagnose",
    "console/helm",
    "console/resources",
    "console/streams",
    "console/usage",
    "console/about.py",
    "console/credentials.py",
    "console/errors.py",
    "console/metrics.py",
    "console/settings.py",
]


def test_domain_modules_never_import_aiohttp_web() -> None:
    offenders = []
    for entry in DOMAIN:
        target = ROOT / entry
        files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
        assert files, entry
        assert all(f.exists() for f in files), entry
        for file in files:
            bad = {n for n in imported(file) if n == "aiohttp.web" or n.startswith("aiohttp.web")}
            if bad:
                offenders.append(f"{file.relative_to(ROOT)}: {sorted(bad)}")
    assert not offenders, offenders


def test_every_package_directory_is_a_package() -> None:
    """A folder of modules without __init__.py is left out of a normal install."""
    missing = [
        str(d.relative_to(ROOT))
        for top in ("chartsvc", "results", "console", "common", "kubeclient", "wharf")
        for d in [ROOT / top, *(ROOT / top).rglob("*")]
        if d.is_dir()
        and d.name != "__pycache__"
        and any(d.glob("*.py"))
        and not (d / "__init__.py").exists()
    ]
    assert not missing, missing
