"""What ingest, the gate, compare, badges and replicas ask of a store, as one interface.

``results.store.SqlStore`` implements it on ``common.db``; the domain depends on this protocol only,
never on the store package. The read side's needs are ``results.reads.ReadStore``. This module
must not do anything else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from results.batch import IngestBatch, IngestOutcome
from results.runs import Project, RunSummary


class Store(Protocol):
    async def ingest(self, batch: IngestBatch) -> IngestOutcome:
        """Write a batch into its run in one transaction (creating project and run as needed)."""

    async def find_project(self, name: str) -> Project | None: ...

    async def get_run(self, run_id: int) -> RunSummary | None: ...

    async def latest_run(
        self,
        project_id: int,
        *,
        flag: str,
        commit: str | None = None,
        branch: str | None = None,
        exclude_run_id: int | None = None,
        before_run_id: int | None = None,
    ) -> RunSummary | None:
        """Newest run of the project and flag on ``commit`` (prefix of 7+ hex allowed), else
        on ``branch``."""

    async def project_run(
        self, project: str, *, flag: str, commit: str | None, branch: str | None
    ) -> tuple[Project, RunSummary] | None:
        """``latest_run`` by project name, together with the project."""

    async def failing_keys(self, run_ids: Sequence[int]) -> Mapping[int, frozenset[str]]:
        """Keys of the failed and errored test cases, per run."""

    async def patch_coverage_min(self, project_id: int) -> float | None:
        """The project's own patch-coverage floor, overriding the setting; None: the setting."""

    async def set_patch_coverage_min(self, project: str, minimum: float | None) -> bool:
        """Set (None: clear) the project's floor; False when there is no such project."""

    async def run_hashes(self, project: str, run_key: str) -> frozenset[str]:
        """sha256 of the files already in the run ``run_key`` names (empty if none)."""

    def data_version(self) -> int | None:
        """Changes with every commit, by anyone; None when unknown (``Database.data_version``)."""
