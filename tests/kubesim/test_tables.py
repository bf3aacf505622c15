"""Server-side Table cells for the kinds kubectl users read most."""

from __future__ import annotations

import pytest

from kubesim.encoding import printers
from tests.kubesim.live import Obj


def pod(status: Obj, *, init: int = 0, deleting: bool = False) -> Obj:
    meta: Obj = {"name": "p"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: Obj = {"containers": [{"name": "c"}], "initContainers": [{"name": "i"}] * init}
    return {"metadata": meta, "spec": spec, "status": status}


def running(ready: bool = True) -> Obj:
    return {"ready": ready, "restartCount": 0, "state": {"running": {}}}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (pod({"phase": "Pending"}), "Pending"),
        (pod({"phase": "Running", "containerStatuses": [running()]}), "Running"),
        (
            pod(
                {
                    "phase": "Running",
                    "containerStatuses": [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}],
                }
            ),
            "CrashLoopBackOff",
        ),
        (
            pod(
                {
                    "phase": "Succeeded",
                    "containerStatuses": [
                        {"state": {"terminated": {"reason": "Completed", "exitCode": 0}}}
                    ],
                }
            ),
            "Completed",
        ),
        (
            pod(
                {
                    "phase": "Failed",
                    "containerStatuses": [{"state": {"terminated": {"exitCode": 3}}}],
                }
            ),
            "ExitCode:3",
        ),
        (
            pod(
                {"phase": "Pending", "initContainerStatuses": [{"state": {"running": {}}}]}, init=1
            ),
            "Init:0/1",
        ),
        (
            pod(
                {
                    "phase": "Pending",
                    "initContainerStatuses": [
                        {"state": {"waiting": {"reason": "ImagePullBackOff"}}}
                    ],
                },
                init=1,
            ),
            "Init:ImagePullBackOff",
        ),
        (pod({"phase": "Running", "containerStatuses": [running()]}, deleting=True), "Terminating"),
    ],
)
def test_pod_status_column(obj: Obj, expected: str) -> None:
    assert printers.pod_status(obj) == expected


def test_pod_ready_and_restarts() -> None:
    obj = pod(
        {
            "phase": "Running",
            "containerStatuses": [
                {
                    "ready": False,
                    "restartCount": 4,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"finishedAt": "2000-01-01T00:00:00Z"}},
                }
            ],
        }
    )
    assert printers.pod_ready(obj) == "0/1"
    assert printers.pod_restarts(obj).startswith("4 (")
    assert printers.pod_restarts(obj).endswith(" ago)")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (5, "5s"),
        (119, "119s"),
        (150, "2m30s"),
        (600, "10m"),
        (3 * 3600 + 60, "3h1m"),
        (30 * 3600, "30h"),
        (3 * 86400 + 3600, "3d1h"),
        (40 * 86400, "40d"),
        (800 * 86400, "2y70d"),
    ],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert printers.human_duration(seconds) == text


def test_job_columns() -> None:
    job = {
        "metadata": {"name": "j"},
        "spec": {"completions": 3},
        "status": {
            "succeeded": 1,
            "startTime": "2026-01-01T00:00:00Z",
            "completionTime": "2026-01-01T00:01:05Z",
            "conditions": [{"type": "Complete", "status": "True"}],
        },
    }
    assert printers.job_status(job) == "Complete"
    assert printers.job_completions(job) == "1/3"
    assert printers.job_duration(job) == "65s"


def _hpa(metrics: list[Obj], current: list[Obj] | None = None) -> Obj:
    return {"spec": {"metrics": metrics}, "status": {"currentMetrics": current or []}}


def _cpu(utilization: int) -> Obj:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": utilization}}}  # fmt: skip


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (_hpa([]), "<none>"),
        (_hpa([_cpu(50)]), "cpu: <unknown>/50%"),
        (
            _hpa(
                [_cpu(50)],
                [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "current": {"averageUtilization": 3}},
                    }
                ],
            ),
            "cpu: 3%/50%",
        ),
        (
            _hpa(
                [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "memory",
                            "target": {"type": "AverageValue", "averageValue": "100Mi"},
                        },
                    }
                ]
            ),
            "memory: <unknown>/100Mi",
        ),
        (
            _hpa(
                [
                    {
                        "type": "Pods",
                        "pods": {
                            "metric": {"name": "qps"},
                            "target": {"type": "AverageValue", "averageValue": "10"},
                        },
                    }
                ]
            ),
            "<unknown>/10",
        ),
        (
            _hpa([_cpu(50), _cpu(60), _cpu(70)]),
            "cpu: <unknown>/50%, cpu: <unknown>/60% + 1 more...",
        ),
    ],
)
def test_hpa_targets_column(obj: Obj, expected: str) -> None:
    """pkg/printers/internalversion ``formatHPAMetrics``: each metric's current/target, a
    resource metric named, two shown at most."""
    assert printers.hpa_targets(obj) == expected


def test_binding_wide_columns_list_each_kind_of_subject() -> None:
    binding = {"subjects": [
        {"kind": "User", "name": "alice"}, {"kind": "Group", "name": "team-a"},
        {"kind": "User", "name": "bob"},
        {"kind": "ServiceAccount", "name": "ci", "namespace": "build"}]}  # fmt: skip
    cells = {c.name: c.cell(binding) for c in printers.BINDING_SUBJECTS}
    assert cells == {"Users": "alice, bob", "Groups": "team-a", "ServiceAccounts": "build/ci"}
    assert all(c.priority == 1 for c in printers.BINDING_SUBJECTS)  # -o wide


@pytest.mark.parametrize(
    ("obj", "service", "available"),
    [
        ({"spec": {}, "status": {"conditions": [{"type": "Available", "status": "True"}]}}, "Local", "True"),
        (
            {
                "spec": {"service": {"namespace": "kube-system", "name": "metrics-server"}},
                "status": {"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]},
            },
            "kube-system/metrics-server",
            "False (MissingEndpoints)",
        ),
        ({"spec": {"service": {"namespace": "a", "name": "b"}}}, "a/b", "Unknown"),
    ],
)  # fmt: skip
def test_api_service_columns(obj: Obj, service: str, available: str) -> None:
    """kube-aggregator ``registry/apiservice/etcd`` ``REST.ConvertToTable``: ``Local`` without a
    service; the Available condition's status, its reason when not True, else ``Unknown``."""
    assert (printers.apiservice_service(obj), printers.apiservice_available(obj)) == (
        service,
        available,
    )
