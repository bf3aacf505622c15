"""Reading ``/actuator/prometheus`` in tests with prometheus-client's own parser, as a scraper would."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from tests.typing_support import Client


async def scrape(client: Client, **headers: str) -> list[Sample]:
    resp = await client.get("/actuator/prometheus", headers=headers)
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    text = await resp.text()
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(samples: list[Sample], name: str, **labels: str) -> float:
    """The one sample named ``name`` whose labels include ``labels``."""
    found = [
        s.value
        for s in samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, (name, labels, found)
    return float(found[0])
