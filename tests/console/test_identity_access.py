"""Every cluster call as the person behind it, on a living simulator that enforces RBAC: the
cluster access layer (``KubeApi`` acting as an identity) lists, applies, deletes, execs and
port-forwards as alice, bob and the admins' group; shared watches admit each subscriber by a
SubjectAccessReview and close a stream once the person's RoleBinding is gone."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from common.errors import UpstreamStatus
from console.auth import ANONYMOUS
from console.identity import Identity
from console.resources import counts, discovery, listing, search
from console.resources.access import AccessReviews
from console.resources.catalog import Kind
from console.resources.kubeapi import KubeApi, path_of
from console.streams import podexec
from console.streams.podexec import ExecRequest, Exit
from console.streams.portforward import PROTOCOLS
from console.streams.watches import Change, WatchHub
from kubesim import Simulator
from tests.console.identity_support import (
    ADMINS_GROUP,
    ALICE,
    BOB,
    Spaces,
    alice_edit,
    bind,
    people,
    sleeper_pod,
    unbind,
)
from tests.console.live_cluster import sim
from tests.console.live_support import upstream_watches
from tests.console.resources_support import eventually, kube

__all__ = ["sim"]

PODS = Kind("pods", "", "v1", "pods", "Pod", True, frozenset({"list", "watch", "delete"}))
CONFIGMAPS = Kind("configmaps", "", "v1", "configmaps", "ConfigMap", True,
                  frozenset({"list", "watch"}))  # fmt: skip
ADMIN = Identity("admin", (ADMINS_GROUP, "system:authenticated"))


@pytest.fixture(scope="module")
def spaces(sim: Simulator) -> Spaces:
    return people(sim, sleeper_pod("shell"))


@contextlib.asynccontextmanager
async def acting(sim: Simulator, who: Identity | None) -> AsyncIterator[KubeApi]:
    async with kube(sim) as own:
        yield KubeApi(own.client, acting_as=who)


def _cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


def _cms(ns: str, name: str | None = None) -> str:
    return path_of("", "v1", "configmaps", namespace=ns, name=name)


async def _refused(call: Any) -> UpstreamStatus:
    with pytest.raises(UpstreamStatus) as refused:
        await call
    assert (refused.value.status, refused.value.code) == (403, "cluster-refused")
    return refused.value


async def _running(sim: Simulator, ns: str) -> None:
    async def check() -> bool:
        async with kube(sim) as api:
            pod = await api.get(path_of("", "v1", "pods", namespace=ns, name="shell"))
        statuses = pod.get("status", {}).get("containerStatuses") or []
        return any("running" in s.get("state", {}) for s in statuses)

    await eventually(check, what=f"the pod in {ns} to run")


async def _exec(api: KubeApi, ns: str) -> Exit:
    wanted = ExecRequest(ns, "shell", command=("sh", "-c", "exit 3"))
    async with podexec.open_session(api, wanted) as session:
        items = [item async for item in session.output()]
    last = items[-1]
    assert isinstance(last, Exit)
    return last


async def _forward(api: KubeApi, ns: str) -> str | None:
    path = path_of("", "v1", "pods", namespace=ns, name="shell", subresource="portforward")
    async with api.open_channels(path, query=[("ports", "80")], protocols=PROTOCOLS) as ws:
        return ws.protocol


async def test_alice_edits_her_namespace_and_nothing_else(sim: Simulator, spaces: Spaces) -> None:
    await _running(sim, spaces.a)
    await _running(sim, spaces.b)
    async with acting(sim, ALICE) as api:
        rows = await listing.summary_rows(api, PODS, spaces.a)
        assert [r["name"] for r in rows] == ["shell"]
        await api.send("POST", _cms(spaces.a), _cm("mine"))
        await api.send("DELETE", _cms(spaces.a, "mine"), None)
        assert (await _exec(api, spaces.a)).code == 3
        assert await _forward(api, spaces.a) in PROTOCOLS

        refusal = await _refused(listing.summary_rows(api, PODS, spaces.b))
        assert 'User "alice"' in refusal.detail  # the server's own reason, naming the person
        await _refused(api.send("POST", _cms(spaces.b), _cm("theirs")))
        await _refused(api.send("DELETE", path_of("", "v1", "pods", namespace=spaces.b,
                                                  name="shell"), None))  # fmt: skip
        await _refused(_exec(api, spaces.b))
        await _refused(_forward(api, spaces.b))
        await _refused(listing.summary_rows(api, PODS, None))  # not every namespace


async def test_bob_reads_but_cannot_change_or_exec(sim: Simulator, spaces: Spaces) -> None:
    await _running(sim, spaces.a)
    async with acting(sim, BOB) as api:
        for ns in (spaces.a, spaces.b, None):
            assert await listing.summary_rows(api, PODS, ns)
        await _refused(api.send("POST", _cms(spaces.a), _cm("bobs")))
        await _refused(api.send("DELETE", path_of("", "v1", "pods", namespace=spaces.a,
                                                  name="shell"), None))  # fmt: skip
        await _refused(_exec(api, spaces.a))


async def test_the_admins_group_does_everything(sim: Simulator, spaces: Spaces) -> None:
    await _running(sim, spaces.b)
    async with acting(sim, ADMIN) as api:
        assert await listing.summary_rows(api, PODS, None)
        await api.send("POST", _cms(spaces.b), _cm("admins"))
        await api.send("DELETE", _cms(spaces.b, "admins"), None)
        assert (await _exec(api, spaces.b)).code == 3
    # The same user without the group is nobody to the cluster: the groups travel too.
    async with acting(sim, Identity("admin")) as api:
        await _refused(api.send("POST", _cms(spaces.b), _cm("admins")))


async def test_the_anonymous_visitor_is_the_clusters_anonymous(
    sim: Simulator, spaces: Spaces
) -> None:
    async with acting(sim, ANONYMOUS) as api:
        refusal = await _refused(listing.summary_rows(api, PODS, spaces.a))
        assert "system:anonymous" in refusal.detail
    async with acting(sim, None) as api:  # the console's own identity: no impersonation
        assert await listing.summary_rows(api, PODS, spaces.a)


async def _subscribe(
    hub: WatchHub, api: KubeApi, ns: str, stack: contextlib.AsyncExitStack
) -> AsyncIterator[Any]:
    changes: AsyncIterator[Any] = await stack.enter_async_context(
        hub.subscribe("alpha", CONFIGMAPS, ns, api)
    )
    return changes


async def _next_change(changes: AsyncIterator[Any], name: str) -> Change:
    async with asyncio.timeout(10):
        async for item in changes:
            if isinstance(item, Change) and item.obj["metadata"]["name"] == name:
                return item
    raise AssertionError(f"the stream ended before {name} came")


async def test_one_upstream_watch_serves_a_hundred_subscribers_of_three_people(
    sim: Simulator, spaces: Spaces
) -> None:
    reviews = AccessReviews(ttl_s=30)
    hub = WatchHub(linger_s=0, reviews=reviews)
    people_apis: list[KubeApi] = []
    async with contextlib.AsyncExitStack() as stack:
        own = await stack.enter_async_context(kube(sim))
        for who in (ALICE, BOB, ADMIN):
            people_apis.append(KubeApi(own.client, acting_as=who))
        streams = [await _subscribe(hub, people_apis[i % 3], spaces.a, stack) for i in range(100)]
        assert hub.upstream_count() == 1
        assert upstream_watches(sim, "", "configmaps") == 1
        assert reviews.asked == 6  # list and watch, once per person: the rest from the answers
        await own.send("POST", _cms(spaces.a), _cm("shared"))
        for changes in streams:
            assert (await _next_change(changes, "shared")).type == "ADDED"
    await hub.close()
    await reviews.close()


async def test_a_subscriber_who_may_not_list_is_refused(sim: Simulator, spaces: Spaces) -> None:
    reviews = AccessReviews()
    hub = WatchHub(linger_s=0, reviews=reviews)
    async with acting(sim, ALICE) as api:
        with pytest.raises(UpstreamStatus) as refused:
            async with hub.subscribe("alpha", CONFIGMAPS, spaces.b, api):
                pass
        assert (refused.value.status, refused.value.code) == (403, "cluster-refused")
        assert 'User "alice" cannot list' in refused.value.detail
        assert hub.upstream_count() == 0  # refused before any upstream watch was opened
    await hub.close()
    await reviews.close()


async def test_removing_the_rolebinding_closes_the_stream_within_the_ttl(
    sim: Simulator, spaces: Spaces
) -> None:
    ttl = 0.5
    reviews = AccessReviews(ttl_s=ttl)  # closed at the end: a re-check may be in flight then
    hub = WatchHub(linger_s=0, reviews=reviews)
    async with contextlib.AsyncExitStack() as stack:
        own = await stack.enter_async_context(kube(sim))
        alice = await _subscribe(hub, KubeApi(own.client, acting_as=ALICE), spaces.a, stack)
        bob = await _subscribe(hub, KubeApi(own.client, acting_as=BOB), spaces.a, stack)
        await own.send("POST", _cms(spaces.a), _cm("before"))
        await _next_change(alice, "before")
        await _next_change(bob, "before")

        await unbind(own, spaces.a, spaces.alice_binding)
        removed = time.monotonic()
        try:
            with pytest.raises(UpstreamStatus) as closed:
                await _next_change(alice, "never")
            took = time.monotonic() - removed
        finally:  # the other tests need alice as she was
            await bind(own, alice_edit(spaces))
        assert closed.value.status == 403
        assert took < ttl + 1.0, took  # the TTL, plus one review's round trip on a busy machine
        await own.send("POST", _cms(spaces.a), _cm("after"))
        assert (await _next_change(bob, "after")).type == "ADDED"  # bob still may
    await hub.close()
    await reviews.close()


async def test_counts_and_search_across_namespaces_answer_where_the_person_may_list(
    sim: Simulator, spaces: Spaces
) -> None:
    async with kube(sim) as own:
        catalog = await discovery.discover(own)
        await own.send("POST", _cms(spaces.a), _cm("needle-a"))
        await own.send("POST", _cms(spaces.b), _cm("needle-b"))
    reviews = AccessReviews()
    async with acting(sim, ALICE) as api:
        found = await counts.count_all(api, catalog, None, reviews=reviews)
        by_kind = {c.resource_id: c for c in found.counts}
        assert by_kind["pods"].count == 1  # her namespace's pod only (b has one too)
        hits = await search.search(api, catalog, "needle", reviews=reviews)
        assert {(h.namespace, h.name) for h in hits.hits} == {(spaces.a, "needle-a")}
        # Without the reviews the same person is refused the cluster-wide lists.
        plain = await counts.count_all(api, catalog, None)
        assert "pods" in {f.resource_id for f in plain.failed}
    async with acting(sim, BOB) as api:  # view everywhere: the cluster-wide list, unchanged
        hits = await search.search(api, catalog, "needle", reviews=reviews)
        assert {h.name for h in hits.hits} >= {"needle-a", "needle-b"}
