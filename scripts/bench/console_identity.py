"""Benchmark: what acting as the person costs, through the console's HTTP door. Browsing rows as
alice against the same rows read with the console's own identity, and shared watches for many
people.

Targets (issue 33): listing a namespace's pods as summary rows (``GET …/pods``) signed in as alice
(group team-a, RoleBinding ``edit`` in the namespace; her ``JSESSIONID`` session) on a cluster
where the console impersonates her takes at most 1.2x the time of the same request on the same
simulator reached through a context where the console acts with its own identity
(``impersonate-contexts=…=off``), measured in the same run, rounds interleaved; 1,000 SSE
subscribers of 10 identities (10 accounts, each in its own group bound to ``edit``) to one
(cluster, configmaps, namespace) hold 1 upstream watch, counted at the simulator, and their
admission costs at most one SubjectAccessReview per identity and verb (the simulator counts them).

The simulator runs in this process and enforces RBAC; the console runs in a child (this script
with ``--serve-console``), with its accounts made beforehand in its store as ``wharf console user
add`` makes them. Before measuring, the run checks that alice really is impersonated (refused where
she has no binding, through the impersonating context only).
Run: ``.venv/bin/python scripts/bench/console_identity.py [--pods 500] [--rounds 30]
[--subscribers 1000]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import yaml
from harness import console_bench_main, free_port, kube_api, running_console
from report import Report

from common.db import open_database
from console.accounts import Accounts
from console.accountstore import SqlAccountStore
from console.clusters.store import SCHEMA
from console.credentials import AdminCredentials
from console.resources.kubeapi import KubeApi, path_of
from kubesim import Simulator

NAMESPACE = "bench"
RBAC = "rbac.authorization.k8s.io"
IDENTITIES = 10
PASSWORD = "bench-Password-4321"
#: The simulator's context, where the console impersonates each person, and a second context of
#: the same cluster and credentials where it acts as itself.
AS_PERSON, AS_CONSOLE = "bench", "bench-own"


def _binding(name: str, group: str) -> dict[str, object]:
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "edit"},
        "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": group}],
    }


async def seed(own: KubeApi, pods: int) -> None:
    await own.send("POST", path_of("", "v1", "namespaces"), {"metadata": {"name": NAMESPACE}})
    bindings = path_of(RBAC, "v1", "rolebindings", namespace=NAMESPACE)
    for group in ("team-a", *(f"team-{i}" for i in range(IDENTITIES))):
        await own.send("POST", bindings, _binding(f"edit-{group}", group))
    spec = {"containers": [{"name": "main", "image": "busybox:1.36"}]}
    created = path_of("", "v1", "pods", namespace=NAMESPACE)
    for i in range(pods):
        await own.send("POST", created, {"metadata": {"name": f"pod-{i:05d}"}, "spec": spec})


def two_doors(sim: Simulator, path: Path) -> Path:
    """The simulator's kubeconfig with a second context of the same cluster and user."""
    doc = yaml.safe_load(sim.kubeconfig_path.read_text())
    context = next(c for c in doc["contexts"] if c["name"] == AS_PERSON)
    doc["contexts"].append({"name": AS_CONSOLE, "context": dict(context["context"])})
    path.write_text(yaml.safe_dump(doc))
    path.chmod(0o600)
    return path


async def make_accounts(data_dir: Path) -> list[str]:
    """alice and ``user-0``…``user-9`` in the console's store (the console is not running yet)."""
    await asyncio.to_thread(data_dir.mkdir, parents=True, exist_ok=True)
    names = ["alice", *(f"user-{i}" for i in range(IDENTITIES))]
    async with open_database(f"sqlite:{data_dir / 'clusters.db'}", SCHEMA) as db:
        accounts = Accounts(SqlAccountStore(db), AdminCredentials("admin", "bench"))
        await accounts.add("alice", PASSWORD, ["team-a"])
        for i in range(IDENTITIES):
            await accounts.add(f"user-{i}", PASSWORD, [f"team-{i}"])
    return names


@contextlib.asynccontextmanager
async def signed_in(
    connector: aiohttp.BaseConnector, base: str, name: str
) -> AsyncIterator[aiohttp.ClientSession]:
    """A client session holding ``name``'s ``JSESSIONID`` (signed in once with Basic)."""
    jar = aiohttp.CookieJar(unsafe=True)  # the console is on an IP address
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(
        base, connector=connector, connector_owner=False, cookie_jar=jar, timeout=timeout
    ) as session:
        basic = {"Authorization": aiohttp.encode_basic_auth(name, PASSWORD)}
        async with session.post("/api/v1/auth/session", headers=basic) as resp:
            assert resp.status == 200, await resp.text()
        yield session


async def rows_ms(session: aiohttp.ClientSession, cluster: str) -> float:
    started = time.perf_counter()
    async with session.get(
        f"/api/v1/clusters/{cluster}/pods", params={"namespace": NAMESPACE}
    ) as r:
        assert r.status == 200, await r.text()
        await r.read()
    return (time.perf_counter() - started) * 1000


async def check_impersonated(alice: aiohttp.ClientSession) -> None:
    """alice has no rights in ``default``: refused as herself, answered as the console."""
    params = {"namespace": "default"}
    async with alice.get(f"/api/v1/clusters/{AS_PERSON}/pods", params=params) as resp:
        assert resp.status == 403, f"alice was not impersonated ({resp.status})"
    async with alice.get(f"/api/v1/clusters/{AS_CONSOLE}/pods", params=params) as resp:
        assert resp.status == 200, f"the console's own identity was refused ({resp.status})"


async def browse(alice: aiohttp.ClientSession, rounds: int) -> tuple[list[float], list[float]]:
    await rows_ms(alice, AS_CONSOLE)  # warm both paths once
    await rows_ms(alice, AS_PERSON)
    as_own: list[float] = []
    as_alice: list[float] = []
    for i in range(rounds):  # interleaved, the order swapped each round
        pair = (AS_CONSOLE, AS_PERSON) if i % 2 == 0 else (AS_PERSON, AS_CONSOLE)
        for cluster in pair:
            (as_own if cluster == AS_CONSOLE else as_alice).append(await rows_ms(alice, cluster))
    return as_own, as_alice


def reviews(sim: Simulator) -> int:
    return sim.call(lambda state: state.reviews_answered["SubjectAccessReview"])


async def fan_out(
    sim: Simulator, people: list[aiohttp.ClientSession], subscribers: int
) -> tuple[int, int, float]:
    """(upstream configmap watches at the simulator while all are open, SubjectAccessReviews it
    answered for their admission, seconds to admit all)."""
    url = f"/api/v1/clusters/{AS_PERSON}/resources/configmaps/objects/watch"
    opened: list[aiohttp.ClientResponse] = []

    async def subscribe(n: int) -> None:
        resp = await people[n % len(people)].get(url, params={"namespace": NAMESPACE})
        opened.append(resp)
        assert resp.status == 200, await resp.text()  # admitted: the review said yes

    started, asked = time.perf_counter(), reviews(sim)
    try:
        for start in range(0, subscribers, 100):
            await asyncio.gather(
                *(subscribe(n) for n in range(start, min(subscribers, start + 100)))
            )
        admitted = time.perf_counter() - started
        held = sim.call(lambda state: state.objects.store.subscribers(("", "configmaps")))
        asked = reviews(sim) - asked
    finally:
        for resp in opened:
            resp.close()
    return held, asked, admitted


async def bench(args: argparse.Namespace) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp, Simulator(Path(tmp), context=AS_PERSON) as sim:
        async with kube_api(sim.kubeconfig_path) as client:
            await seed(KubeApi(client), args.pods)
        data_dir = Path(tmp) / "console"
        names = await make_accounts(data_dir)
        overrides = (
            "console.security.open-mode=false",
            f"console.clusters.impersonate-contexts={AS_PERSON}=on,{AS_CONSOLE}=off",
            "console.server.max-connections-per-address=0",  # 1,000 streams from one address
        )
        kubeconfig = two_doors(sim, Path(tmp) / "kubeconfig")
        with running_console(__file__, kubeconfig, port, str(data_dir), *overrides):
            connector = aiohttp.TCPConnector(limit=0)
            async with contextlib.AsyncExitStack() as stack:
                stack.push_async_callback(connector.close)
                people = [
                    await stack.enter_async_context(signed_in(connector, base, name))
                    for name in names
                ]
                await check_impersonated(people[0])
                as_own, as_alice = await browse(people[0], args.rounds)
                held, asked, admitted = await fan_out(sim, people[1:], args.subscribers)
    own_ms, alice_ms = statistics.median(as_own), statistics.median(as_alice)
    ratio = alice_ms / own_ms
    print(f"GET …/pods rows of {args.pods} pods over HTTP, median of {args.rounds}: console's own "
          f"identity {own_ms:.1f} ms, as alice (impersonated) {alice_ms:.1f} ms: ratio "
          f"{ratio:.2f}x (target <= 1.2)")  # fmt: skip
    print(f"{args.subscribers} SSE subscribers of {IDENTITIES} identities: upstream configmap "
          f"watches at the simulator {held} (target 1); SubjectAccessReviews answered {asked}; all "
          f"admitted in {admitted:.2f} s")  # fmt: skip
    out: Report = args.report
    out.figure("rows as alice / as the console, over HTTP", ratio, "x", at_most=1.2,
               baseline="rows as the console's own identity")  # fmt: skip
    out.figure(f"upstream watches for {args.subscribers} SSE subscribers of {IDENTITIES} "
               "identities", held, "", at_most=1)  # fmt: skip
    out.figure("SubjectAccessReviews for their admission", asked, "", at_most=2 * IDENTITIES)


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pods", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--subscribers", type=int, default=1000)


if __name__ == "__main__":
    console_bench_main(
        __doc__,
        bench,
        options,
        name="console_identity",
        # Quick: 300 subscribers still share one upstream watch and admit each identity once.
        quick={"pods": 200, "rounds": 40, "subscribers": 300},
        smoke={"pods": 5, "rounds": 2, "subscribers": 20},
    )
