"""`./tally bench lifecycle`: how long the stack's own commands take, as a user runs them: `up` on
a running stack (a no-op), a warm `up` (the stack stopped with `down`, its data kept: servers
start, jobs restore from their checkpoints) and a cold one (`down --wipe`: every server's data and
config made anew, the jobs deployed fresh; downloads, the build and the venv kept). It stops and
wipes the stack it measures: the stack's data is gone afterwards."""

from __future__ import annotations

import statistics
import subprocess
import time

from tally.settings import REPO
from tally.stack import Stack

RUNS = 3


def timed(*args: str) -> float:
    t0 = time.monotonic()
    r = subprocess.run([str(REPO / "tally"), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"./tally {' '.join(args)} failed: {(r.stdout + r.stderr)[-2000:]}")
    return time.monotonic() - t0


def bench_lifecycle(stack: Stack, say, runs: int = RUNS) -> dict:
    timed("up")  # the stack as the measurement starts it: up, built, the jobs running
    result: dict = {"runs": runs}
    noop, warm, cold = [], [], []
    for i in range(runs):
        noop.append(timed("up"))
        timed("down")
        warm.append(timed("up"))
        timed("down", "--wipe")
        cold.append(timed("up"))
        say(f"  round {i + 1}: no-op {noop[-1]:.1f} s, warm {warm[-1]:.1f} s, cold {cold[-1]:.1f} s")
    for name, xs in (("noop_up_s", noop), ("warm_up_s", warm), ("cold_up_s", cold)):
        result[name] = {"median": round(statistics.median(xs), 1), "min": round(min(xs), 1), "max": round(max(xs), 1)}
    return result


def table(report: dict) -> str:
    def cell(key: str) -> str:
        r = report[key]
        return f"{r['median']:.1f} s ({r['min']:.1f}-{r['max']:.1f})"

    return "\n".join(
        [
            "| command | time, median of " + str(report["runs"]) + " (min-max) |",
            "|---|---|",
            f"| `./tally up` on a running stack | {cell('noop_up_s')} |",
            f"| warm `./tally up` (after `./tally down`: data kept, jobs restored) | {cell('warm_up_s')} |",
            f"| cold `./tally up` (after `./tally down --wipe`; downloads, build and venv kept) | {cell('cold_up_s')} |",
        ]
    ) + (
        f"\n\nMeasured {report.get('measured_at', '?')} at commit `{report.get('commit', '?')}` "
        "(`./tally bench lifecycle`, `bench/out/lifecycle.json`)."
    )
