"""A warm-up before a benchmark measures: a user's stack has served before, so the operation is
sent, unmeasured, in WARMUP_S windows until the servers' JIT compilers are back near their rate
at rest (WARMUP_MAX_S at most), and a run measures the operation, not the compiling of its path.
A fixed 20 s was not enough on a stack whose jobs were redeployed minutes before: its rounds
carried 9-19 µs an operation of JIT (docs/performance-log.md); a `bench reads` run on a stack up
3 minutes read p50 660 ms at 100 req/s, 28 ms in the next."""

from __future__ import annotations

import time
from collections.abc import Callable

from tally.stack import Stack

from .stack_cpu import StackCpu

WARMUP_S = 20  # the C2 compiler was still at 7 µs a GetCount after 5 s (profile, docs/benchmarks.md)
WARMUP_MAX_S = 120  # a warm-up at most (a server that keeps compiling is reported, not waited for)
JIT_SETTLED = 0.01  # cores of JIT above the idle stack's at which a warm-up ends
#: the JIT of a stack at rest: 0.02 cores in all in cost.json's idle windows. A stack whose servers
#: just started compiles far more while asked nothing (0.43 cores after `./tally test`, 2026-11-30),
#: and a warm-up that ended near that rate left a run compiling: it is waited out down to this.
JIT_AT_REST = 0.05


def jit_target(jit_idle: float) -> float:
    """The JIT cores at which a warm-up ends: JIT_SETTLED above the stack's rate at rest, that rate
    taken at most JIT_AT_REST."""
    return min(jit_idle, JIT_AT_REST) + JIT_SETTLED


def warm_until_settled(window: Callable[[int], float], rate: int, jit_idle: float) -> tuple[float, float]:
    """Runs `window(first request's number)`, which loads for WARMUP_S and answers the JIT
    compilers' cores meanwhile, until that is within JIT_SETTLED of `jit_idle` (of JIT_AT_REST when
    the stack compiles more than that at rest) or WARMUP_MAX_S have passed; the seconds of load and
    the last window's JIT cores."""
    first, jit, target = 0, float("inf"), jit_target(jit_idle)
    while jit > target and first < WARMUP_MAX_S * rate:
        jit = window(first)
        first += int(WARMUP_S * rate)
    return first / rate, jit


def jit_window(cpu: StackCpu, load: Callable[[int], None]) -> Callable[[int], float]:
    """A window for warm_until_settled: `load(first request's number)` sends the operation for
    WARMUP_S; the window answers the JIT compilers' cores meanwhile."""

    def window(first: int) -> float:
        before, t0 = sum(cpu.read_jit().values()), time.monotonic()
        load(first)
        return (sum(cpu.read_jit().values()) - before) / (time.monotonic() - t0)

    return window


def warm(stack: Stack, say, what: str, load: Callable[[int], None], rate: int) -> float:
    """Sends `what` at `rate` (`load(first)`: WARMUP_S of it, requests numbered from `first`),
    unmeasured, until the JIT compilers are down to `jit_target` of their rate before it; the
    seconds it took (the report records them)."""
    cpu = StackCpu(stack)
    jit_idle = sum(cpu.rates(WARMUP_S / 2)[1].values())
    say(f"warm-up: {what} at {rate:,} req/s until the JIT compilers are back near {jit_idle:.3f} cores ...")
    spent, jit = warm_until_settled(jit_window(cpu, load), rate, jit_idle)
    target = jit_target(jit_idle)
    settled = "settled" if jit <= target else f"not settled after {WARMUP_MAX_S:g} s: measured anyway"
    say(f"  {spent:g} s, the JIT at {jit:.3f} cores in its last window ({settled} at {target:.3f})")
    return spent
