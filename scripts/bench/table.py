"""Run every benchmark (or those named) and print one table of their figures; ``scripts/bench/all``.

Each benchmark runs as its own process, one after another (they measure the machine: never two at
once), with ``--quick`` or ``--smoke`` passed through. The table is built from the JSON line each
one prints last (``report.MARK``), never from its text; the text goes to ``var/bench/<name>.log``.
A benchmark that fails or prints no figures is a row of its own, marked ``failed``, and the exit
code is 1 when any target is missed or any benchmark failed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import report

HERE = Path(__file__).resolve().parent
LOGS = HERE.parents[1] / "var" / "bench"
#: Every benchmark, in the order they run: the quick ones first.
BENCHMARKS = (
    "cli_start",
    "request_path",
    "kubesim_list",
    "results_parse",
    "results_ingest",
    "results_patch",
    "results_gate",
    "results_history",
    "results_events",
    "results_events_flood",
    "results_postgres",
    "chartsvc_index",
    "chartsvc_template",
    "chartsvc_render_bomb",
    "chartsvc_releases",
    "chartsvc_drift",
    "chartsvc_mcp",
    "console_objects",
    "console_counts",
    "console_watch_fanout",
    "console_identity",
    "console_logs_multi",
    "console_exec_portforward",
    "console_helm",
    "console_diagnose",
    "console_web",
    "throughput",
    "soak",
)


@dataclass(frozen=True, slots=True)
class Outcome:
    bench: str
    seconds: float
    code: int
    reports: list[dict[str, Any]]


def run(bench: str, mode: str, timeout: float) -> Outcome:
    LOGS.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(HERE / f"{bench}.py")]
    if mode != "full":
        command.append(f"--{mode}")
    started = time.monotonic()
    log = LOGS / f"{bench}.log"
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = (
            -1,
            _text(exc.stdout),
            _text(exc.stderr) + f"\ntimed out after {timeout:g}s",
        )
    log.write_text(out + "\n--- stderr\n" + err)
    return Outcome(bench, time.monotonic() - started, code, report.read(out))


def _text(value: bytes | str | None) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value or ""


def rows(outcome: Outcome) -> list[tuple[str, ...]]:
    figures = [f for r in outcome.reports for f in r["figures"]]
    if not figures or (outcome.code not in (0, 1)):
        why = f"exit {outcome.code}" if outcome.code else "no figures"
        return [
            (outcome.bench, "—", "—", "—", "failed", f"{why}; see var/bench/{outcome.bench}.log")
        ]
    out: list[tuple[str, ...]] = []
    for f in figures:
        value = "—" if f["value"] is None else f"{f['value']:.4g} {f['unit']}".strip()
        verdict = {True: "met", False: "MISSED", None: ""}[f["met"]]
        out.append((outcome.bench, f["name"], value, f["target"], verdict, f["baseline"]))
    return out


def print_table(lines: list[tuple[str, ...]]) -> None:
    header = ("benchmark", "figure", "value", "target", "verdict", "baseline")
    widths = [max(len(row[i]) for row in (header, *lines)) for i in range(len(header))]
    for row in (header, tuple("-" * w for w in widths), *lines):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument("--quick", action="store_true", help="small sizes (minutes in all)")
    sizes.add_argument("--smoke", action="store_true", help="smallest sizes; nothing judged")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per benchmark")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmarks: {', '.join(unknown)} (known: {', '.join(BENCHMARKS)})")
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    started, lines, failed = time.monotonic(), [], False
    for bench in args.names or BENCHMARKS:
        print(f"== {bench} ({mode})", file=sys.stderr, flush=True)
        outcome = run(bench, mode, args.timeout)
        print(f"   {outcome.seconds:.0f} s, exit {outcome.code}", file=sys.stderr, flush=True)
        lines += rows(outcome)
        failed |= outcome.code != 0 or not outcome.reports
    print_table(lines)
    missed = sum(1 for row in lines if row[4] in ("MISSED", "failed"))
    print(
        f"\n{len(lines)} figures, {missed} missed or failed, in {time.monotonic() - started:.0f} s"
    )
    return 1 if failed or missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
