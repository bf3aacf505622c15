"""The fidelity suite's REST cases (issue 40 items 11, 13, 14, 15): table columns, request
options refused as apimachinery refuses them, and error texts in Go's words. Each expectation
names the upstream file and function it was taken from (kubernetes v1.32, apimachinery and
apiserver v0.32)."""

from __future__ import annotations

from typing import Any

from tests.kubesim.conftest import Kubectl, Raw, create_namespace

TABLE_V1BETA1 = "application/json;as=Table;g=meta.k8s.io;v=v1beta1"


async def get_as(raw: Raw, path: str, accept: str, **params: str) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {raw.sim.token}", "Accept": accept}
    url = raw.sim.url + path
    async with raw.session.get(url, headers=headers, params=params, ssl=raw.ssl) as resp:
        return resp.status, await resp.json()


# --- table columns (item 11) -----------------------------------------------------------------------


def test_priority_class_and_api_service_columns_as_kubectl_shows_them(kubectl: Kubectl) -> None:
    """``pkg/printers/internalversion/printers.go`` ``printPriorityClass`` and kube-aggregator's
    ``registry/apiservice/etcd`` ``REST.ConvertToTable``."""
    kubectl.run("create", "priorityclass", "batch-low", "--value=-5", "--preemption-policy=Never")
    lines = kubectl.run("get", "priorityclass", "batch-low").stdout.splitlines()
    assert lines[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    name, value, default, _age, policy = lines[1].split()
    assert (name, value, default, policy) == ("batch-low", "-5", "false", "Never")
    lines = kubectl.run("get", "apiservice", "v1.apps").stdout.splitlines()
    assert lines[0].split() == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    assert lines[1].split()[:3] == ["v1.apps", "Local", "True"]


# --- smaller REST differences (item 15) ------------------------------------------------------------


async def test_a_v1beta1_table_is_answered_in_v1beta1(raw: Raw) -> None:
    """``endpoints/handlers/response.go`` ``asTable``: the Table, and the metadata objects of its
    rows, in the meta.k8s.io version the Accept header named; ``optionsForTransform`` refuses an
    ``includeObject`` it does not know with 400."""
    ns = await create_namespace(raw)
    path = f"/api/v1/namespaces/{ns}/configmaps"
    await raw("POST", path, {"metadata": {"name": "a"}, "data": {"k": "v"}})
    for url in (path, f"{path}/a"):
        status, table = await get_as(raw, url, TABLE_V1BETA1)
        assert status == 200, table
        assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1beta1")
        row = table["rows"][0]
        assert row["cells"][:2] == ["a", 1]
        assert row["object"]["apiVersion"] == "meta.k8s.io/v1beta1"
        assert row["object"]["kind"] == "PartialObjectMetadata"
    status, partial = await get_as(
        raw, f"{path}/a", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1"
    )
    assert (status, partial["apiVersion"]) == (200, "meta.k8s.io/v1beta1")
    status, refused = await get_as(raw, path, TABLE_V1BETA1, includeObject="Everything")
    assert status == 400
    assert refused["message"] == (
        'Unable to convert to Table as requested: includeObject: Invalid value: "Everything": '
        "must be 'Metadata', 'Object', 'None', or empty"
    )
