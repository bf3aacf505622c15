"""The fidelity suite's lifecycle flows of issue 40 on a living one-node cluster over HTTP (items
16 and 17): exec right after a pod starts, health checks and metrics, node leases and
heartbeats, and termination. Each expectation names the upstream source it was taken from
(kubernetes v1.32, apiserver v0.32)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import ssl
import time

import aiohttp

from kubesim import Simulator
from tests.kubesim.conftest import Kubectl, Raw, create_namespace
from tests.kubesim.fidelity_live import (
    LEASE_RENEW,
    NODE_STATUS,
    events,
    get,
    phase_is,
    pod,
    ready,
    sim,
)
from tests.kubesim.live import Obj, until

__all__ = ["sim"]


# --- item 16: exec right after start ---------------------------------------------------------------
# client-go's WebSocket executor (client-go/tools/remotecommand/websocket.go) starts
# ``readDemuxLoop`` before ``streamer.stream`` has created its streams, and drops any frame for a
# stream it has not created yet ("Unknown stream id 1, discarding message"). A real server's output
# comes after its own stream set-up to the kubelet; so must the simulator's.
CLIENT_SET_UP = 0.01  # how late a busy machine may schedule client-go's stream creation
# A sample is not judged when this test's own loop stalled for longer than this while it ran
# (the server's 50 ms set-up minus the client's 10 ms, with a margin): frames that waited in the
# socket for a stalled reader look as early as frames sent too soon.
STALL = 0.025


async def _exec_as_client_go(
    sim: Simulator, session: aiohttp.ClientSession, path: str
) -> bytes | None:
    """stdout of ``echo hi`` read as client-go's demux loop reads it (frames that arrive before
    the client's streams exist are lost), or None when this client stalled too long to judge."""
    stalled = 0.0

    async def watch_the_loop() -> None:
        nonlocal stalled
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.002)
            stalled = max(stalled, time.monotonic() - before - 0.002)

    params = [("command", "echo"), ("command", "hi"), ("stdout", "true"), ("stderr", "true")]
    watcher = asyncio.ensure_future(watch_the_loop())
    try:
        async with session.ws_connect(
            sim.url + path,
            params=params,
            protocols=("v5.channel.k8s.io",),
            headers={"Authorization": f"Bearer {sim.token}"},
            ssl=ssl.create_default_context(cafile=str(sim.ca_path)),
        ) as ws:
            streams_from = time.monotonic() + CLIENT_SET_UP
            out = b""
            async for msg in ws:
                stdout = msg.type == aiohttp.WSMsgType.BINARY and msg.data[:1] == b"\x01"
                if stdout and time.monotonic() >= streams_from:
                    out += msg.data[1:]
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    return None if stalled > STALL else out


async def test_exec_right_after_a_pod_turns_ready_never_loses_output(
    sim: Simulator, raw: Raw, kubectl: Kubectl
) -> None:
    ns = await create_namespace(raw)
    pods = f"/api/v1/namespaces/{ns}/pods"
    judged = []
    async with aiohttp.ClientSession() as session:
        for name in (f"p{i}" for i in range(5)):
            await raw("POST", pods, pod(name))
            await until(functools.partial(ready, raw, pods, name), what="pod ready")
            for _ in range(3):  # right after Ready, unless this test's loop stalled
                out = await _exec_as_client_go(sim, session, f"{pods}/{name}/exec")
                if out is not None:
                    judged.append(out)
                    break
    assert len(judged) >= 3, "the machine is too busy to judge"
    assert judged == [b"hi\n"] * len(judged)
    await raw("POST", pods, pod("last"))
    await until(lambda: ready(raw, pods, "last"), what="pod ready")
    for _ in range(2):
        assert kubectl.run("-n", ns, "exec", "last", "--", "echo", "hi").stdout == "hi\n"


# --- item 17: health checks and metrics ------------------------------------------------------------


def test_health_endpoints_answer_as_kube_apiserver_does(kubectl: Kubectl) -> None:
    """apiserver pkg/server/healthz/healthz.go ``handleRootHealth`` (and ``?exclude``), with the
    checks kube-apiserver 1.32 installs."""
    assert kubectl.run("get", "--raw", "/readyz").stdout == "ok"
    ready = kubectl.run("get", "--raw", "/readyz?verbose").stdout.splitlines()
    assert ready[:5] == [
        "[+]ping ok",
        "[+]log ok",
        "[+]etcd ok",
        "[+]etcd-readiness ok",
        "[+]informer-sync ok",
    ]
    assert "[+]poststarthook/rbac/bootstrap-roles ok" in ready
    assert ready[-2:] == ["[+]shutdown ok", "readyz check passed"]
    live = kubectl.run("get", "--raw", "/livez?verbose&exclude=etcd").stdout.splitlines()
    assert live[:3] == ["[+]ping ok", "[+]log ok", "[+]etcd excluded: ok"]
    assert "[+]informer-sync ok" not in live
    assert live[-1] == "livez check passed"
    assert kubectl.run("get", "--raw", "/livez/ping").stdout == "ok"


async def test_metrics_count_requests_by_verb_resource_scope_and_code(raw: Raw) -> None:
    """apiserver pkg/endpoints/metrics/metrics.go ``MonitorRequest``: apiserver_request_total."""
    ns = await create_namespace(raw)
    before = await _metrics(raw)
    for _ in range(3):
        await raw("GET", f"/api/v1/namespaces/{ns}/configmaps")
    await raw("GET", f"/api/v1/namespaces/{ns}/configmaps/absent")
    await raw("GET", f"/api/v1/namespaces/{ns}/status")  # the namespace's own subresource
    await raw("GET", f"/api/v1/namespaces/{ns}/configmaps", watch="True", timeoutSeconds="1")
    after = await _metrics(raw)
    labels = 'component="apiserver",dry_run="",group="",resource="configmaps"'
    listed = (
        f'apiserver_request_total{{code="200",{labels},scope="namespace",subresource="",'
        'verb="LIST",version="v1"}'
    )
    missing = (
        f'apiserver_request_total{{code="404",{labels},scope="resource",subresource="",'
        'verb="GET",version="v1"}'
    )
    status = (
        'apiserver_request_total{code="200",component="apiserver",dry_run="",group="",'
        'resource="namespaces",scope="resource",subresource="status",verb="GET",version="v1"}'
    )
    watched = listed.replace('verb="LIST"', 'verb="WATCH"')
    assert after[listed] - before.get(listed, 0) == 3
    assert after[missing] - before.get(missing, 0) == 1
    assert after[status] - before.get(status, 0) == 1  # getInfoFromPath's namespaceSubresources
    assert after[watched] - before.get(watched, 0) == 1  # "True" is a watch, as ParseBool reads
    assert after['apiserver_storage_objects{resource="namespaces"}'] >= 5
    assert (await raw("GET", "/metrics", token="not-a-token"))[0] == 401


async def _metrics(raw: Raw) -> dict[str, float]:
    status, text, headers = await raw("GET", "/metrics")
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert "# TYPE apiserver_request_total counter" in text.splitlines()
    samples = (line.rsplit(" ", 1) for line in text.splitlines() if not line.startswith("#"))
    return {series: float(value) for series, value in samples}


# --- item 17: node leases --------------------------------------------------------------------------


async def test_each_node_holds_a_lease_it_renews(raw: Raw) -> None:
    """The kubelet's node lease controller (component-helpers/apimachinery/lease/controller.go
    ``newLease``): named after the node, owned by it, 40 s, renewed every quarter of that; and
    its node status re-posted every nodeStatusReportFrequency (pkg/kubelet/kubelet_node_status.go
    ``tryUpdateNodeStatus``)."""
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/kubesim-node-1"
    lease = await until(lambda: get(raw, path), what="the node's lease")
    node = await get(raw, "/api/v1/nodes/kubesim-node-1")
    assert node is not None
    assert lease["spec"]["holderIdentity"] == "kubesim-node-1"
    assert lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "name": "kubesim-node-1",
            "uid": node["metadata"]["uid"],
        }
    ]
    first = lease["spec"]["renewTime"]
    assert len(first) == len("2026-01-02T03:04:05.123456Z")

    async def renewed() -> bool:
        again = await get(raw, path)
        return bool(again and again["spec"]["renewTime"] > first)

    await until(renewed, what="the lease renewed", timeout=LEASE_RENEW * 10)

    def heartbeat(node: Obj) -> str:
        ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
        return str(ready["lastHeartbeatTime"])

    async def beaten() -> bool:  # times have whole seconds: the next one shows within 1.5 s
        again = await get(raw, "/api/v1/nodes/kubesim-node-1")
        return bool(again and heartbeat(again) > heartbeat(node))

    await until(beaten, what="the node status re-posted", timeout=NODE_STATUS + 2.5)


async def test_a_lease_is_written_only_when_its_renewal_is_due(raw: Raw) -> None:
    """The renewals are the controller's own writes: each must not call for the next at once (that
    loop renewed each lease hundreds of times a second and took a third of a core from every
    simulator); and a lease someone deletes comes back at once."""
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    lease = await until(lambda: get(raw, f"{path}/kubesim-node-1"), what="the node's lease")
    _, listed, _ = await raw("GET", path)
    params = {"fieldSelector": "metadata.name=kubesim-node-1", "timeoutSeconds": "1"}
    resource_version = listed["metadata"]["resourceVersion"]
    _, stream, _ = await raw("GET", path, watch="true", resourceVersion=resource_version, **params)
    writes = [json.loads(line)["type"] for line in str(stream).splitlines() if line]
    # one renewal per LEASE_RENEW, whatever else wakes the controller (the node's heartbeats)
    assert 1 <= len(writes) <= 1 / LEASE_RENEW + 1, writes
    status, _, _ = await raw("DELETE", f"{path}/kubesim-node-1")
    assert status == 200

    async def back() -> bool:
        again = await get(raw, f"{path}/kubesim-node-1")
        return bool(again and again["metadata"]["uid"] != lease["metadata"]["uid"])

    await until(back, what="the deleted lease back", timeout=LEASE_RENEW * 5)


# --- item 17: termination ---------------------------------------------------------------------------


async def _last_state_before_deletion(sim: Simulator, pods: str, name: str) -> Obj:
    """The pod as the watch's DELETED event carries it (its containers' final state)."""
    params = {"watch": "true", "fieldSelector": f"metadata.name={name}", "timeoutSeconds": "10"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            sim.url + pods,
            params=params,
            headers={"Authorization": f"Bearer {sim.token}"},
            ssl=ssl.create_default_context(cafile=str(sim.ca_path)),
        ) as resp,
    ):
        async for line in resp.content:
            event = json.loads(line)
            if event["type"] == "DELETED":
                found: Obj = event["object"]
                return found
    raise AssertionError(f"{name} was not deleted")


async def test_a_pid_1_that_ignores_sigterm_keeps_its_pod_terminating_for_the_grace_period(
    sim: Simulator, raw: Raw
) -> None:
    """pkg/kubelet/kuberuntime/kuberuntime_container.go ``killContainer``: SIGTERM, then SIGKILL
    once the grace period is over; a shell or ``sleep`` as PID 1 has no default SIGTERM action.
    The grace period is 2 s so that the test stays short."""
    ns = await create_namespace(raw)
    pods = f"/api/v1/namespaces/{ns}/pods"
    sleeper = {"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"]}
    stubborn = {
        "metadata": {"name": "stubborn"},
        "spec": {"containers": [sleeper], "terminationGracePeriodSeconds": 2},
    }
    await raw("POST", pods, stubborn)
    await raw("POST", pods, pod("polite"))  # nginx stops on SIGTERM
    for name in ("stubborn", "polite"):
        await until(functools.partial(phase_is, raw, pods, name, "Running"), what=f"{name} running")

    stubborn_gone = asyncio.ensure_future(_last_state_before_deletion(sim, pods, "stubborn"))
    polite_gone = asyncio.ensure_future(_last_state_before_deletion(sim, pods, "polite"))
    await asyncio.sleep(0.1)  # both watches are open
    started = time.monotonic()
    status, deleting, _ = await raw("DELETE", f"{pods}/stubborn")
    assert (status, deleting["metadata"]["deletionGracePeriodSeconds"]) == (200, 2)
    await raw("DELETE", f"{pods}/polite")
    polite = await polite_gone
    assert time.monotonic() - started < 1.5  # not its 30 s grace period
    terminated = polite["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")

    await asyncio.sleep(0.5)
    lingering = await get(raw, f"{pods}/stubborn")
    assert lingering is not None  # Terminating: the grace period is not over
    assert "running" in lingering["status"]["containerStatuses"][0]["state"]
    last = await stubborn_gone
    assert time.monotonic() - started >= 2.0
    terminated = last["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (137, "Error")
    killing = ("Normal", "Killing", "Stopping container main", "kubelet")
    assert killing in await events(raw, ns, "stubborn")
