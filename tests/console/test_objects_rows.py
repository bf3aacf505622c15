"""Summary-row rules as pure functions: kubectl's printPod STATUS column and HumanDuration ages,
and the projection of list items (no cluster needed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from console.resources import rows
from console.resources.catalog import Kind
from console.resources.listing import project


def pod(status: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}], **spec},
            "status": status}  # fmt: skip


def term(**fields: Any) -> dict[str, Any]:
    return {"name": "a", "state": {"terminated": fields}}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (pod({"phase": "Pending"}), "Pending"),
        (pod({"phase": "Failed", "reason": "Evicted"}), "Evicted"),
        (pod({"phase": "Failed", "containerStatuses": [term(exitCode=137)]}), "ExitCode:137"),
        (pod({"phase": "Failed", "containerStatuses": [term(exitCode=1, signal=9)]}), "Signal:9"),
        (pod({"phase": "Failed", "containerStatuses": [term(exitCode=1, reason="Error")]}), "Error"),
        (pod({"phase": "Running", "containerStatuses": [
            {"name": "a", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}),
         "CrashLoopBackOff"),
        (pod({"phase": "Pending", "initContainerStatuses": [
            {"name": "i", "state": {"waiting": {"reason": "PodInitializing"}}}]},
             initContainers=[{"name": "i"}, {"name": "j"}]), "Init:0/2"),
        (pod({"phase": "Pending", "initContainerStatuses": [
            {"name": "i", "state": {"terminated": {"exitCode": 0}}},
            {"name": "j", "state": {"waiting": {"reason": "ImagePullBackOff"}}}]},
             initContainers=[{"name": "i"}, {"name": "j"}]), "Init:ImagePullBackOff"),
        (pod({"phase": "Pending", "initContainerStatuses": [term(exitCode=3)]},
             initContainers=[{"name": "a"}]), "Init:ExitCode:3"),
        (pod({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
              "containerStatuses": [
                  term(exitCode=0, reason="Completed"),
                  {"name": "b", "ready": True, "state": {"running": {}}}]}), "NotReady"),
        (pod({"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
         "SchedulingGated"),
        ({**pod({"phase": "Running"}), "metadata": {"name": "p", "deletionTimestamp": "x"}},
         "Terminating"),
        ({**pod({"phase": "Succeeded"}), "metadata": {"name": "p", "deletionTimestamp": "x"}},
         "Succeeded"),
    ],
)  # fmt: skip
def test_pod_status_is_kubectls(obj: dict[str, Any], expected: str) -> None:
    assert rows.pod_status(obj) == expected


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (150, "2m30s"),
        (600, "10m"), (179 * 60, "179m"), (3 * 3600, "3h"), (7 * 3600 + 59 * 60, "7h59m"),
        (8 * 3600, "8h"), (47 * 3600, "47h"), (48 * 3600, "2d"), (50 * 3600, "2d2h"),
        (8 * 86400, "8d"), (729 * 86400, "729d"), (730 * 86400, "2y"), (731 * 86400, "2y1d"),
        (8 * 365 * 86400, "8y"),
    ],
)  # fmt: skip
def test_ages_are_kubectls(seconds: int, expected: str) -> None:
    assert rows.human_duration(seconds) == expected


def test_rows_of_workloads_and_nodes() -> None:
    now = datetime(2025, 1, 2, tzinfo=UTC)
    created = (now - timedelta(hours=5)).isoformat().replace("+00:00", "Z")
    deployment = {"metadata": {"name": "web", "namespace": "ns", "creationTimestamp": created},
                  "spec": {"replicas": 3}, "status": {"readyReplicas": 2}}  # fmt: skip
    assert rows.row(deployment, kind="Deployment", now=now) == {
        "kind": "Deployment", "namespace": "ns", "name": "web", "status": "NotReady 2/3",
        "age": "5h",
    }  # fmt: skip
    node = {"metadata": {"name": "n1"}, "spec": {"unschedulable": True},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}  # fmt: skip
    assert rows.row(node, kind="Node")["status"] == "Ready,SchedulingDisabled"
    assert rows.row({"metadata": {"name": "x"}}, kind="ConfigMap")["age"] is None


def test_projection_hides_values_but_keeps_keys() -> None:
    secrets = Kind("secrets", "", "v1", "secrets", "Secret", True, frozenset({"list"}))
    item = {"metadata": {"name": "s", "managedFields": [{}]}, "data": {"a": "eA==", "b": ""},
            "stringData": {"c": "x"}, "type": "Opaque"}  # fmt: skip
    assert project(item, secrets) == {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
        "data": {"a": None, "b": None}, "stringData": {"c": None}, "type": "Opaque",
    }  # fmt: skip
    pods = Kind("pods", "", "v1", "pods", "Pod", True, frozenset({"list"}))
    assert project({"metadata": {}, "data": {"a": "1"}}, pods)["data"] == {"a": "1"}
