"""The kubelet's view of one pod: its containers' lifecycles as a timed state machine.

A container moves through image pull (or pull failure and ``ImagePullBackOff``), start, run,
exit and -- as ``restartPolicy`` says -- restart with the kubelet's doubling back-off
(``CrashLoopBackOff``). Init containers run one after another before the app containers start.
Every transition is dated by when it was due, not when it was noticed, so the pod's history comes
out the same however late the kubelet's work queue runs. :meth:`PodRuntime.step` advances the
machine to "now" and returns when it next needs to look; events go to the ``emit`` callback.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from kubesim.kubelet.behaviour import classify
from kubesim.kubelet.model import Container, Run
from kubesim.machinery.timings import Timings

Obj = dict[str, Any]
Emit = Callable[[str, str, str, str], None]  # (type, reason, message, fieldPath)


class PodRuntime:
    def __init__(
        self,
        pod: Obj,
        now: float,
        timings: Timings,
        *,
        ip: str,
        host_ip: str,
        node_images: set[str],
        start: Callable[[PodRuntime, Container, float], Run],
        emit: Emit,
    ) -> None:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        self.namespace, self.name, self.uid = meta["namespace"], meta["name"], meta["uid"]
        self.node = str(spec.get("nodeName") or "")
        self.ip, self.host_ip = ip, host_ip
        self.policy = str(spec.get("restartPolicy") or "Always")
        self.accepted = now
        self.sandbox_at = now + timings.start
        self.sandbox_ready = False
        self.timings = timings
        self.images = node_images
        self._start, self._emit = start, emit
        init_policy = "Never" if self.policy == "Never" else "OnFailure"
        self.inits = [
            Container(c["name"], c, True, classify(c, init_policy))
            for c in spec.get("initContainers") or []
        ]
        self.apps = [
            Container(c["name"], c, False, classify(c, self.policy))
            for c in spec.get("containers") or []
        ]
        self.init_failed = False
        # Once deleted: when the containers that heed SIGTERM are down, and when all are.
        self.term_at: float | None = None
        self.stop_at: float | None = None

    @property
    def containers(self) -> list[Container]:
        return [*self.inits, *self.apps]

    def container(self, name: str) -> Container | None:
        return next((c for c in self.containers if c.name == name), None)

    @property
    def initialized(self) -> bool:
        return all(c.succeeded() for c in self.inits)

    def terminate(self, now: float, grace: float) -> float:
        """Start stopping the pod's containers (it is being deleted); returns when they are down.

        Each running container gets SIGTERM and a ``Killing`` event. A program that handles it
        stops within ``Timings.stop``; a PID 1 that ignores it (a shell script or ``sleep``
        without a TERM trap: the kernel gives PID 1 no default action) runs until the grace
        period is over and is then killed (exit 137), as the kubelet's ``killContainer`` does.
        """
        if self.stop_at is None:
            self.term_at = now + min(grace, self.timings.stop)
            self.stop_at = self.term_at
            for c in self.containers:
                if c.phase == "running":
                    self._emit("Normal", "Killing", f"Stopping container {c.name}", c.field_path)
                    if c.behaviour.ignores_term:
                        self.stop_at = now + grace
        return self.stop_at

    def stopped(self, now: float) -> bool:
        """Once every container is down (or the grace period is over), mark them terminated;
        True when that is done."""
        if self.stop_at is None or self.term_at is None or now < self.term_at:
            return False
        if now < self.stop_at and any(self._holding_on(c) for c in self.containers):
            return False
        for c in self.containers:
            run = c.current
            if c.phase == "running" and run is not None:
                if run.task is not None:
                    run.task.cancel()
                if run.finished is None and c.behaviour.ignores_term:
                    run.finished, run.exit_code, run.reason = self.stop_at, 137, "Error"
                elif run.finished is None:
                    run.finished, run.exit_code, run.reason = self.term_at, 0, "Completed"
                run.log.end(run.finished)
            if c.phase != "waiting" or c.runs:
                c.phase = "done"
        return True

    @staticmethod
    def _holding_on(c: Container) -> bool:
        """A running container that ignored SIGTERM and has not exited by itself yet."""
        run = c.current
        return (
            c.phase == "running"
            and c.behaviour.ignores_term
            and run is not None
            and run.finished is None
            and (run.task is None or not run.task.done())
        )

    def step(self, now: float) -> float | None:
        """Advance every container to ``now``; returns when the next transition is due."""
        if self.stop_at is not None and self.term_at is not None:
            if self.stopped(now):
                return None
            return self.term_at if now < self.term_at else self.stop_at
        if not self.sandbox_ready:
            if now < self.sandbox_at:
                return self.sandbox_at
            self.sandbox_ready = True
        wakes: list[float | None] = []
        ready_from = self.sandbox_at
        for c in self.inits:
            if c.succeeded():
                ready_from = c.current.finished or ready_from  # type: ignore[union-attr]
                continue
            if c.phase == "waiting" and not c.runs and c.due == 0.0:
                c.due = ready_from
            wakes.append(self._advance(c, now))
            if c.succeeded():
                ready_from = c.current.finished or ready_from  # type: ignore[union-attr]
                continue
            if c.phase == "done":
                self.init_failed = True
            return _earliest(wakes)
        for c in self.apps:
            if c.phase == "waiting" and not c.runs and c.due == 0.0:
                c.due = ready_from
            wakes.append(self._advance(c, now))
        return _earliest(wakes)

    # -- one container ------------------------------------------------------------------------
    def _advance(self, c: Container, now: float) -> float | None:
        t = self.timings
        for _ in range(1000):
            if c.phase == "done":
                return None
            if c.phase == "running":
                run = c.current
                assert run is not None
                if not run.exit_due(now):
                    return self._while_running(c, run, now)
                self._exited(c, run)
                continue
            if now < c.due:
                return c.due
            if c.phase == "waiting":
                if self._needs_pull(c):
                    self._event(c, "Normal", "Pulling", f'Pulling image "{c.image}"')
                    c.phase, c.due = "pulling", c.due + t.pull
                else:
                    if c.runs or c.pulled:
                        self._event(
                            c,
                            "Normal",
                            "Pulled",
                            f'Container image "{c.image}" already present on machine',
                        )
                    self._launch(c, c.due)
            elif c.phase == "pulling":
                if c.behaviour.pull_error:
                    c.pull_failures += 1
                    self._event(c, "Warning", "Failed", c.behaviour.pull_error)
                    self._event(c, "Warning", "Failed", "Error: ErrImagePull")
                    c.phase, c.reason, c.message = (
                        "pull-error",
                        "ErrImagePull",
                        c.behaviour.pull_error,
                    )
                    c.due += t.pull
                else:
                    secs = f"{t.pull:.3f}s"
                    size = 40_000_000 + int(
                        hashlib.blake2b(c.image.encode(), digest_size=3).hexdigest(), 16
                    )
                    self._event(
                        c,
                        "Normal",
                        "Pulled",
                        f'Successfully pulled image "{c.image}" in {secs} ({secs} including waiting). Image size: {size} bytes.',
                    )
                    self.images.add(c.image)
                    c.pulled = True
                    self._launch(c, c.due)
            elif c.phase == "pull-error":
                c.phase, c.reason = "pull-backoff", "ImagePullBackOff"
                c.message = f'Back-off pulling image "{c.image}"'
                self._event(c, "Normal", "BackOff", c.message)
                self._event(c, "Warning", "Failed", "Error: ImagePullBackOff")
                c.due += t.back_off(c.pull_failures)
            elif c.phase == "pull-backoff":
                self._event(c, "Normal", "Pulling", f'Pulling image "{c.image}"')
                c.phase, c.due = "pulling", c.due + t.pull
            elif c.phase in ("exited", "backoff"):
                c.restarts += 1
                self._event(
                    c, "Normal", "Pulled", f'Container image "{c.image}" already present on machine'
                )
                self._launch(c, c.due)
        return None

    def _needs_pull(self, c: Container) -> bool:
        policy = c.spec.get("imagePullPolicy") or "IfNotPresent"
        if policy == "Never":
            return False
        return policy == "Always" or c.image not in self.images or bool(c.behaviour.pull_error)

    def _launch(self, c: Container, at: float) -> None:
        self._event(c, "Normal", "Created", f"Created container: {c.name}")
        self._event(c, "Normal", "Started", f"Started container {c.name}")
        c.runs = [*c.runs[-1:], self._start(self, c, at)]
        c.phase, c.reason, c.message = "running", "", ""
        c.next_probe = at + self.timings.ready if not c.behaviour.ready else None

    def _while_running(self, c: Container, run: Run, now: float) -> float | None:
        wakes: list[float | None] = []
        if run.planned is not None:
            wakes.append(run.planned[0])
        if run.ready_at is not None and run.ready_at > now:
            wakes.append(run.ready_at)
        if c.next_probe is not None:
            if c.next_probe <= now:
                self._event(c, "Warning", "Unhealthy", _probe_failure(c.spec))
                while c.next_probe <= now:
                    c.next_probe += self.timings.probe_period
            wakes.append(c.next_probe)
        return _earliest(wakes)

    def _exited(self, c: Container, run: Run) -> None:
        assert run.finished is not None
        run.log.end(run.finished)
        if run.reason == "":
            run.reason = "Completed" if run.exit_code == 0 else "Error"
        restart = self.policy == "Always" or (self.policy == "OnFailure" and run.exit_code != 0)
        if c.init:
            restart = run.exit_code != 0 and self.policy != "Never"
        if not restart:
            c.phase = "done"
            return
        c.failures += 1
        if c.failures == 1:
            c.phase, c.due = "exited", run.finished + self.timings.start
            return
        delay = self.timings.back_off(c.failures - 1)
        c.phase, c.due, c.reason = "backoff", run.finished + delay, "CrashLoopBackOff"
        pod = f"{self.name}_{self.namespace}({self.uid})"
        c.message = f"back-off {_secs(delay)} restarting failed container={c.name} pod={pod}"
        self._event(
            c, "Warning", "BackOff", f"Back-off restarting failed container {c.name} in pod {pod}"
        )

    def _event(self, c: Container, type_: str, reason: str, message: str) -> None:
        self._emit(type_, reason, message, c.field_path)


def _earliest(wakes: list[float | None]) -> float | None:
    times = [w for w in wakes if w is not None]
    return min(times) if times else None


def _secs(delay: float) -> str:
    if delay >= 60:
        m, s = divmod(int(delay), 60)
        return f"{m}m{s}s"
    return f"{delay:g}s"


def _probe_failure(spec: Obj) -> str:
    probe = spec.get("readinessProbe") or {}
    if "httpGet" in probe:
        return "Readiness probe failed: HTTP probe failed with statuscode: 503"
    if "tcpSocket" in probe:
        port = probe["tcpSocket"].get("port")
        return f"Readiness probe failed: dial tcp: connect to port {port}: connection refused"
    return "Readiness probe failed: command failed with exit code 1"
