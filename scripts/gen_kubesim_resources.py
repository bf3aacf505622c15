"""Write ``common/kubesim/resources.json`` from real kube-apiserver discovery documents.

The simulator must not read the reference documents at run time (they are not part of the product),
so this script copies the parts it serves -- the legacy ``APIResourceList`` entries of each served
group/version, verbatim -- into a JSON file inside the package. Run it again when the reference set
changes:

    .venv/bin/python scripts/gen_kubesim_resources.py [REFERENCE_DIR]

``REFERENCE_DIR`` defaults to ``../shared/reference/kube`` next to the repository.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "common" / "kubesim" / "resources.json"

# (group, version) pairs the simulator serves, in the order of the real ``/apis`` document.
SERVED = [
    ("", "v1"),
    ("apps", "v1"),
    ("events.k8s.io", "v1"),
    ("autoscaling", "v2"),
    ("batch", "v1"),
    ("networking.k8s.io", "v1"),
    ("policy", "v1"),
    ("rbac.authorization.k8s.io", "v1"),
    ("storage.k8s.io", "v1"),
    ("apiextensions.k8s.io", "v1"),
    ("coordination.k8s.io", "v1"),
    ("discovery.k8s.io", "v1"),
]

# metrics-server is an aggregated API, absent from the reference set; these are its real entries.
METRICS = {
    "group": "metrics.k8s.io",
    "version": "v1beta1",
    "resources": [
        {
            "kind": "NodeMetrics",
            "name": "nodes",
            "namespaced": False,
            "singularName": "",
            "verbs": ["get", "list"],
        },
        {
            "kind": "PodMetrics",
            "name": "pods",
            "namespaced": True,
            "singularName": "",
            "verbs": ["get", "list"],
        },
    ],
}


def _file_for(group: str, version: str) -> str:
    return "api__v1.json" if not group else f"apis__{group}__{version}.json"


def main(argv: list[str]) -> int:
    ref = Path(argv[0]) if argv else ROOT / ".." / "shared" / "reference" / "kube"
    out: list[dict[str, Any]] = []
    for group, version in SERVED:
        doc = json.loads((ref / _file_for(group, version)).read_text())
        out.append({"group": group, "version": version, "resources": doc["resources"]})
    out.append(METRICS)
    text = json.dumps({"groupVersions": out}, indent=1, sort_keys=True)
    OUT.write_text(text + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
