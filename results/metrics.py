"""The results service's own series in its Prometheus registry (``common.metrics``): ingest bytes,
test cases and duration, gate verdicts, and the live-event subscribers.

Counted by the ingest and gate routes. Only numbers: no project names (a label per project would
grow without bound).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from prometheus_client import Counter, Histogram

from common.metrics import Metrics, Tally

#: Seconds; an ingest parses and stores up to hundreds of MB of XML.
INGEST_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@attrs.frozen
class ResultsMetrics:
    ingest_bytes: Counter
    ingest_cases: Counter
    ingest_seconds: Histogram
    #: Counted on the gate's path, which CI calls again and again: no lock per verdict.
    gate_verdicts: Tally

    @classmethod
    def register(cls, metrics: Metrics, *, subscribers: Callable[[], float]) -> ResultsMetrics:
        """The series; ``subscribers`` reads the number of open live-event streams."""
        metrics.gauge(
            "results_events_subscribers", "Open live-event streams (/events).", subscribers
        )
        verdicts = metrics.tally(
            "results_gate_verdicts",
            "Quality-gate verdicts given, by status.",
            "status",
            ("PASSED", "FAILED"),  # both series exist from the start, at zero
        )
        return cls(
            ingest_bytes=metrics.counter(
                "results_ingest_bytes", "Bytes of report files ingested (as uploaded)."
            ),
            ingest_cases=metrics.counter(
                "results_ingest_cases", "Test cases ingested from JUnit reports."
            ),
            ingest_seconds=metrics.histogram(
                "results_ingest_seconds",
                "Time to parse and store one upload.",
                buckets=INGEST_BUCKETS,
            ),
            gate_verdicts=verdicts,
        )

    def gave(self, status: str) -> None:
        """A gate verdict of ``status`` was given."""
        self.gate_verdicts.inc(status)

    def ingested(self, *, size: int, cases: int, seconds: float) -> None:
        self.ingest_bytes.inc(size)
        self.ingest_cases.inc(cases)
        self.ingest_seconds.observe(seconds)
