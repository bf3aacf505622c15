"""Hostile benchmark: template bombs sent to ``POST /charts/template/upload`` of a running chartsvc.

Two bombs, anonymous as the issue found them: a loop of a hundred million numbers (stopped at
``chartsvc.charts.render-timeout``) and a string doubled thirty times (stopped at
``max-render-memory``). Prints how long each refusal took and the resident memory of the service
and of its whole process tree (render workers included) before, after each bomb, and once the
replaced worker is idle (target: within 50 MB of before), then a small render's answer time.
Run: ``.venv/bin/python scripts/bench/chartsvc_render_bomb.py [--timeout 30] [--quick | --smoke]``
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import helm_python as helm
from harness import Served, process_tree, running_chartsvc
from report import Report, options

LOOP = "{{ range $i := until 100000000 }}{{ $i }}{{ end }}\n"
BALLOON = (
    '{{ $s := "xxxxxxxx" }}{{ range until 30 }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ $s }}\n'
)
MiB = 1024 * 1024


def chart(work: Path, name: str, template: str | None) -> bytes:
    work.mkdir(parents=True)
    helm.Chart.create(name, work).close()
    if template is not None:
        templates = work / name / "templates"
        shutil.rmtree(templates)
        templates.mkdir()
        (work / name / "templates" / "bomb.yaml").write_text(template)
    return Path(helm.package(work / name, destination=work)).read_bytes()


def resident(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def memory(served: Served) -> str:
    own = resident(served.pid)
    total = sum(resident(p) for p in process_tree(served.pid))
    return f"service {own / MiB:7.1f} MiB, with workers {total / MiB:7.1f} MiB"


async def post(session: aiohttp.ClientSession, base: str, archive: bytes) -> tuple[int, float]:
    form = aiohttp.FormData()
    form.add_field("chart", archive, filename="c.tgz", content_type="application/gzip")
    started = time.perf_counter()
    async with session.post(f"{base}/api/v1/charts/template/upload", data=form) as resp:
        body = await resp.read()
        if resp.status not in (200, 413, 422):
            raise RuntimeError(f"{resp.status}: {body[:300]!r}")
        return resp.status, time.perf_counter() - started


async def bench(args: argparse.Namespace, report: Report) -> None:
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        fine = chart(root / "fine", "fine", None)
        bombs = {"loop": chart(root / "loop", "loop", LOOP)}
        bombs["balloon"] = chart(root / "balloon", "balloon", BALLOON)
        sets = [f"chartsvc.charts.render-timeout={args.timeout}"]
        async with (
            running_chartsvc(root / "data", sets=sets) as served,
            aiohttp.ClientSession() as session,
        ):
            for _ in range(args.warmup):
                await post(session, served.base, fine)
            before = resident(served.pid)
            print(f"before:                {memory(served)}")
            for name, archive in bombs.items():
                status, seconds = await post(session, served.base, archive)
                print(f"{name:8} bomb: {status} in {seconds:5.2f} s; {memory(served)}")
                report.figure(
                    f"{name} bomb refused after (render-timeout {args.timeout:g} s)",
                    seconds,
                    "s",
                    at_most=args.timeout + 2,
                )
                report.figure(f"{name} bomb answer status", status, "", at_least=413)
            status, seconds = await post(session, served.base, fine)
            print(f"small render after:    {status} in {seconds * 1000:.1f} ms")
            await asyncio.sleep(args.settle)
            print(f"settled:               {memory(served)}")
            grown = (resident(served.pid) - before) / MiB
            print(f"service RSS change: {grown:+.1f} MiB (target within 50)")
            report.figure("service RSS after the bombs, change", grown, "MiB", at_most=50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timeout", type=float, default=30.0, help="render-timeout, seconds")
    parser.add_argument("--warmup", type=int, default=20, help="small renders before the bombs")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before the last look")
    args = options(
        parser,
        # Quick: 5 s (a shorter timeout stops the balloon before its memory limit does, under load).
        quick={"timeout": 5.0},
        smoke={"timeout": 0.5, "warmup": 1, "settle": 0},
    )
    report = Report.of("chartsvc_render_bomb", args)
    asyncio.run(bench(args, report))
    sys.exit(report.emit())


if __name__ == "__main__":
    main()
