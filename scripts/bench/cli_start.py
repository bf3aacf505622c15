"""Benchmark: how long ``wharf results upload --help`` and ``wharf results gate --help`` take to
start (CI pays it on every step), against a bare ``python -c pass`` in the same run.

Each command runs ``--rounds`` times as a fresh process, the commands interleaved so the machine's
load weighs on all alike; the figure is the median wall time. Target (issue 38): under 200 ms.
``wharf --help``, which loads every service, is shown for comparison (``--help-rounds`` times:
once in a quick run, where it cost more than the two figures judged).
Run: ``.venv/bin/python scripts/bench/cli_start.py [--rounds 20] [--quick|--smoke]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from report import Report, options

TARGET_MS = 200.0
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "wharf results upload --help": [sys.executable, "-m", "wharf", "results", "upload", "--help"],
    "wharf results gate --help": [sys.executable, "-m", "wharf", "results", "gate", "--help"],
    "wharf --help": [sys.executable, "-m", "wharf", "--help"],
}


def once(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--help-rounds", type=int, help="rounds of wharf --help (--rounds)")
    args = options(parser, quick={"rounds": 8, "help_rounds": 1}, smoke={"rounds": 1})
    out = Report.of("cli_start", args)
    for command in COMMANDS.values():  # warm the page cache and the compiled modules
        once(command)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    shown = args.rounds if args.help_rounds is None else min(args.help_rounds, args.rounds)
    for round_ in range(args.rounds):
        for name, command in COMMANDS.items():
            if name != "wharf --help" or round_ < shown:
                times[name].append(once(command))
    floor = statistics.median(times["python -c pass"])
    for name, taken in times.items():
        median = statistics.median(taken)
        print(f"{name:32} median {median:7.1f} ms   {median / floor:5.1f}x python -c pass")
        if name.startswith("wharf results"):
            out.figure(f"{name}, median", median, "ms", at_most=TARGET_MS,
                       baseline=f"python -c pass: {floor:.1f} ms")  # fmt: skip
    out.figure(
        "wharf --help (every service), median", statistics.median(times["wharf --help"]), "ms"
    )
    return out.emit()


if __name__ == "__main__":
    raise SystemExit(main())
