"""The console's JSON response bodies, in one place: pure functions from the console's value
objects to TypedDicts spelled as the schemas of ``spec/console*.yaml``, one module per spec file
(``clusters`` and ``instance`` for ``console.yaml``). Modelled on ``chartsvc.encoders``.

Handlers encode here, never by hand, and nothing here sends ``attrs.asdict`` out (a field added to a
value object must not leak into an answer). No I/O. This is the HTTP layer, which the domain never
imports; where a domain path needs the same JSON:

- a finding, as the LLM summary is told it: ``console.http.diagnose`` hands
  :func:`~console.http.encode.diagnose.encode_finding` to
  :class:`~console.diagnose.summary.Summaries`, so the model sees what the API shows;
- a drained pod's outcome, which the ``drain-failed`` problem also lists: that problem is built by
  the domain error :class:`~console.actions.nodes.DrainFailed`, so ``encode_pod`` stays with
  :class:`~console.actions.PodOutcome` and is re-used from here.

The reshapings of the cluster's own JSON (object rows, projected objects, relations, printer
columns, schemas) are built in the API's shape by ``console.resources``, because
the domain's own results carry them (an action's result holds the object's row); they are not
encoded again here.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

#: The media type of every YAML answer (object exports, values, manifests).
YAML_TYPE = "application/yaml"


def event_data(value: Any) -> str:
    """Compact JSON for the ``data`` of a Server-Sent Event (watches, logs)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def utc_stamp(seconds: float, *, timespec: str = "seconds") -> str:
    """An epoch time as RFC 3339 in UTC with a ``Z``: ``2026-05-09T07:35:25Z``."""
    stamp = datetime.fromtimestamp(seconds, UTC).isoformat(timespec=timespec)
    return stamp.replace("+00:00", "Z")
