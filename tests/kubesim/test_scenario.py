"""Scenarios: ``demo`` is the same cluster on every start and shows every failure mode; ``empty`` is bare."""

from __future__ import annotations

from common.kubesim.api.objects import Objects
from tests.kubesim.live import Obj, cond, started, until


def _summary(objs: Objects) -> set[tuple[str, str, str, str]]:
    out = set()
    for gr, obj in objs.store.all_objects():
        if gr in (("", "events"),):
            continue
        meta = obj["metadata"]
        out.add((gr[0], gr[1], meta.get("namespace", ""), meta["name"]))
    return out


def _reason(pod: Obj | None) -> str:
    cs = ((pod or {}).get("status") or {}).get("containerStatuses") or [{}]
    state = cs[0].get("state") or {}
    last = (cs[0].get("lastState") or {}).get("terminated") or {}
    return str((state.get("waiting") or {}).get("reason") or last.get("reason") or "")


async def _demo_snapshot() -> set[tuple[str, str, str, str]]:
    async with started(nodes=3, scenario="demo") as live:
        objs = live.objs

        def by_app(app: str) -> Obj | None:
            return next(
                (
                    p
                    for p in objs.store.list(("", "pods"), "broken")
                    if p["metadata"]["labels"].get("app.kubernetes.io/name") == app
                ),
                None,
            )

        def job(namespace: str, name: str) -> Obj | None:
            return objs.store.get(("batch", "jobs"), namespace, name)

        await until(lambda: _reason(by_app("crashloop")) == "CrashLoopBackOff", what="crashloop")
        await until(lambda: _reason(by_app("bad-image")) == "ImagePullBackOff", what="image pull")
        await until(lambda: _reason(by_app("memory-hog")) in ("OOMKilled", "CrashLoopBackOff"))
        assert cond(by_app("too-big"), "PodScheduled")["reason"] == "Unschedulable"
        await until(lambda: (by_app("not-ready") or {}).get("status", {}).get("phase") == "Running")
        assert cond(by_app("not-ready"), "Ready")["status"] == "False"
        await until(lambda: cond(job("broken", "failing-job"), "Failed"), what="job fails")
        assert objs.store.get(("", "persistentvolumeclaims"), "broken", "reports") is not None
        assert objs.store.get(("", "endpoints"), "broken", "orphan") is not None
        await until(lambda: cond(job("shop", "db-migrate"), "Complete"))
        widgets = objs.store.list(("demo.wharf.dev", "widgets"), "shop")
        assert [w["metadata"]["name"] for w in widgets] == ["flange", "gizmo", "sprocket"]
        gateway = objs.store.get(("gateway.networking.k8s.io", "gateways"), "shop", "shop-gateway")
        assert gateway is not None
        assert cond(gateway, "Programmed")["status"] == "True"
        assert len(objs.store.list(("policy", "poddisruptionbudgets"), "shop")) == 2
        cronjobs = {c["metadata"]["name"] for c in objs.store.list(("batch", "cronjobs"), "shop")}
        assert cronjobs == {"nightly-report", "cache-warmup"}
        return _summary(objs)


async def test_demo_shows_each_failure_mode_and_is_deterministic() -> None:
    assert await _demo_snapshot() == await _demo_snapshot()


async def test_empty_is_bare() -> None:
    async with started(nodes=1, scenario="empty") as live:
        await live.settle()
        kinds = {gr for gr, _ in live.objs.store.all_objects()}
        assert kinds <= {
            ("", "namespaces"),
            ("", "services"),
            ("", "nodes"),
            ("", "serviceaccounts"),
            ("", "configmaps"),
            ("", "endpoints"),
            ("discovery.k8s.io", "endpointslices"),
            ("rbac.authorization.k8s.io", "clusterroles"),
            ("rbac.authorization.k8s.io", "clusterrolebindings"),
            ("scheduling.k8s.io", "priorityclasses"),
            ("apiregistration.k8s.io", "apiservices"),
        }
        assert live.objs.store.list(("", "pods")) == []
