"""Write ``kubesim/machinery/resources.json`` from real kube-apiserver discovery documents.

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

from kubesim.machinery import registry

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kubesim" / "machinery" / "resources.json"

# (group, version) pairs the simulator serves, in the order of the real ``/apis`` document.
SERVED = [
    ("", "v1"),
    ("apiregistration.k8s.io", "v1"),
    ("apps", "v1"),
    ("events.k8s.io", "v1"),
    ("authentication.k8s.io", "v1"),
    ("authorization.k8s.io", "v1"),
    ("autoscaling", "v2"),
    ("autoscaling", "v1"),
    ("batch", "v1"),
    ("certificates.k8s.io", "v1"),
    ("networking.k8s.io", "v1"),
    ("policy", "v1"),
    ("rbac.authorization.k8s.io", "v1"),
    ("storage.k8s.io", "v1"),
    ("admissionregistration.k8s.io", "v1"),
    ("apiextensions.k8s.io", "v1"),
    ("scheduling.k8s.io", "v1"),
    ("coordination.k8s.io", "v1"),
    ("node.k8s.io", "v1"),
    ("discovery.k8s.io", "v1"),
    ("flowcontrol.apiserver.k8s.io", "v1"),
]
# Resources the reference documents (taken from a newer release) list that 1.32 does not serve.
NOT_IN_1_32 = registry.NEWER_THAN_1_32

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


def _from_aggregated(doc: dict[str, Any], group: str, version: str) -> list[dict[str, Any]]:
    """Legacy APIResourceList entries from the aggregated document (no storage hash: not stored)."""
    entries: list[dict[str, Any]] = []
    found = [g for g in doc["items"] if g["metadata"]["name"] == group]
    served = [v for g in found for v in g["versions"] if v["version"] == version]
    for r in served[0]["resources"]:
        entry = {
            "kind": r["responseKind"]["kind"],
            "name": r["resource"],
            "namespaced": r["scope"] == "Namespaced",
            "singularName": r["singularResource"],
            "verbs": r["verbs"],
        }
        for key in ("shortNames", "categories"):
            if key in r:
                entry[key] = r[key]
        entries.append(entry)
        for sub in r.get("subresources", []):
            kind = sub["responseKind"]
            entries.append(
                {
                    "kind": kind["kind"],
                    "name": f"{r['resource']}/{sub['subresource']}",
                    "namespaced": r["scope"] == "Namespaced",
                    "singularName": "",
                    "verbs": sub["verbs"],
                    **(
                        {"group": kind["group"], "version": kind["version"]}
                        if kind["group"]
                        else {}
                    ),
                }
            )
    return entries


def main(argv: list[str]) -> int:
    ref = Path(argv[0]) if argv else ROOT / ".." / "shared" / "reference" / "kube"
    out: list[dict[str, Any]] = []
    aggregated = json.loads((ref / "aggregated_v2.json").read_text())
    for group, version in SERVED:
        path = ref / _file_for(group, version)
        if path.exists():
            resources = json.loads(path.read_text())["resources"]
        else:  # the reference set has no legacy document for this group: derive one
            resources = _from_aggregated(aggregated, group, version)
        resources = [r for r in resources if (group, r["name"].split("/")[0]) not in NOT_IN_1_32]
        out.append({"group": group, "version": version, "resources": resources})
    out.append(METRICS)
    text = json.dumps({"groupVersions": out}, indent=1, sort_keys=True)
    OUT.write_text(text + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
