"""The ``alpha`` cluster alive, for the modules whose tests need controllers and a kubelet.

``sim`` overrides the conftest's fixture of the same name: a module imports it explicitly and
lists it in ``__all__`` (the way ``tests.chartsvc.fixtures_cluster`` is used). A module that wants
more nodes writes its own ``sim`` with ``yield from live_alpha(tmp_path_factory, nodes=...)``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kubesim import Simulator
from tests.console.resources_support import live_alpha


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    """This module's ``alpha`` cluster is alive: controllers and a kubelet run its workloads."""
    yield from live_alpha(tmp_path_factory)
