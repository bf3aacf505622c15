"""Benchmark: ``GET …/diagnose`` over the whole demo cluster against one ``…/resources/pods/objects``.

Prints, measured in the same run against the same cluster: the median (p50) and p95 of a
whole-cluster diagnosis (every kind it reads, plus the previous-log excerpts of the crashing
workloads) and of one projected pod list, and their ratio (target: diagnosis p50 within 3x).

The simulator (``wharf kubesim --scenario demo --nodes 3``) and the console (``wharf serve
console``, open mode, the simulator's kubeconfig) run as child processes.
Run: ``.venv/bin/python scripts/bench/console_diagnose.py [--rounds 30]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from harness import child, free_port, percentile, timed_get, wait_ready
from report import Report, options


def wait_for_file(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} never appeared")
        time.sleep(0.05)


async def measure(base: str, rounds: int, out: Report) -> None:
    async with aiohttp.ClientSession() as session:
        await wait_ready(session, base)
        cluster = f"{base}/api/v1/clusters/demo"
        diagnosis = await (await session.get(f"{cluster}/diagnose")).json()
        print(f"findings: {len(diagnosis['findings'])} (whole cluster)")
        for _ in range(min(rounds, 3)):  # warm-up: discovery, connections
            await timed_get(session, f"{cluster}/diagnose")
            await timed_get(session, f"{cluster}/resources/pods/objects")
        diag, pods = [], []
        for _ in range(rounds):  # interleaved, so both see the same machine
            diag.append(await timed_get(session, f"{cluster}/diagnose"))
            pods.append(await timed_get(session, f"{cluster}/resources/pods/objects"))
    for label, values in (("diagnose", diag), ("pods/objects", pods)):
        print(
            f"{label:>13}: p50 {statistics.median(values):7.1f} ms   "
            f"p95 {percentile(values, 0.95):7.1f} ms"
        )
    ratio = statistics.median(diag) / statistics.median(pods)
    print(f"diagnose p50 / pods p50 = {ratio:.2f}x (target <= 3x)")
    out.figure("diagnose p50 / pods list p50", ratio, "x", at_most=3, baseline="console pods list")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds before the first call")
    # Smoke: no wait for the failures to show (the diagnosis runs whatever it finds).
    args = options(parser, quick={"rounds": 15}, smoke={"rounds": 2, "settle": 0})
    out = Report.of("console_diagnose", args)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        kubeconfig = work / "kubeconfig"
        sim_port, console_port = free_port(), free_port()
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        wharf = [sys.executable, "-m", "wharf"]
        sim_args = [*wharf, "kubesim", "--port", str(sim_port), "--context", "demo"]
        sim_args += ["--scenario", "demo", "--nodes", "3", "--kubeconfig", str(kubeconfig)]
        with child(sim_args, env, work / "kubesim.log"):
            wait_for_file(kubeconfig)
            console_args = [*wharf, "serve", "console", "--host", "127.0.0.1"]
            console_args += ["--port", str(console_port)]
            console_args += ["--set", f"console.data-dir={work / 'console'}"]
            console_args += ["--set", "console.clusters.impersonate=off"]
            with child(console_args, env, work / "console.log"):
                time.sleep(args.settle)  # the demo's broken workloads reach their failure states
                try:
                    asyncio.run(measure(f"http://127.0.0.1:{console_port}", args.rounds, out))
                except RuntimeError:
                    sys.stderr.write((work / "console.log").read_text()[-3000:])
                    raise
    return out.emit()


if __name__ == "__main__":
    raise SystemExit(main())
