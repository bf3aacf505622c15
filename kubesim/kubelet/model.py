"""The kubelet's records of containers: one :class:`Container` per spec entry, one :class:`Run` per start."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import attrs

from kubesim.kubelet.behaviour import Behaviour
from kubesim.kubelet.logbuf import RunLog
from kubesim.shell import FileSystem, Reader

Obj = dict[str, Any]


@attrs.define(eq=False)
class Run:
    """One start of a container."""

    number: int
    started: float
    log: RunLog
    container_id: str
    planned: tuple[float, int, str] | None = None  # (exit time, code, reason) of opaque programs
    task: asyncio.Task[int] | None = None
    finished: float | None = None
    exit_code: int | None = None
    reason: str = ""
    ready_at: float | None = None

    def exit_due(self, now: float) -> bool:
        if self.finished is not None:
            return True
        if self.planned is not None and self.planned[0] <= now:
            self.finished, self.exit_code, self.reason = self.planned
            return True
        return False


@attrs.define(eq=False)
class Container:
    name: str
    spec: Obj
    init: bool
    behaviour: Behaviour
    phase: str = "waiting"  # waiting|pulling|pull-error|pull-backoff|running|exited|backoff|done
    due: float = 0.0
    reason: str = "ContainerCreating"
    message: str = ""
    pull_failures: int = 0
    failures: int = 0
    restarts: int = 0
    runs: list[Run] = attrs.field(factory=list)
    pulled: bool = False
    next_probe: float | None = None
    fs: FileSystem | None = None
    stdin: Reader | None = None
    """The main program's stdin, for ``kubectl attach`` (containers with ``stdin: true``)."""

    @property
    def image(self) -> str:
        return str(self.spec.get("image") or "")

    @property
    def field_path(self) -> str:
        return f"spec.{'initContainers' if self.init else 'containers'}{{{self.name}}}"

    @property
    def current(self) -> Run | None:
        return self.runs[-1] if self.runs else None

    def succeeded(self) -> bool:
        run = self.current
        return self.phase == "done" and run is not None and run.exit_code == 0


def container_id(uid: str, name: str, number: int) -> str:
    return hashlib.sha256(f"{uid}/{name}/{number}".encode()).hexdigest()
