"""Fixtures both console groups use: simulators, a two-context kubeconfig, and app factories.

``sim`` / ``sim_b`` are two simulated clusters (contexts ``alpha`` and ``beta``) started once per
test module on their own threads; tests keep to their own namespaces. ``kubeconfig`` holds both
contexts, so an app made by ``console_app`` registers the clusters ``alpha`` and ``beta``;
``kubectl`` is the real one on ``sim``, the oracle of the object tests.
``console_app(**settings)`` builds a started test client (response validation on) with the admin
password ``support.ADMIN_PASSWORD``; ``client`` is one in open mode; ``console_on(fake, *settings)``
one whose only cluster, ``fake``, is a fake API server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from console.app import create_app
from kubesim import Simulator
from tests.conftest import ApiClient
from tests.console.fakeapi import LegacyApiServer, StartFake, fake_kubeconfig
from tests.console.fakeapi import fake_api as fake_api  # a fixture for every console test
from tests.console.resources_support import Kubectl
from tests.console.support import make_settings, merged_kubeconfig
from tests.typing_support import Client

ConsoleApp = Callable[..., Awaitable[Client]]
ConsoleOn = Callable[..., Awaitable[Client]]


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    with Simulator(tmp_path_factory.mktemp("sim-alpha"), context="alpha") as s:
        yield s


@pytest.fixture(scope="module")
def sim_b(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    with Simulator(tmp_path_factory.mktemp("sim-beta"), context="beta") as s:
        yield s


@pytest.fixture(scope="module")
def kubectl(sim: Simulator, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """The real kubectl on this module's ``sim`` (the live one where a module overrides it)."""
    return Kubectl(sim, tmp_path_factory.mktemp("kubectl"))


@pytest.fixture
def kubeconfig(sim: Simulator, sim_b: Simulator, tmp_path: Path) -> Path:
    """A kubeconfig with the contexts ``alpha`` (current) and ``beta``."""
    return merged_kubeconfig([sim, sim_b], tmp_path / "kubeconfig")


@pytest.fixture
def console_app(api_client: ApiClient, kubeconfig: Path, tmp_path: Path) -> ConsoleApp:
    """``await console_app("security.open-mode=false", environ={...})`` → a started client.

    Settings default to a data dir under ``tmp_path`` and the two-context kubeconfig as
    ``KUBECONFIG``; pass ``environ`` to replace the environment, ``data_dir`` to share a store.
    """

    async def make(
        *overrides: str,
        environ: dict[str, str] | None = None,
        data_dir: Path | None = None,
    ) -> Client:
        settings = make_settings(data_dir or tmp_path / "console", *overrides)
        env = environ if environ is not None else {"KUBECONFIG": str(kubeconfig)}
        return await api_client(create_app(settings, environ=env))

    return make


@pytest.fixture
def console_on(fake_api: StartFake, console_app: ConsoleApp, tmp_path: Path) -> ConsoleOn:
    """``await console_on(fake, "clusters.warm-up=false")`` → a started client whose one cluster,
    ``fake``, is served by the fake API server ``fake``."""

    async def make(fake: LegacyApiServer, *overrides: str) -> Client:
        kubeconfig = fake_kubeconfig(await fake_api(fake), tmp_path / "fake-kubeconfig")
        return await console_app(*overrides, environ={"KUBECONFIG": str(kubeconfig)})

    return make


@pytest.fixture
async def client(console_app: ConsoleApp) -> Client:
    """The console in open mode over the clusters ``alpha`` and ``beta``."""
    return await console_app()
