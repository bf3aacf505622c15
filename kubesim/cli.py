"""``wharf kubesim``: run a simulated cluster in the foreground until interrupted.

``wharf.cli`` dispatches ``wharf kubesim ...`` to :func:`main`. The kubeconfig (with the CA and a
bearer token) is written to ``--kubeconfig``; the token itself is never printed or logged.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path

from common import eventloop
from kubesim.machinery.timings import Timings
from kubesim.scenarios import SCENARIOS
from kubesim.simulator import Simulator


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="wharf kubesim", description="Serve a simulated Kubernetes API (1.32) over HTTPS."
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=6443, help="port to listen on (default 6443)")
    p.add_argument(
        "--kubeconfig",
        type=Path,
        default=Path(".wharf/kubesim/kubeconfig"),
        help="where to write the kubeconfig; certificates go next to it",
    )
    p.add_argument("--context", default="kubesim", help="context (and cluster) name")
    p.add_argument("--token", default=None, help="bearer token to require (random by default)")
    p.add_argument("--nodes", type=int, default=3, help="number of simulated nodes (default 3)")
    p.add_argument(
        "--scenario",
        choices=sorted(SCENARIOS),
        default="empty",
        help="what the cluster starts with: empty (bare) or demo (apps and failure modes)",
    )
    p.add_argument(
        "--speed",
        choices=("realistic", "fast"),
        default="realistic",
        help="pod start, crash back-off and log cadence: realistic (seconds) or fast",
    )
    p.add_argument(
        "--user",
        dest="users",
        action="append",
        type=_user,
        default=[],
        metavar="NAME[=GROUP,...]",
        help="another identity, with RBAC enforced (repeatable): its token goes into the "
        "kubeconfig as context <context>-NAME; it may do nothing until a RoleBinding grants it",
    )
    p.add_argument(
        "--min-token-seconds",
        type=_positive,
        default=600,
        help="shortest expirationSeconds a TokenRequest may ask (default 600, as kube-apiserver);"
        " a few seconds exercise clients' credential refresh",
    )
    p.add_argument(
        "--max-watch-seconds",
        type=_positive,
        default=None,
        help="end every watch after this many seconds whatever timeoutSeconds asked (as a load "
        "balancer does); default: as asked",
    )
    p.add_argument(
        "--client-certificates",
        action="store_true",
        help="also accept client certificates signed by the simulator's authority (ca.key next "
        "to the kubeconfig): common name the user, organizations the groups",
    )
    p.add_argument(
        "--plain-http",
        action="store_true",
        help="serve http without authentication (benchmarks only)",
    )
    return p


def _positive(given: str) -> int:
    try:
        value = int(given)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{given!r} is not a whole number of seconds above 0")
    return value


def _user(given: str) -> tuple[str, tuple[str, ...]]:
    """``jane`` or ``jane=team-a,auditors`` -> (name, groups)."""
    name, _, groups = given.partition("=")
    listed = tuple(g.strip() for g in groups.split(",") if g.strip())
    if not name.strip() or name != name.strip() or any(c in name for c in ",/\\"):
        raise argparse.ArgumentTypeError(f"{given!r}: expected NAME or NAME=GROUP,GROUP")
    if name.startswith("system:") or any(g == "system:masters" for g in listed):
        raise argparse.ArgumentTypeError(
            f"{given!r}: system: users and the system:masters group are the admin's"
        )
    return name, listed


async def _run(sim: Simulator, loop_name: eventloop.Loop) -> None:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, sim.stop_soon)

    def ready() -> None:
        print(f"kubesim serving {sim.url} ({loop_name} event loop)", flush=True)
        print(f"kubeconfig: {sim.kubeconfig_path} (context {sim.context})", flush=True)
        for name in sim.user_tokens:
            print(f"user {name}: context {sim.context}-{name}", flush=True)

    await sim.serve(ready)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.scenario != "empty" and args.nodes < 1:
        parser.error(f"--scenario {args.scenario} needs --nodes 1 or more")
    users = dict(args.users)
    if len(users) != len(args.users):
        parser.error("--user: each name once")
    if users and args.plain_http:
        parser.error("--user needs TLS: --plain-http serves without authentication")
    try:
        loop = eventloop.chosen(os.environ)
    except ValueError as exc:
        print(f"wharf kubesim: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    kubeconfig = args.kubeconfig.expanduser().resolve()
    sim = Simulator(
        kubeconfig.parent,
        token=args.token,
        host=args.host,
        port=args.port,
        context=args.context,
        tls=not args.plain_http,
        kubeconfig_path=kubeconfig,
        nodes=args.nodes,
        scenario=args.scenario,
        timings=Timings.realistic() if args.speed == "realistic" else Timings(),
        users=users,
        min_token_seconds=args.min_token_seconds,
        max_watch_seconds=args.max_watch_seconds,
        client_certificates=args.client_certificates,
    )
    try:
        eventloop.run(_run(sim, loop), loop)
    except OSError as exc:
        print(f"wharf kubesim: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
