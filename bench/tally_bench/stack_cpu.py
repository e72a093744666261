"""The stack's CPU as its components' cgroups count it: each server's seconds (every thread and
child, user and system) and those of its JVM's JIT compiler threads, read by every benchmark
that reports CPU (cost, transport, linger, reads, the warm-up)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from tally.component_cgroups import v2_mount
from tally.stack import Stack


class StackCpu:
    """CPU seconds of each component, from its cgroup's cpu.stat (every thread and child of the
    server, user and system), and of the cgroups the benchmark makes for its own processes."""

    def __init__(self, stack: Stack):
        mount = v2_mount()
        if mount is None:
            raise RuntimeError("no cgroup v2 hierarchy is mounted: the components have no cgroups to read")
        self.root = mount / stack.s.get("TALLY_RUNQ_CONTAINER_ROOT")
        self.components = sorted(
            d.name for d in self.root.iterdir() if d.is_dir() and not d.name.startswith("bench") and usage(d) > 0
        )
        if not self.components:
            raise RuntimeError(
                f"no component cgroups under {self.root}: is the stack up with TALLY_COMPONENT_CGROUPS on?"
            )
        self.own = mount / "tally.bench"

    def read(self) -> dict[str, float]:
        return {c: usage(self.root / c) for c in self.components}

    def read_jit(self) -> dict[str, float]:
        """Each component's CPU seconds in its JVM's JIT compiler threads (none: 0)."""
        return {c: jit_seconds(self.root / c) for c in self.components}

    def rate(self, seconds: float) -> dict[str, float]:
        """Each component's cores over the next `seconds` (the quiet checks: no walk of /proc)."""
        return self._over(seconds, self.read)[0]

    def rates(self, seconds: float) -> tuple[dict[str, float], dict[str, float]]:
        """Each component's cores over the next `seconds`, and those of its JIT compiler threads."""
        cores, jit = self._over(seconds, self.read, self.read_jit)
        return cores, jit

    def _over(self, seconds: float, *readers: Callable[[], dict[str, float]]) -> list[dict[str, float]]:
        """Each reader's seconds per component over the next `seconds`, as cores."""
        before, t0 = [r() for r in readers], time.monotonic()
        time.sleep(seconds)
        after, wall = [r() for r in readers], time.monotonic() - t0
        return [{c: (b[c] - a[c]) / wall for c in self.components} for a, b in zip(before, after, strict=True)]

    def profiled(self) -> list[str]:
        """Components whose JVM `./tally profile` loaded async-profiler into since it started: the
        first load of an agent into a running JVM may throw its compiled code away, so the report
        says which servers had one (restart them for a run that is like a user's)."""
        out = []
        for c in self.components:
            try:
                pids = (self.root / c / "cgroup.procs").read_text().split()
            except OSError:
                continue
            for pid in pids:
                try:
                    if "libasyncProfiler" in Path(f"/proc/{pid}/maps").read_text():
                        out.append(c)
                        break
                except OSError:
                    pass
        return out

    def cgroup(self, name: str) -> Path:
        d = self.own / name
        d.mkdir(parents=True, exist_ok=True)
        return d


def cpu_stat(d: Path) -> dict[str, float]:
    """A cgroup's cpu.stat, its `*_usec` fields as seconds (cgroup v2 keeps them with no controller
    on): usage_usec all of its CPU, system_usec the part in the kernel (its system calls, and the
    softirq work charged to it, such as a loopback send's delivery to the receiving socket). Empty
    when the cgroup is gone."""
    try:
        lines = (d / "cpu.stat").read_text().splitlines()
    except OSError:
        return {}
    return {k: int(v) / 1e6 for k, v in (line.split() for line in lines) if k.endswith("_usec")}


def usage(d: Path) -> float:
    """A cgroup's CPU seconds."""
    return cpu_stat(d).get("usage_usec", 0.0)


def usage_and_kernel(d: Path) -> tuple[float, float]:
    """A cgroup's CPU seconds, and of them those in the kernel, from one read of cpu.stat."""
    stat = cpu_stat(d)
    return stat.get("usage_usec", 0.0), stat.get("system_usec", 0.0)


def cores_over(cgroup: Path, seconds: float) -> float:
    """A cgroup's cores over the next `seconds`."""
    return cores_and_kernel_over(cgroup, seconds)[0]


def cores_and_kernel_over(cgroup: Path, seconds: float) -> tuple[float, float]:
    """A cgroup's cores over the next `seconds`, and of them those in the kernel."""
    (u0, k0), t0 = usage_and_kernel(cgroup), time.monotonic()
    time.sleep(seconds)
    (u1, k1), wall = usage_and_kernel(cgroup), time.monotonic() - t0
    return (u1 - u0) / wall, (k1 - k0) / wall


#: HotSpot's compiler threads ("C2 CompilerThread0", cut to 15 characters by the kernel)
JIT_THREADS = ("C1 CompilerThre", "C2 CompilerThre")


def jit_seconds(cgroup: Path) -> float:
    """CPU seconds (user and system) of the JIT compiler threads of the processes in a cgroup. A
    compiler thread HotSpot ended takes its seconds with it, so this is at least what they used."""
    ticks = thread_ticks(cgroup, lambda name: name.startswith(JIT_THREADS))
    return (ticks or 0) / os.sysconf("SC_CLK_TCK")


def thread_ticks(cgroup: Path, named: Callable[[str], bool]) -> int | None:
    """User plus system ticks of the threads whose name `named` accepts, of the processes in a
    cgroup (None when no such thread runs)."""
    found = None
    try:
        pids = (cgroup / "cgroup.procs").read_text().split()
    except OSError:
        return None
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                if not named(Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()):
                    continue
                fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found = (found or 0) + int(fields[11]) + int(fields[12])  # utime, stime (stat fields 14, 15)
    return found
