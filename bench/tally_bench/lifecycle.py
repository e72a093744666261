"""`./tally bench lifecycle`: how long the stack's own commands take, as a user runs them: `up` on
a running stack (a no-op), a warm `up` (the stack stopped with `down`, its data kept: servers
start, jobs restore from their checkpoints) and a cold one (`down --wipe`: every server's data and
config made anew, the jobs deployed fresh; downloads, the build and the venv kept). It stops and
wipes the stack it measures: the stack's data is gone afterwards."""

from __future__ import annotations

import re
import statistics
import subprocess
import time

from tally.settings import REPO
from tally.stack import Stack

RUNS = 3


PHASES = ("packages", "build", "servers", "jobs")


def timed(*args: str, phases: dict[str, list[float]] | None = None) -> float:
    """Seconds the command took; for `up`, each phase's seconds (its last line says them) added to `phases`."""
    t0 = time.monotonic()
    r = subprocess.run([str(REPO / "tally"), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"./tally {' '.join(args)} failed: {(r.stdout + r.stderr)[-2000:]}")
    took = time.monotonic() - t0
    if phases is not None:
        for name, seconds in re.findall(r"(\w+) ([0-9.]+)s", r.stdout.split("up took", 1)[-1]):
            if name in PHASES:
                phases.setdefault(name, []).append(float(seconds))
    return took


def spread(xs: list[float]) -> dict:
    return {"median": round(statistics.median(xs), 1), "min": round(min(xs), 1), "max": round(max(xs), 1)}


def bench_lifecycle(stack: Stack, say, runs: int = RUNS) -> dict:
    timed("up")  # the stack as the measurement starts it: up, built, the jobs running
    result: dict = {"runs": runs, "parallel": stack.s.int("TALLY_UP_PARALLEL")}
    noop, warm, cold = [], [], []
    warm_phases: dict[str, list[float]] = {}
    cold_phases: dict[str, list[float]] = {}
    for i in range(runs):
        noop.append(timed("up"))
        timed("down")
        warm.append(timed("up", phases=warm_phases))
        timed("down", "--wipe")
        cold.append(timed("up", phases=cold_phases))
        say(f"  round {i + 1}: no-op {noop[-1]:.1f} s, warm {warm[-1]:.1f} s, cold {cold[-1]:.1f} s")
    for name, xs in (("noop_up_s", noop), ("warm_up_s", warm), ("cold_up_s", cold)):
        result[name] = spread(xs)
    # where an up's time goes: servers start side by side (TALLY_UP_PARALLEL), then the jobs deploy
    result["warm_phases_s"] = {k: spread(v) for k, v in warm_phases.items()}
    result["cold_phases_s"] = {k: spread(v) for k, v in cold_phases.items()}
    return result


def table(report: dict) -> str:
    def cell(key: str) -> str:
        r = report[key]
        return f"{r['median']:.1f} s ({r['min']:.1f}-{r['max']:.1f})"

    def phases(key: str) -> str:
        got = report.get(key) or {}
        return ", ".join(f"{p} {got[p]['median']:.1f} s" for p in PHASES if p in got and got[p]["median"] >= 0.1)

    warm, cold = phases("warm_phases_s"), phases("cold_phases_s")
    return "\n".join(
        [
            "| command | time, median of " + str(report["runs"]) + " (min-max) | where it goes (medians) |",
            "|---|---|---|",
            f"| `./tally up` on a running stack | {cell('noop_up_s')} | |",
            f"| warm `./tally up` (after `./tally down`: data kept, jobs restored) | {cell('warm_up_s')} | {warm} |",
            "| cold `./tally up` (after `./tally down --wipe`; downloads, build and venv kept) "
            f"| {cell('cold_up_s')} | {cold} |",
        ]
    ) + (
        f"\n\nMeasured {report.get('measured_at', '?')} at commit `{report.get('commit', '?')}` "
        "(`./tally bench lifecycle`, `bench/out/lifecycle.json`)."
    )
