"""Benchmark: what acting as the person costs. Browsing rows as alice against the console's own
identity, and shared watches for many people.

Targets (issue 33): listing a namespace's pods as summary rows while impersonating alice (group
team-a, RoleBinding ``edit`` in the namespace) takes at most 1.2x the time of the same rows read
with the console's own identity, measured in the same run, rounds interleaved; 1,000 subscribers of
10 identities to one (cluster, configmaps, namespace) hold 1 upstream watch at the simulator, and
their admission costs one SubjectAccessReview per identity and verb (the rest are answered from
the kept answers).

Measured at the console's cluster access layer (``KubeApi`` acting as a person, the rows the
console serves, ``WatchHub`` with ``AccessReviews``), in this process, on a simulator that
enforces RBAC: the HTTP and sign-in in front of them are the same for everyone.
Run: ``.venv/bin/python scripts/bench/console_identity.py [--pods 500] [--rounds 30]
[--subscribers 1000]``
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import kube_api
from report import Report, options

from common import eventloop
from console.identity import Identity
from console.resources import listing
from console.resources.access import AccessReviews
from console.resources.catalog import Kind
from console.resources.kubeapi import KubeApi, path_of
from console.streams.watches import WatchHub
from kubesim import Simulator

NAMESPACE = "bench"
RBAC = "rbac.authorization.k8s.io"
PODS = Kind("pods", "", "v1", "pods", "Pod", True, frozenset({"list", "watch"}))
CONFIGMAPS = Kind("configmaps", "", "v1", "configmaps", "ConfigMap", True,
                  frozenset({"list", "watch"}))  # fmt: skip
ALICE = Identity("alice", ("team-a", "system:authenticated"))
IDENTITIES = 10


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


async def rows_ms(api: KubeApi) -> float:
    started = time.perf_counter()
    await listing.summary_rows(api, PODS, NAMESPACE)
    return (time.perf_counter() - started) * 1000


async def browse(own: KubeApi, rounds: int) -> tuple[list[float], list[float]]:
    alice = KubeApi(own.client, acting_as=ALICE)
    await rows_ms(own)  # warm both paths once
    await rows_ms(alice)
    as_own: list[float] = []
    as_alice: list[float] = []
    for i in range(rounds):  # interleaved, the order swapped each round
        pair = (own, alice) if i % 2 == 0 else (alice, own)
        for api in pair:
            (as_own if api is own else as_alice).append(await rows_ms(api))
    return as_own, as_alice


async def fan_out(sim: Simulator, own: KubeApi, subscribers: int) -> tuple[int, int, int, float]:
    """(upstream watches at the simulator, at the hub, reviews asked, seconds to admit all)."""
    reviews = AccessReviews()
    hub = WatchHub(linger_s=0, reviews=reviews)
    people = [
        KubeApi(own.client, acting_as=Identity(f"user-{i}", (f"team-{i}",)))
        for i in range(IDENTITIES)
    ]
    started = time.perf_counter()
    async with contextlib.AsyncExitStack() as stack:
        for n in range(subscribers):
            api = people[n % IDENTITIES]
            await stack.enter_async_context(hub.subscribe("bench", CONFIGMAPS, NAMESPACE, api))
        admitted = time.perf_counter() - started
        held = sim.call(lambda state: state.objects.store.subscribers(("", "configmaps")))
        at_hub = hub.upstream_count()
    await hub.close()
    await reviews.close()
    return held, at_hub, reviews.asked, admitted


async def bench(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp, Simulator(Path(tmp), context="bench") as sim:
        async with kube_api(sim.kubeconfig_path) as client:
            own = KubeApi(client)
            await seed(own, args.pods)
            as_own, as_alice = await browse(own, args.rounds)
            held, at_hub, asked, admitted = await fan_out(sim, own, args.subscribers)
    own_ms, alice_ms = statistics.median(as_own), statistics.median(as_alice)
    ratio = alice_ms / own_ms
    print(f"rows of {args.pods} pods, median of {args.rounds}: console's own identity "
          f"{own_ms:.1f} ms, as alice {alice_ms:.1f} ms: ratio {ratio:.2f}x (target <= 1.2)")  # fmt: skip
    print(f"{args.subscribers} subscribers of {IDENTITIES} identities: upstream watches at the "
          f"simulator {held}, at the hub {at_hub} (target 1); SubjectAccessReviews asked {asked}; "
          f"all admitted in {admitted:.2f} s")  # fmt: skip
    out: Report = args.report
    out.figure("rows as alice / as the console", ratio, "x", at_most=1.2,
               baseline="rows as the console's own identity")  # fmt: skip
    out.figure(f"upstream watches for {args.subscribers} subscribers of {IDENTITIES} identities",
               held, "", at_most=1)  # fmt: skip
    out.figure("SubjectAccessReviews asked", asked, "", at_most=2 * IDENTITIES)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pods", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--subscribers", type=int, default=1000)
    args = options(
        parser,
        quick={"pods": 200, "rounds": 40, "subscribers": 1000},
        smoke={"pods": 5, "rounds": 2, "subscribers": 20},
        argv=sys.argv[1:],
    )
    args.report = Report.of("console_identity", args)
    eventloop.run(bench(args), eventloop.chosen(os.environ))
    return int(args.report.emit())


if __name__ == "__main__":
    raise SystemExit(main())
