"""The field-by-field comparison behind drift, without a cluster: which fields count, the JSON
patch's paths and operations, and the fallback when the server would not dry-run an object."""

from __future__ import annotations

from typing import Any

from chartsvc.releases.compare import PatchOp, compare, overlay

DECLARED: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "c", "labels": {"app": "x"}},
    "data": {"a": "1"},
}


def live(**changes: Any) -> dict[str, Any]:
    meta = {
        "name": "c",
        "namespace": "n",
        "uid": "u",
        "resourceVersion": "7",
        "labels": {"app": "x"},
        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        "managedFields": [{"manager": "helm"}],
    }
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"a": "1"}} | changes


def expected() -> dict[str, Any]:
    return {**DECLARED, "metadata": {**DECLARED["metadata"], "namespace": "n", "uid": "other"}}


def test_server_bookkeeping_and_defaults_are_not_drift() -> None:
    assert compare(DECLARED, expected(), live()).in_sync


def test_a_changed_removed_and_added_field_each_have_their_operation() -> None:
    changed = live(data={"b/c~d": "2"}, immutable=True)
    result = compare(DECLARED, expected(), changed)
    assert result.patch == (
        PatchOp("remove", "/data/a"),
        PatchOp("add", "/data/b~1c~0d", "2"),  # RFC 6901 escapes
        PatchOp("add", "/immutable", True),
    )
    assert "-  a: '1'\n" in result.diff("ConfigMap/c.yaml")


def test_a_number_is_not_a_boolean() -> None:
    declared = {**DECLARED, "spec": {"replicas": 1}}
    result = compare(
        declared, {**expected(), "spec": {"replicas": 1}}, live(spec={"replicas": True})
    )
    assert result.patch == (PatchOp("replace", "/spec/replicas", True),)


def test_a_list_of_another_length_is_replaced_whole() -> None:
    declared = {**DECLARED, "spec": {"ports": [{"port": 80}]}}
    now = live(spec={"ports": [{"port": 80}, {"port": 81}]})
    result = compare(declared, {**expected(), "spec": declared["spec"]}, now)
    assert result.patch == (PatchOp("replace", "/spec/ports", now["spec"]["ports"]),)


def test_without_the_servers_answer_only_declared_fields_count() -> None:
    now = live(data={"a": "2"}, binaryData={"x": "eA=="})
    result = compare(DECLARED, overlay(now, DECLARED), now)
    assert result.patch == (PatchOp("replace", "/data/a", "2"),)
