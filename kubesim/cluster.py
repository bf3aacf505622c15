"""The living part of a simulated cluster: nodes, controllers, scheduler and kubelet, as one unit.

:class:`LiveCluster` is owned by the simulator: it is started on the simulator's loop after the
API core exists and stopped before the server goes away, and it owns every task it starts. The HTTP
layer reaches the kubelet (logs, exec, attach, port-forward) and the metrics source through it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from kubesim import scenarios
from kubesim.api.objects import Objects
from kubesim.controllers.autoscaler import AutoscalerController
from kubesim.controllers.base import Controller, Manager
from kubesim.controllers.client import Client
from kubesim.controllers.cronjob import CronJobController
from kubesim.controllers.daemonset import DaemonSetController
from kubesim.controllers.deployment import DeploymentController
from kubesim.controllers.disruption import DisruptionController
from kubesim.controllers.endpoints import EndpointsController
from kubesim.controllers.events import Recorder
from kubesim.controllers.job import JobController
from kubesim.controllers.leases import NodeLeases
from kubesim.controllers.nodes import NodeLifecycle, ensure_nodes
from kubesim.controllers.replicaset import ReplicaSetController
from kubesim.controllers.scheduler import Scheduler
from kubesim.controllers.serviceaccounts import NamespaceDefaults
from kubesim.controllers.statefulset import StatefulSetController
from kubesim.controllers.volumes import VolumeController, ensure_default_class
from kubesim.kubelet import Kubelet, metrics
from kubesim.machinery.timings import Timings
from kubesim.store import Obj

MANAGER = "kube-controller-manager"


class LiveCluster:
    def __init__(
        self,
        objs: Objects,
        *,
        nodes: int = 1,
        timings: Timings | None = None,
        ca_pem: str = "",
        clock: Callable[[], float] = time.time,
        scenario: str = "empty",
    ) -> None:
        if scenario not in scenarios.SCENARIOS:
            raise ValueError(
                f"unknown scenario {scenario!r}; choose one of: {', '.join(scenarios.SCENARIOS)}"
            )
        self.objs = objs
        self.nodes = nodes
        self.scenario = scenario
        self.timings = timings or Timings()
        self.recorder = Recorder(Client(objs, MANAGER))
        self.kubelet = Kubelet(Client(objs, "kubelet"), self.recorder, self.timings)
        self.scheduler = Scheduler(Client(objs, "default-scheduler"), self.recorder)
        client = Client(objs, MANAGER)
        self.cronjobs = CronJobController(client, self.recorder, clock)
        self.controllers: list[Controller] = [
            NodeLifecycle(client),
            NodeLeases(Client(objs, "kubelet"), self.timings),
            self.scheduler,
            self.kubelet,
            NamespaceDefaults(client, ca_pem),
            ReplicaSetController(client, self.recorder),
            DeploymentController(client, self.recorder),
            StatefulSetController(client, self.recorder),
            DaemonSetController(client, self.recorder),
            JobController(client, self.recorder, self.timings),
            self.cronjobs,
            EndpointsController(client),
            DisruptionController(client),
            VolumeController(client, self.recorder),
            AutoscalerController(client, self.recorder, self._pod_usage),
        ]
        self._manager = Manager(objs.store, self.controllers)
        self._started = False

    def _pod_usage(self, pod: Obj) -> dict[str, int] | None:
        """What metrics-server would report for ``pod``: cpu in nanocores, memory in bytes."""
        meta, now = pod["metadata"], time.time()
        cpu = memory = 0
        for c in (pod.get("spec") or {}).get("containers") or []:
            usage = metrics.container_usage(
                self.kubelet, meta["namespace"], meta["name"], c["name"], c, now
            )
            if usage is None:
                return None
            cpu, memory = cpu + usage[0], memory + usage[1]
        return {"cpu": cpu, "memory": memory}

    async def start(self) -> None:
        ensure_nodes(Client(self.objs, "kubelet"), self.nodes)
        ensure_default_class(Client(self.objs, "kubectl"))
        self.objs.graceful_pods = True  # a kubelet now exists to finish terminating pods
        self._manager.start()
        self._started = True
        scenarios.load(self.scenario, self.objs, self.recorder)

    async def stop(self) -> None:
        if self._started:
            await self._manager.stop()
            self._started = False

    async def settle(self, timeout: float = 5.0) -> None:
        """Wait until every controller's queue is empty (tests; timers may still be pending)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            await asyncio.sleep(0.01)
            if not any(len(c.queue) for c in self.controllers):
                return
