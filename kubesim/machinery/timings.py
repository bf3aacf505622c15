"""How fast the simulated cluster lives: pod start delays, crash-loop back-off, log cadence.

A real cluster takes seconds to pull images and minutes to back off a crash loop; the demo keeps
that feel (:meth:`Timings.realistic`), while the in-process :class:`Simulator` that tests use
defaults to a cluster where everything happens within a fraction of a second. Every timed
behaviour of the controllers and the kubelet reads its delay from here, nowhere else.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Timings:
    """Delays in seconds. ``sleep_scale`` multiplies ``sleep N`` in container scripts."""

    start: float = 0.05
    """Pod bound to a node → sandbox ready (IP assigned, containers being created)."""
    pull: float = 0.05
    """Image pull duration (and the first retry delay of a failing pull)."""
    ready: float = 0.05
    """Container started → passing readiness probe, for containers that declare one."""
    crash_after: float = 0.3
    """How long a crashing (or OOM-killed) container runs before it dies."""
    job_run: float = 0.2
    """How long a run-to-completion program without a script runs."""
    backoff: float = 0.3
    """First crash-loop / image-pull back-off; doubles per restart up to ``backoff_max``."""
    backoff_max: float = 2.0
    stop: float = 0.02
    """Deleted pod → containers stopped (bounded by its grace period) and the pod removed."""
    exec_start: float = 0.05
    """An exec or attach upgraded → its streams carry output (the server's stream set-up)."""
    lease_renew: float = 10.0
    """How often each node's kubelet renews its Lease (a quarter of its 40 s duration)."""
    node_status: float = 300.0
    """How often a kubelet re-posts an unchanged node status (nodeStatusReportFrequency)."""
    log_interval: float = 0.5
    """Cadence of a long-running container's log lines."""
    probe_period: float = 1.0
    """How often a failing readiness probe records an ``Unhealthy`` event."""
    sleep_scale: float = 1.0

    @classmethod
    def realistic(cls) -> Timings:
        """What a small real cluster feels like; used by ``wharf kubesim``."""
        return cls(
            start=0.5,
            pull=1.5,
            ready=2.0,
            crash_after=4.0,
            job_run=5.0,
            backoff=10.0,
            backoff_max=300.0,
            stop=1.0,
            exec_start=0.1,
            log_interval=3.0,
            probe_period=10.0,
            sleep_scale=1.0,
        )

    def back_off(self, failures: int) -> float:
        """kubelet's doubling back-off after ``failures`` consecutive failures (≥ 1)."""
        return float(min(self.backoff * (2 ** max(0, failures - 1)), self.backoff_max))
