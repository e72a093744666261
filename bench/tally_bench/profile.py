"""`./tally profile`: where one component's CPU goes under one operation of `bench cost`.

async-profiler (Maven Central's tools.profiler:async-profiler, its Linux library) is loaded into
the running server's JVM with `jcmd <pid> JVMTI.agent_load` while vegeta drives the operation
(open loop, its `bench cost` rate), and the threads' CPU is read from /proc before and after. The
result: collapsed stacks under .tally/profiles/ (the input of any flame graph tool) and a summary
of µs of CPU per operation by thread and the hottest frames. Profiles are for reading, not reports: they
stay out of bench/out/."""

from __future__ import annotations

import collections
import os
import re
import subprocess
import time
import uuid
import zipfile
from pathlib import Path

from tally.component_cgroups import v2_mount
from tally.fetch import mvn
from tally.settings import REPO
from tally.stack import Stack

from . import cost as bench_cost
from . import warmup
from .http import attack_lazy, vegeta
from .tools import counter_tool, timeseries_tool

ASYNC_PROFILER = "tools.profiler:async-profiler:4.2:jar:linux-x64"
FILL_S = 5  # seconds of the writes an operation reads (GetCount's counters), made before it
#: the operation's own warm-up, bench cost's: after 5 s the gateway's C2 compiler was still at 23-27
#: µs of its 108-114 a GetCount, where bench cost (20 s) measured 8 of 113 (docs/performance-log.md)
WARMUP_S = warmup.WARMUP_S


def library(stack: Stack, say) -> Path:
    """libasyncProfiler.so from Maven Central, unpacked once under the dist folder."""
    target = stack.s.dist("async-profiler")
    so = target / "libasyncProfiler.so"
    if so.exists():
        return so
    target.mkdir(parents=True, exist_ok=True)
    say(f"fetching {ASYNC_PROFILER} with Maven")
    r = subprocess.run(
        mvn("dependency:copy", f"-Dartifact={ASYNC_PROFILER}", f"-DoutputDirectory={target}"),
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    jars = list(target.glob("async-profiler-*.jar"))
    if r.returncode != 0 or not jars:
        raise RuntimeError(f"fetching {ASYNC_PROFILER} failed: {(r.stdout + r.stderr)[-2000:]}")
    with zipfile.ZipFile(jars[0]) as z:
        name = next(n for n in z.namelist() if n.endswith("/libasyncProfiler.so"))
        so.write_bytes(z.read(name))
    so.chmod(0o644)
    return so


def jvm_pid(stack: Stack, component: str) -> int:
    """The JVM of a component, from its cgroup (every server runs in tally.containers/<name>)."""
    cgroup = v2_mount() / stack.s.get("TALLY_RUNQ_CONTAINER_ROOT") / component / "cgroup.procs"
    for pid in cgroup.read_text().split():
        if "java" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode():
            return int(pid)
    raise RuntimeError(f"{component} runs no JVM (cgroup {cgroup.parent})")


def thread_cpu(pid: int) -> dict[str, tuple[str, int, int]]:
    """Each thread's (name, user ticks, system ticks)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            out[tid] = (name, int(fields[11]), int(fields[12]))
        except OSError:
            pass
    return out


def by_thread_group(before: dict, after: dict, ops: int) -> list[tuple[str, float, float]]:
    """(thread group, µs of CPU per op, of which system) for the threads' CPU between two readings;
    numbered threads of one pool count as one group."""
    tick = os.sysconf("SC_CLK_TCK")
    total: collections.Counter = collections.Counter()
    system: collections.Counter = collections.Counter()
    for tid, (name, user, sys_) in after.items():
        _, user0, sys0 = before.get(tid, (name, 0, 0))
        group = re.sub(r"\d+", "#", name)
        total[group] += user - user0 + sys_ - sys0
        system[group] += sys_ - sys0
    scale = 1e6 / tick / max(ops, 1)
    return [(g, v * scale, system[g] * scale) for g, v in total.most_common()]


def _stacks(collapsed: Path):
    """Each line of collapsed stacks: its frames, first (the thread's) to last, and its samples."""
    for line in collapsed.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        yield stack.split(";"), int(count)


def hottest(collapsed: Path, n: int = 25, inclusive: bool = True) -> list[tuple[float, str]]:
    """The frames with the most samples, as shares of all samples: on the stack (inclusive, a frame
    counted once a stack) or at its top (self)."""
    counts: collections.Counter = collections.Counter()
    samples = 0
    for frames, c in _stacks(collapsed):
        samples += c
        frames = frames[1:]
        for frame in set(frames) if inclusive else frames[-1:]:
            counts[frame] += c
    return [(v / max(samples, 1), f) for f, v in counts.most_common(n)]


def by_thread_frames(collapsed: Path, groups: int = 4, n: int = 6) -> list[tuple[str, float, list[tuple[float, str]]]]:
    """The thread groups with the most samples (numbered threads of a pool as one, from the stacks'
    first frame, `[name tid=N]`), each with its share of all samples and its hottest frames as
    shares of all samples, inclusive; frames on 80% or more of a group's stacks (its run loops)
    left out, so what a thread does shows, not how it waits for work."""
    samples = 0
    by_group: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    group_samples: collections.Counter = collections.Counter()
    for frames, c in _stacks(collapsed):
        samples += c
        thread = re.match(r"\[(.*?)(?: tid=\d+)?\]$", frames[0])
        group = re.sub(r"\d+", "#", thread.group(1)) if thread else "(no thread name)"
        group_samples[group] += c
        for frame in set(frames[1:] if thread else frames):
            by_group[group][frame] += c
    out = []
    for group, gs in group_samples.most_common(groups):
        frames = [(v / samples, f) for f, v in by_group[group].most_common() if v < 0.8 * gs][:n]
        out.append((group, gs / max(samples, 1), frames))
    return out


def agent(pid: int, so: Path, command: str) -> None:
    # jcmd splits its arguments at spaces and commas: the agent's options go quoted, as one
    r = subprocess.run(["jcmd", str(pid), "JVMTI.agent_load", str(so), f'"{command}"'], capture_output=True, text=True)
    if r.returncode != 0 or "return code: 0" not in r.stdout:
        raise RuntimeError(f"async-profiler '{command}' failed in {pid}: {r.stdout}{r.stderr}")


def profile(stack: Stack, say, component: str, operation: str, seconds: float = 20, event: str = "itimer") -> Path:
    """Profiles `component` under `operation` of bench cost, or at rest ("idle": nothing asked)."""
    ops = {o.name: o for o in bench_cost.operations()}
    if operation not in (*SPECIAL, *ops):
        raise RuntimeError(f"no operation {operation!r}; one of: {', '.join(SPECIAL)}, {', '.join(ops)}")
    so = library(stack, say)
    pid = jvm_pid(stack, component)
    out = stack.s.home / "profiles"
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o777)  # the server writes the profile as its own service user
    stem = out / f"{component}-{operation}"
    load = (
        _idle(seconds)
        if operation == "idle"
        else _drain(stack, say, seconds)
        if operation == "timeseries_drain"
        else _counters_drain(stack, say, seconds)
        if operation == "counters_drain"
        else operation_load(stack, say, ops[operation], seconds)
    )
    say(f"profiling {component} (pid {pid}, {event}) under {operation} for {seconds:g} s ...")
    # threads: each stack begins with its thread's name, which hottest() skips and by_thread_frames() reads
    agent(pid, so, f"start,event={event},interval=1ms,threads")
    before, t0 = thread_cpu(pid), time.monotonic()
    try:
        n, what = load()
    finally:
        after = thread_cpu(pid)
        agent(pid, so, f"stop,file={stem}.collapsed,collapsed")
    say(f"{what} in {time.monotonic() - t0:.1f} s")
    groups = by_thread_group(before, after, n)
    unit = "µs of CPU a second (1,000,000 = a core)" if operation == "idle" else "µs of CPU an operation"
    say(f"{component}: {sum(g[1] for g in groups):,.1f} {unit}; by thread (system time in brackets):")
    for g, us, sys_us in groups[:12]:
        if us >= 0.5:
            say(f"  {us:9.1f} ({sys_us:7.1f})  {g}")
    collapsed = Path(f"{stem}.collapsed")
    say("hottest frames at the top of the stack (self, share of samples):")
    for share, frame in hottest(collapsed, 15, inclusive=False):
        say(f"  {share * 100:5.1f}%  {frame[:140]}")
    say("hottest frames on the stack (inclusive; the threads' run loops, on most stacks, left out):")
    for share, frame in [h for h in hottest(collapsed, 60) if h[0] < 0.8][:25]:
        say(f"  {share * 100:5.1f}%  {frame[:140]}")
    say("hottest frames by thread group (inclusive, a group's run loops left out):")
    for group, share, frames in by_thread_frames(collapsed, groups=4, n=6):
        say(f"  {group}: {share * 100:.1f}% of the samples")
        for frame_share, frame in frames:
            say(f"    {frame_share * 100:5.1f}%  {frame[:136]}")
    say(f"collapsed stacks: {stem}.collapsed")
    say(f"async-profiler stays loaded in {component} (pid {pid}) until it restarts; bench cost warns of it")
    return Path(f"{stem}.collapsed")


# besides bench cost's operations: the stack at rest, the writer storing a backlog (bench
# timeseries' load: events of 2 items over 1,000 ids produced straight to Kafka) and the rollup job
# folding one (bench counters' EVENTUAL load: 300,000 AddCount events over 100,000 new counters)
SPECIAL = ("idle", "timeseries_drain", "counters_drain")
DRAIN_EVENTS = 200_000
COUNTER_EVENTS = 300_000


def _drain(stack: Stack, say, seconds: float):
    tool, common = timeseries_tool(stack, "bench_ts")

    def load() -> tuple[int, str]:
        run = f"prof{uuid.uuid4().hex[:8]}"
        subprocess.run(
            tool
            + ["produce", *common, "--events", str(DRAIN_EVENTS), "--ids", "1000", "--spread-seconds", "600"]
            + ["--run", run],
            check=True,
            capture_output=True,
            text=True,
        )
        time.sleep(seconds)  # the writer stores the backlog meanwhile
        return DRAIN_EVENTS, f"{DRAIN_EVENTS:,} events produced and stored"

    return load


def _counters_drain(stack: Stack, say, seconds: float):
    tool = counter_tool(stack)

    def load() -> tuple[int, str]:
        run = f"prof{uuid.uuid4().hex[:8]}"
        subprocess.run(
            tool
            + ["produce", "--namespace", "video_views", "--events", str(COUNTER_EVENTS), "--counters", "100000"]
            + ["--run", run],
            check=True,
            capture_output=True,
            text=True,
        )
        time.sleep(seconds)  # the rollup job folds the backlog meanwhile
        return COUNTER_EVENTS, f"{COUNTER_EVENTS:,} AddCount events produced and folded"

    return load


def _idle(seconds: float):
    def load() -> tuple[int, str]:
        time.sleep(seconds)
        return max(1, round(seconds)), "nothing asked"

    return load


def operation_load(stack: Stack, say, op, seconds: float):
    """One operation of bench cost, ready to run: what it reads written first, its warm-up done;
    the load returned runs it for `seconds` and gives (operations, a line saying so)."""
    exe = vegeta(stack)
    gw = stack.component("gateway").url()
    url = gw + op.path
    run = uuid.uuid4().hex[:8]
    if op.reads:  # what it reads must exist, or the profile is of the miss path (a Cassandra read)
        writer = next(o for o in bench_cost.operations() if o.name == op.reads)
        say(f"writing what {op.name} reads: {op.reads} for {FILL_S} s, then {writer.drain_s:g} s for the rollup ...")
        for r in (run, "warm" + run):
            attack_lazy(
                exe,
                gw + writer.path,
                lambda i, r=r: writer.body(r, i),
                writer.rate,
                FILL_S,
            )
        time.sleep(writer.drain_s + 5)
    warm = "warm" + run
    if op.name in bench_cost.READS:  # a page or hits of an id that has none is the miss path
        say(f"writing the {bench_cost.READ_EVENTS:,} events of one id {op.name} reads ...")
        bench_cost.fill_read_id(stack, run, [op])
        warm = run  # a read changes nothing: the warm-up reads what the profile will
    say(f"warming {op.name} up for {WARMUP_S} s ...")
    attack_lazy(exe, url, lambda i: op.body(warm, i), op.rate, WARMUP_S)

    def load() -> tuple[int, str]:
        report = attack_lazy(exe, url, lambda i: op.body(run, i), op.rate, seconds)
        load.report = report  # vegeta's, for a caller that wants its latencies
        n = round(report["requests"] * report["success"]) * op.per_request
        return n, f"{n:,} operations at {op.rate}/s, p99 {report['latencies']['99th'] / 1e6:.1f} ms"

    return load
