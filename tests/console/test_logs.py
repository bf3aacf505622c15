"""Log endpoints against a living simulator: tails and the previous run, the refusals as problems,
one container followed, multi-source streams that interleave by time, take in pods created later,
honour init containers and resume after ``Last-Event-ID`` without repeats."""

from __future__ import annotations

from typing import Any

from console.streams.logmux import Interleaver, plan
from console.streams.logs import LogLine, Source
from kubesim import Simulator
from tests.console.live_cluster import sim
from tests.console.live_support import Event, SseReader, open_stream
from tests.console.resources_support import create, eventually, kube_in_new_namespace
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["sim"]

BASE = "/api/v1/clusters/alpha"
TICKS = "echo start; while true; do echo tick; sleep 0.02; done"


def pod(ns: str, name: str, script: str, **spec: Any) -> dict[str, Any]:
    body = {"containers": [{"name": "main", "image": "busybox:1.36",
                            "command": ["sh", "-c", script]}], **spec}  # fmt: skip
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns,
            "labels": {"app": name}}, "spec": body}  # fmt: skip


def deployment(ns: str, name: str, script: str, replicas: int) -> dict[str, Any]:
    template = pod(ns, name, script)
    template["metadata"] = {"labels": {"app": name}}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": template}}  # fmt: skip


async def started(client: Client, ns: str, name: str, *, restarts: int = 0) -> None:
    async def check() -> bool:
        resp = await client.get(f"{BASE}/resources/pods/object", params={"namespace": ns,
                                                                         "name": name})  # fmt: skip
        statuses = (await resp.json()).get("status", {}).get("containerStatuses") or []
        return any(s.get("restartCount", 0) >= restarts and "waiting" not in s["state"]
                   for s in statuses) if restarts == 0 else any(
            s.get("restartCount", 0) >= restarts for s in statuses)  # fmt: skip

    await eventually(check, what=f"pod {name} to run")


async def log_events(reader: SseReader, count: int) -> list[Event]:
    found: list[Event] = []
    while len(found) < count:
        event = await reader.next()
        if event.event == "log":
            found.append(event)
    return found


async def test_tail_previous_run_and_refusals(client: Client, sim: Simulator) -> None:
    async with kube_in_new_namespace(sim, "logs") as (api, ns):
        await create(api, pod(ns, "steady", "echo one; echo two; echo three; sleep 3600"))
        await create(api, pod(ns, "crashing", "echo about to crash; exit 3"))
        await create(api, pod(ns, "nowhere", "echo never", nodeSelector={"no": "such-node"}))
    await started(client, ns, "steady")

    async def three_lines() -> bool:
        resp = await client.get(f"{BASE}/pods/{ns}/steady/log")
        text: str = await resp.text()
        return resp.status == 200 and text == "one\ntwo\nthree\n"

    await eventually(three_lines, what="the steady pod's log")
    resp = await client.get(f"{BASE}/pods/{ns}/steady/log", params={"tailLines": "1"})
    assert (resp.content_type, await resp.text()) == ("text/plain", "three\n")

    await started(client, ns, "crashing", restarts=1)
    resp = await client.get(f"{BASE}/pods/{ns}/crashing/log/previous")
    assert (resp.status, await resp.text()) == (200, "about to crash\n")

    body = await assert_problem(
        await client.get(f"{BASE}/pods/{ns}/steady/log", params={"container": "nope"}),
        400,
        code="unknown-container",
    )
    assert "main" in body["detail"]
    body = await assert_problem(
        await client.get(f"{BASE}/pods/{ns}/nowhere/log"), 400, code="container-not-started"
    )
    assert "has not started" in body["detail"]
    await assert_problem(
        await client.get(f"{BASE}/pods/{ns}/steady/log/previous"), 400, code="no-previous-run"
    )
    await assert_problem(
        await client.get(f"{BASE}/pods/{ns}/nowhere/log/stream"), 400, code="container-not-started"
    )
    await assert_problem(await client.get(f"{BASE}/pods/{ns}/ghost/log"), 404)
    await assert_problem(
        await client.get(f"{BASE}/pods/{ns}/steady/log", params={"tailLines": "-1"}), 400
    )


async def test_one_container_followed_and_resumed(client: Client, sim: Simulator) -> None:
    async with kube_in_new_namespace(sim, "follow") as (api, ns):
        await create(api, pod(ns, "ticker", TICKS))
    await started(client, ns, "ticker")
    reader = await open_stream(client, f"{BASE}/pods/{ns}/ticker/log/stream", tailLines="1000")
    sources = await reader.until("sources")
    assert sources.json()["sources"] == [{"pod": "ticker", "container": "main", "init": False}]
    events = await log_events(reader, 5)
    assert events[0].json()["line"] == "start"
    assert all(e.json()["line"] == "tick" for e in events[1:])
    assert all(e.id == e.json()["time"] for e in events)
    reader.resp.close()

    resumed = await open_stream(client, f"{BASE}/pods/{ns}/ticker/log/stream",
                           headers={"Last-Event-ID": events[2].id or ""})  # fmt: skip
    following = await log_events(resumed, 3)
    assert following[0].id == events[3].id  # right after the last one received, nothing repeated
    assert [e.id for e in following[:2]] == [e.id for e in events[3:5]]


async def test_a_deployment_streams_every_pod_interleaved_and_new_pods_join(
    client: Client, sim: Simulator
) -> None:
    async with kube_in_new_namespace(sim, "multi") as (api, ns):
        await create(api, deployment(ns, "web", TICKS, replicas=2))

        async def two_sources() -> Any:
            resp = await client.get(f"{BASE}/logs/sources", params={
                "namespace": ns, "resourceId": "deployments", "name": "web"})  # fmt: skip
            body = await resp.json()
            return body if body["total"] == 2 else None

        listed = await two_sources()
        listed = listed or await eventually(two_sources, what="two pods")
        assert listed["truncated"] is False
        reader = await open_stream(client, f"{BASE}/logs/stream", namespace=ns,
                              resourceId="deployments", name="web")  # fmt: skip
        events = await log_events(reader, 40)
        pods = {e.json()["pod"] for e in events}
        assert len(pods) == 2
        times = [e.json()["time"] for e in events[5:]]
        assert times == sorted(times)  # interleaved by timestamp
        scale = {"spec": {"replicas": 3}}
        await api.send("PATCH", f"/apis/apps/v1/namespaces/{ns}/deployments/web/scale", scale,
                       content_type="application/merge-patch+json")  # fmt: skip

        async def third_pod() -> bool:
            return len({e.json()["pod"] for e in await log_events(reader, 20)}) == 3

        await eventually(third_pod, what="the new pod's lines")


async def test_init_containers_are_sources_when_asked(client: Client, sim: Simulator) -> None:
    init = [{"name": "setup", "image": "busybox:1.36", "command": ["sh", "-c", "echo prepared"]}]
    async with kube_in_new_namespace(sim, "init") as (api, ns):
        await create(api, pod(ns, "app", TICKS, initContainers=init))
    await started(client, ns, "app")
    resp = await client.get(f"{BASE}/logs/sources", params={"namespace": ns, "pod": "app",
                                                             "initContainers": "true"})  # fmt: skip
    assert [s["container"] for s in (await resp.json())["sources"]] == ["setup", "main"]
    reader = await open_stream(client, f"{BASE}/logs/stream", namespace=ns, pod="app",
                          initContainers="true")  # fmt: skip
    lines = {(e.json()["container"], e.json()["line"]) for e in await log_events(reader, 10)}
    assert ("setup", "prepared") in lines
    assert ("main", "start") in lines
    await assert_problem(await client.get(f"{BASE}/logs/stream", params={"namespace": ns}), 400)


def test_the_source_cap_says_what_it_left_out() -> None:
    pods = [{"metadata": {"name": f"p{i}"}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]}}
            for i in range(13)]  # fmt: skip
    found = plan(pods, init=False)
    assert (len(found.followed), found.total, found.truncated) == (24, 26, True)


def test_lines_go_out_in_time_order_once_every_source_has_moved_past_them() -> None:
    """A line is held until each followed source sent one as late, or until the window ends."""
    a, b, quiet = Source("a", "main"), Source("b", "main"), Source("c", "main")

    def line(source: Source, second: int) -> LogLine:
        return LogLine(source, f"2026-01-01T00:00:{second:02d}.5Z", f"{source.pod}{second}")

    merge = Interleaver(window_s=10.0)
    merge.push(line(a, 2), now=0.0)
    merge.push(line(a, 3), now=0.0)
    assert merge.ready(0.1, [a, b]) == []  # b might still send something earlier
    merge.push(line(b, 1), now=0.1)
    assert [x.text for x in merge.ready(0.1, [a, b])] == ["b1"]
    merge.push(line(b, 4), now=0.2)
    assert [x.text for x in merge.ready(0.2, [a, b])] == ["a2", "a3"]  # b4 waits for a
    assert [x.text for x in merge.ready(0.2, [a, b, quiet])] == []
    assert merge.due() == 10.2
    assert [x.text for x in merge.ready(10.2, [a, b, quiet])] == ["b4"]  # the window ended
