"""./tally bench cost: the CPU each operation costs, per component, read from the components'
own cgroups (tally.containers/<component>/cpu.stat), the figure the performance work steers by.

For each operation: wait until the jobs' input backlog is drained and the stack is back at its
idle CPU, read each component's idle CPU over `idle_s`, drive the operation with vegeta (open
loop, its requests made as it sends them so tokens and times are fresh) for `seconds`, then wait
until the pipeline has drained what the load left (rollups an accept window later, the writer's
and indexer's batches, compactions) and the stack is idle again. The operation's cost per
component is its CPU over the whole span, load and drain, minus the idle CPU over the same span,
over the operations answered 2xx (TimeSeries writes: over the events). Kafka's own
ProducerPerformance (acks=all, idempotent, linger 1 ms) in a cgroup of its own is the floor:
producer plus broker per record, measured the same way. The null request is the control: vegeta
at GetCount's rate against a server outside the stack that only answers (Netty, a cgroup of its
own), so the stack's servers' rise over their idle CPU is what the box's load alone costs them,
no work asked of any. Every window (idle, and load with its drain) lasts a whole number of the
stack's background periods (Prometheus's scrape interval, the jobs' checkpoint interval), so each
holds as many scrapes and checkpoints as the idle it is compared with. Each figure is the median
of `runs` with min and max; the operations are interleaved, a whole round per run. No figure is
asserted.
"""

from __future__ import annotations

import base64
import json
import math
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import requests
from tally.component_cgroups import JOIN
from tally.plots import pyplot
from tally.stack import Stack

from .floors import start_floor, stop
from .http import VegetaReportError, _save, attack_lazy, settle, summary, vegeta
from .stack_cpu import StackCpu, usage
from .tools import (
    OUT,
    cassandra_background,
    iso,
    jobs_state_bytes,
    pipeline_backlog,
    producer_performance,
    read_cache_hits,
)
from .warmup import JIT_SETTLED, WARMUP_MAX_S, WARMUP_S, jit_window, warm_until_settled

PNG = OUT / "cost.png"
BACKLOG_DRAINED = 500  # records the jobs may still have to read when a drain counts as done
FLOOR_RATE = 2000
NULL_SERVER = "netty"  # the null request's server: Netty alone (the gateway's transport and HTTP codec)
NULL_OF = "getcount"  # the operation whose path, bodies and rate the null request copies


def background_period(stack: Stack) -> float:
    """Seconds of the stack's periodic background: the least common multiple of Prometheus's
    scrape interval (at each scrape every server walks its metrics: about 0.3 s of CPU across the
    stack on this box, 0.1 s of it the broker's) and the jobs' checkpoint interval. By the phase
    of a 10 s window (one scrape or none) the idle stack read up to 0.025 cores apart (sd 0.0065;
    the stack's CPU folded over 20 periods, docs/performance-log.md): a small part of the windows'
    spread (sd 0.04), the rest aperiodic, but one a whole number of periods removes."""
    scrape_ms = None
    try:
        url = stack.component("prometheus").url() + "/api/v1/status/config"
        scrape_ms = scrape_interval_ms(requests.get(url, timeout=5).json()["data"]["yaml"])
    except (requests.RequestException, KeyError, ValueError):
        pass  # not up or not answering: the interval the stack's configuration sets
    checkpoint_ms = int(stack.s.get("TALLY_FLINK_CHECKPOINT_INTERVAL_MS") or 5000)
    return math.lcm(scrape_ms or 15_000, checkpoint_ms) / 1000


def scrape_interval_ms(config_yaml: str) -> int | None:
    """The global scrape interval of a Prometheus configuration as its API gives it back (its
    first `scrape_interval`, the global section's, defaults filled in), or None when it has none."""
    m = re.search(r"^\s*scrape_interval:\s*(\d+)(ms|s|m)\s*$", config_yaml, re.MULTILINE)
    return int(m.group(1)) * {"ms": 1, "s": 1000, "m": 60_000}[m.group(2)] if m else None


def whole_periods(seconds: float, period: float) -> float:
    """The seconds to wait after `seconds` so that the window is a whole number of periods."""
    return (-seconds) % period


def now_iso(offset_s: float = 0.0) -> str:
    return iso(int((time.time() + offset_s) * 1e6))


@dataclass
class Operation:
    name: str  # the report's key
    label: str  # the README's row
    path: str  # the gateway's endpoint
    rate: int  # requests a second
    per_request: int  # operations a request counts for (events of a TimeSeries batch)
    body: Callable[[str, int], dict]  # (run id, i) -> the i-th request's JSON
    drain_s: float  # the least wait after the load: a rollup comes an accept window later
    reads: str = ""  # the operation whose writes (same run id) this one reads; bench cost runs it first


def token(run: str, i: int) -> dict:
    return {"token": f"{run}-{i}", "generation_time": now_iso()}


def add_count(namespace: str, durable: bool = True):
    def body(run: str, i: int) -> dict:
        b = {"namespace": namespace, "counter_name": f"cost-{run}-{i % COUNTERS}", "delta": 1}
        if durable:
            b["idempotency_token"] = token(run, i)
        return b

    return body


COUNTERS = 1000  # the measurement: 1,000 counters


def get_count(run: str, i: int) -> dict:
    # the counters the EVENTUAL AddCount of the same round wrote (COUNTERS of them)
    return {"namespace": "video_views", "counter_name": f"cost-{run}-eventual-{i % COUNTERS}"}


def events(n: int, namespace: str = "playback"):
    def body(run: str, i: int) -> dict:
        t = now_iso()
        return {
            "namespace": namespace,
            "events": [
                {
                    "timeSeriesId": f"cost-{run}-{(i * n + k) % COUNTERS}",
                    "eventTime": t,
                    "eventId": f"{run}-{i}-{k}",
                    "eventItems": [{"eventItemKey": "deviceType", "eventItemValue": "aW9z"}],
                }
                for k in range(n)
            ],
        }

    return body


READ_NAMESPACE = "bench_ts"  # a two-day accept window: the read's id is filled in advance
#: the same namespace with its event buckets by time: a page from the newest partition alone
READ_NAMESPACE_BY_TIME = "bench_ts_by_time"
READ_EVENTS = 10_000
#: bench_ts with a 5 s accept window: its page is final (the gateway's read cache) 35 s after it is stored
READ_NAMESPACE_CLOSED = "bench_ts_closed"
#: the closed page's interval by run (µs): it must end behind the stored horizon, not at now
CLOSED_INTERVALS: dict[str, tuple[int, int]] = {}


def read_first_page_closed(run: str, i: int) -> dict:
    start, end = CLOSED_INTERVALS[run]
    return {
        "namespace": READ_NAMESPACE_CLOSED,
        "timeSeriesId": f"cost-read-{run}",
        "timeInterval": {"start": iso(start), "end": iso(end)},
        "pageSize": 100,
    }


def read_first_page(run: str, i: int, namespace: str = READ_NAMESPACE) -> dict:
    return {
        "namespace": namespace,
        "timeSeriesId": f"cost-read-{run}",
        "timeInterval": {"start": now_iso(-7200), "end": now_iso(60)},
        "pageSize": 100,
    }


def search(run: str, i: int) -> dict:
    return {
        "namespace": READ_NAMESPACE,
        "timeInterval": {"start": now_iso(-7200), "end": now_iso(60)},
        "searchQuery": {
            "equals": {"eventItemKey": "deviceType", "eventItemValue": base64.b64encode(run.encode()).decode()}
        },
        "pageSize": 100,
    }


def operations() -> list[Operation]:
    counter = "/v1/counter/"
    ts = "/v1/timeseries/"
    rollup = 10  # accept 5 s + skew 0.5 s + coalesce 1 s, then the rollup's writes
    ev = add_count("video_views")
    return [
        Operation(
            "addcount_eventual",
            "durable AddCount, EVENTUAL (video_views), 1,000 counters",
            counter + "AddCount",
            1000,
            1,
            lambda run, i: ev(run + "-eventual", i),
            rollup,
        ),
        Operation(
            "addcount_accurate",
            "durable AddCount, ACCURATE (ad_clicks), 1,000 counters",
            counter + "AddCount",
            1000,
            1,
            add_count("ad_clicks"),
            rollup,
        ),
        Operation(
            "addcount_best_effort",
            "AddCount, BEST_EFFORT (page_hits), 1,000 counters",
            counter + "AddCount",
            1000,
            1,
            add_count("page_hits", durable=False),
            5,
        ),
        Operation(
            "getcount",
            "GetCount (EVENTUAL, the counters above)",
            counter + "GetCount",
            2000,
            1,
            get_count,
            2,
            reads="addcount_eventual",
        ),
        Operation(
            "addandgetcount",
            "AddAndGetCount, ACCURATE (ad_clicks), 1,000 counters",
            counter + "AddAndGetCount",
            500,
            1,
            lambda run, i: add_count("ad_clicks")(run + "-aag", i),
            rollup,
        ),
        Operation(
            "timeseries_1",
            "TimeSeries event, 1 a request (WriteEventRecordsSync, playback, indexed)",
            ts + "WriteEventRecordsSync",
            1000,
            1,
            events(1),
            5,
        ),
        Operation(
            "timeseries_10",
            "TimeSeries event, 10 a request",
            ts + "WriteEventRecordsSync",
            200,
            10,
            events(10),
            5,
        ),
        Operation(
            "timeseries_100",
            "TimeSeries event, 100 a request",
            ts + "WriteEventRecordsSync",
            20,
            100,
            events(100),
            5,
        ),
        Operation(
            "read_first_page",
            f"ReadEventRecords, first page of 100 of an id with {READ_EVENTS:,} events",
            ts + "ReadEventRecords",
            200,
            1,
            read_first_page,
            2,
        ),
        Operation(
            "read_first_page_by_time",
            f"ReadEventRecords, the same page, event buckets by time ({READ_NAMESPACE_BY_TIME})",
            ts + "ReadEventRecords",
            200,
            1,
            lambda run, i: read_first_page(run, i, READ_NAMESPACE_BY_TIME),
            2,
        ),
        Operation(
            "read_first_page_closed",
            f"ReadEventRecords, the same page in the closed past ({READ_NAMESPACE_CLOSED}: the gateway's memory)",
            ts + "ReadEventRecords",
            200,
            1,
            read_first_page_closed,
            2,
        ),
        Operation(
            "search",
            "SearchEventRecords, equals on a keyword, 100 hits a page",
            ts + "SearchEventRecords",
            100,
            1,
            search,
            2,
        ),
    ]


def null_request() -> Operation:
    """The null request: NULL_OF's path, bodies and rate, sent to a server outside the stack
    (the stack is asked nothing)."""
    op = next(o for o in operations() if o.name == NULL_OF)
    what = op.path.rsplit("/", 1)[-1]
    label = f"null request: {what}'s bodies at {op.rate:,} req/s to a server outside the stack ({NULL_SERVER.title()})"
    return replace(op, name="null", label=label)


def wait_quiet(
    stack: Stack,
    cpu: StackCpu,
    background: Callable[[], int],
    idle_total: float,
    say,
    least_s: float = 0,
    timeout: float = 180,
) -> float:
    """Waits `least_s`, then until the jobs' backlog is drained, `background` (Cassandra's flushes
    and compactions) is 0 and a 5 s window of the stack's CPU is within a margin of its idle; the seconds waited (timeout:
    the report says it was not quiet)."""
    t0 = time.monotonic()
    time.sleep(least_s)
    margin = max(0.08, 0.15 * idle_total)
    while time.monotonic() - t0 < timeout:
        if pipeline_backlog(stack) > BACKLOG_DRAINED or background() > 0:
            time.sleep(1)
        elif sum(cpu.rate(5).values()) <= idle_total + margin:
            return time.monotonic() - t0
    say(f"  the stack was not back at its idle CPU after {timeout:.0f} s; measured anyway")
    return -(time.monotonic() - t0)


@dataclass
class Measured:
    net: dict[str, float]  # each component's CPU seconds over the load and its drain, less its idle
    wall: float  # the span's seconds
    ops: int
    drained: float  # seconds of drain
    idle: dict[str, float]  # the idle cores subtracted
    jit: dict[str, float]  # of `net`, the seconds in JIT compiler threads, less theirs at idle
    jit_idle: dict[str, float]  # of `idle`, the cores of the JIT compiler threads


def measure(
    cpu: StackCpu, idle_s: float, load: Callable[[], int], drain: Callable[[dict], float], period: float = 0
) -> Measured:
    """One load and its drain. Idle is each component's CPU over `idle_s` just before the load and
    just after the drain, averaged: the stack's background (compactions, checkpoints, its own
    scheduler samples) drifts, and one window alone moved a figure by more than the operation's
    own cost. With a `period` (`background_period`) the load's window is waited out to a whole
    number of periods, as `idle_s` should be. The JIT compiler threads' share is measured the same
    way: a server compiling the operation's path is paying a warm-up, not the operation's steady cost."""
    before, jit_before = cpu.rates(idle_s)
    a, ja, t0 = cpu.read(), cpu.read_jit(), time.monotonic()
    ops = load()
    drained = drain(before)
    if period:
        time.sleep(whole_periods(time.monotonic() - t0, period))
    b, jb, wall = cpu.read(), cpu.read_jit(), time.monotonic() - t0
    after, jit_after = cpu.rates(idle_s)
    idle = {c: (before[c] + after[c]) / 2 for c in cpu.components}
    jit_idle = {c: (jit_before[c] + jit_after[c]) / 2 for c in cpu.components}
    return Measured(
        net={c: b[c] - a[c] - idle[c] * wall for c in cpu.components},
        wall=wall,
        ops=ops,
        drained=drained,
        idle=idle,
        jit={c: jb[c] - ja[c] - jit_idle[c] * wall for c in cpu.components},
        jit_idle=jit_idle,
    )


def answer(r: requests.Response) -> dict:
    """A gateway answer's JSON; one that is not JSON names its status and first bytes."""
    try:
        return r.json()
    except ValueError as e:
        raise RuntimeError(f"{r.url} answered {r.status_code} without JSON: {r.text[:200]!r}") from e


READS = ("read_first_page", "read_first_page_by_time", "read_first_page_closed", "search")


def fill_read_id(stack: Stack, run: str, ops) -> None:
    """READ_EVENTS events of one id over the last hour (one hour bucket) in bench_ts and, when its
    read is measured, in bench_ts_by_time, stored and indexed before the reads are measured; their
    deviceType is the run id (the search's value)."""
    names = {o.name for o in ops}
    if names & {"read_first_page", "search"}:
        fill_read_namespace(stack, run, READ_NAMESPACE)
    if "read_first_page_by_time" in names:
        fill_read_namespace(stack, run, READ_NAMESPACE_BY_TIME)
    if "read_first_page_closed" in names:
        fill_closed_namespace(stack, run)


def fill_closed_namespace(stack: Stack, run: str) -> None:
    """READ_EVENTS events of one id in bench_ts_closed, each request's within its 5 s window,
    then waits until the page is final and the gateway serves it from memory."""
    gw = stack.component("gateway").url()
    value = base64.b64encode(run.encode()).decode()
    first_us = last_us = 0
    for start in range(0, READ_EVENTS, 1000):
        now_us = int(time.time() * 1e6)
        batch = [
            {
                "timeSeriesId": f"cost-read-{run}",
                "eventTime": iso(now_us - 1_000_000 + k * 100),
                "eventId": f"read-{start + k}",
                "eventItems": [{"eventItemKey": "deviceType", "eventItemValue": value}],
            }
            for k in range(1000)
        ]
        first_us = first_us or now_us - 1_000_000
        last_us = now_us - 1_000_000 + 999 * 100
        r = requests.post(
            f"{gw}/v1/timeseries/WriteEventRecordsSync",
            json={"namespace": READ_NAMESPACE_CLOSED, "events": batch},
            timeout=60,
        )
        r.raise_for_status()
    CLOSED_INTERVALS[run] = (first_us - 60_000_000, last_us + 1_000_000)
    body = read_first_page_closed(run, 0)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        hits = read_cache_hits(gw)
        got = answer(requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=body, timeout=30))
        if len(got.get("events", [])) == 100 and read_cache_hits(gw) > hits:
            return
        time.sleep(2)
    raise RuntimeError("the closed page was not served from the gateway's memory within 5 minutes")


def fill_read_namespace(stack: Stack, run: str, namespace: str) -> None:
    gw = stack.component("gateway").url()
    now_us = int(time.time() * 1e6)
    value = base64.b64encode(run.encode()).decode()
    for start in range(0, READ_EVENTS, 1000):
        batch = [
            {
                "timeSeriesId": f"cost-read-{run}",
                "eventTime": iso(now_us - 3_000_000_000 + (start + k) * 250_000),
                "eventId": f"read-{start + k}",
                "eventItems": [{"eventItemKey": "deviceType", "eventItemValue": value}],
            }
            for k in range(1000)
        ]
        r = requests.post(
            f"{gw}/v1/timeseries/WriteEventRecordsSync", json={"namespace": namespace, "events": batch}, timeout=60
        )
        r.raise_for_status()
    body = read_first_page(run, 0, namespace)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        got = answer(requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=body, timeout=30))
        hits = answer(requests.post(f"{gw}/v1/timeseries/SearchEventRecords", json=search(run, 0), timeout=30))
        if len(got.get("events", [])) == 100 and len(hits.get("events", [])) == 100:
            return
        time.sleep(1)
    raise RuntimeError(f"the read benchmark's {READ_EVENTS:,} events were not readable and searchable in 5 minutes")


#: slices shorter than this are made and dropped (with retention) often enough to show in a run
CHURN_SLICE_S = 600


def churning_namespaces(stack: Stack) -> list[str]:
    """Namespaces whose slices last under CHURN_SLICE_S (a test's left behind, say): the report
    names them, since each dropped slice table makes Cassandra flush every table (docs/performance-log.md)."""
    gw = stack.component("gateway").url()
    listed = requests.get(f"{gw}/v1/namespaces", headers=stack.s.admin_headers(), timeout=10)
    listed.raise_for_status()
    return sorted(
        n["name"]
        for n in listed.json()["namespaces"]
        if n["config"].get("time_partition", {}).get("seconds_per_slice", CHURN_SLICE_S) < CHURN_SLICE_S
    )


def warm_up(stack: Stack, exe: Path, gw: str, ops: list[Operation], cpu: StackCpu, jit_idle: float, say) -> dict:
    """Each operation, unmeasured, until the servers' JIT compilers are back near their idle rate
    under it (see warmup); the seconds each took."""
    say(
        f"warm-up: each operation in {WARMUP_S:g} s windows until the JIT compilers use at most"
        f" {JIT_SETTLED:g} cores above their idle {jit_idle:.3f} ({WARMUP_MAX_S:g} s at most), not measured ..."
    )
    warm = uuid.uuid4().hex[:8]
    if any(o.name in READS for o in ops):
        fill_read_id(stack, warm, ops)
    spent: dict[str, float] = {}
    for o in ops:

        def load(first: int, o=o) -> None:
            # each window's requests numbered on from the last (fresh idempotency tokens and event ids)
            try:
                attack_lazy(exe, gw + o.path, lambda i: o.body(warm, first + i), o.rate, WARMUP_S)
            except VegetaReportError as e:
                # the load ran, all a warm-up needs (a run at 9efc049 stopped here on 2026-11-29)
                say(f"  {o.name}: {e}; warming on")

        spent[o.name], jit = warm_until_settled(jit_window(cpu, load), o.rate, jit_idle)
        say(f"  {o.name}: {spent[o.name]:g} s, the JIT at {jit:.3f} cores in its last window")
    return spent


def bench_cost(stack: Stack, say, seconds: float = 30, idle_s: float = 0, runs: int = 3, only: str = "") -> dict:
    """`idle_s` 0: an idle window is one background period (`background_period`, 15 s here)."""
    exe = vegeta(stack)
    gw = stack.component("gateway").url()
    cpu = StackCpu(stack)
    period = background_period(stack)
    idle_s = idle_s or period
    cluster, cql = stack.component("cassandra").session()

    def background() -> int:
        return cassandra_background(cql)

    ops = [o for o in operations() if not only or o.name in only.split(",")]
    churning = churning_namespaces(stack)
    if churning:
        say(
            f"warning: {', '.join(churning)} make and drop a slice table every few minutes; each drop makes "
            "Cassandra flush every table, which lands in whichever operation it meets"
        )
    settle(say, stack=stack)
    say(f"components (cgroups under {cpu.root}): {', '.join(cpu.components)}")
    say(f"windows: whole periods of {period:g} s (the scrape and checkpoint intervals), idle windows of {idle_s:g} s")
    profiled = cpu.profiled()
    if profiled:
        say(f"warning: async-profiler was loaded into {', '.join(profiled)} since they started")
    idle0, jit0 = cpu.rates(30)
    say(f"idle stack: {sum(idle0.values()):.2f} cores ({_top(idle0)})")
    idle_total = sum(idle0.values())
    state = jobs_state_bytes(stack)
    say("the jobs' state: " + ", ".join(f"{job} {size / 1e6:.1f} MB" for job, size in sorted(state.items())))
    nul = null_request()
    result: dict = {
        "churning_namespaces": churning,
        "profiled_components": profiled,
        "jobs_state_bytes": state,
        "seconds": seconds,
        "idle_seconds": idle_s,
        "background_period_s": period,
        "runs": runs,
        "components": cpu.components,
        "idle_cores": {c: [idle0[c]] for c in cpu.components},
        "idle_jit_cores": {c: [jit0[c]] for c in cpu.components},
        "operations": {
            o.name: {"label": o.label, "rate": o.rate, "per_request": o.per_request, "runs": []} for o in ops
        },
        "floor": {"runs": []},
        "null": {"label": nul.label, "rate": nul.rate, "per_request": 1, "server": NULL_SERVER, "runs": []},
    }
    null_cgroup = cpu.cgroup(f"http-null-{NULL_SERVER}")
    null_server, null_url = start_floor(NULL_SERVER, null_cgroup, stack)
    try:
        result["warmup_seconds"] = warm_up(stack, exe, gw, ops, cpu, sum(jit0.values()), say)
        say(f"warming the null request's server up for {WARMUP_S} s ...")
        attack_lazy(exe, null_url + nul.path, lambda i: nul.body("nullwarm", i), nul.rate, WARMUP_S)
        rounds = Rounds(stack, say, exe, cpu, background, idle_total, idle_s, period, seconds)
        for k in range(runs):
            rounds.operations(k, gw, ops, result)
            result["floor"]["runs"].append(rounds.floor(k))
            result["null"]["runs"].append(rounds.null(k, nul, null_url, null_cgroup))
    finally:
        stop(null_server)
    cluster.shutdown()
    _summarise(result)
    result["plot"] = str(plot(result, PNG))
    return result


@dataclass
class Rounds:
    """A round's measurements, each from a quiet stack, each window whole background periods."""

    stack: Stack
    say: Callable[[str], None]
    exe: Path
    cpu: StackCpu
    background: Callable[[], int]
    idle_total: float
    idle_s: float
    period: float
    seconds: float

    def quiet(self) -> None:
        wait_quiet(self.stack, self.cpu, self.background, self.idle_total, self.say, timeout=120)

    def measure(self, load: Callable[[], int], drain_s: float) -> Measured:
        return measure(
            self.cpu,
            self.idle_s,
            load,
            lambda before: wait_quiet(
                self.stack, self.cpu, self.background, sum(before.values()), self.say, least_s=drain_s
            ),
            self.period,
        )

    def operations(self, k: int, gw: str, ops: list[Operation], result: dict) -> None:
        """Each operation once."""
        run = uuid.uuid4().hex[:8]
        if any(o.name in READS for o in ops):
            self.say(f"round {k + 1}: {READ_EVENTS:,} events of one id for the reads ...")
            fill_read_id(self.stack, run, ops)
        for o in ops:
            self.quiet()

            def load(o=o, run=run) -> int:
                rep = attack_lazy(self.exe, gw + o.path, lambda i: o.body(run, i), o.rate, self.seconds)
                load.report = rep
                return round(rep["requests"] * rep["success"]) * o.per_request

            for attempt in (1, 2):
                try:
                    m = self.measure(load, o.drain_s)
                    break
                except VegetaReportError as e:
                    if attempt == 2:
                        raise
                    # the load ran but its figures are lost: measured again, from a quiet stack
                    self.say(f"  round {k + 1} {o.name}: {e}; measuring it again")
                    self.quiet()
            rep = load.report
            entry = _entry(m) | _latencies(rep) | {"status_codes": rep.get("status_codes")}
            result["operations"][o.name]["runs"].append(entry)
            self.say(
                f"  round {k + 1} {o.name}: {entry['us_per_op_total']:.0f} us/op ({_top(entry['us_per_op'])}),"
                f" {m.ops:,} ops, p99 {entry['p99_ms']:.1f} ms, success {rep['success']:.4f}, drain {m.drained:.0f} s,"
                f" JIT {entry['jit_us_per_op_total']:.0f} us/op"
            )
            for c in self.cpu.components:
                result["idle_cores"][c].append(m.idle[c])
                result["idle_jit_cores"][c].append(m.jit_idle[c])

    def floor(self, k: int) -> dict:
        """Kafka's own producer at the same kind of load, its process in a cgroup of its own."""
        self.quiet()
        producer = self.cpu.cgroup("producer-performance")
        records = int(FLOOR_RATE * self.seconds)
        p0 = usage(producer)

        def floor_load() -> int:
            floor_load.line = producer_performance(
                self.stack,
                205,
                records,
                throughput=FLOOR_RATE,
                props=("linger.ms=1",),
                wrap=lambda argv: ["sh", "-c", JOIN, str(producer / "cgroup.procs"), *argv],
            )["line"]
            return records

        m = self.measure(floor_load, 2)
        entry = _entry(m)
        entry["us_per_op"]["producer-performance"] = (usage(producer) - p0) / m.ops * 1e6
        entry["us_per_op_total"] = entry["us_per_op"]["kafka"] + entry["us_per_op"]["producer-performance"]
        entry["line"] = floor_load.line
        self.say(
            f"  round {k + 1} floor: producer {entry['us_per_op']['producer-performance']:.0f} + broker"
            f" {entry['us_per_op']['kafka']:.0f} us a record"
        )
        return entry

    def null(self, k: int, nul: Operation, url: str, cgroup: Path) -> dict:
        """The null request: GetCount's bodies at its rate to a server outside the stack. The
        entry's whole is the stack's servers' rise (none of them is asked anything); the server's
        own CPU a request is beside it."""
        self.quiet()
        s0 = usage(cgroup)

        def load() -> int:
            rep = attack_lazy(self.exe, url + nul.path, lambda i: nul.body(f"null{k}", i), nul.rate, self.seconds)
            load.report = rep
            return round(rep["requests"] * rep["success"])

        m = self.measure(load, 2)
        entry = _entry(m) | _latencies(load.report)
        entry["server_us_per_op"] = (usage(cgroup) - s0) / max(m.ops, 1) * 1e6
        self.say(
            f"  round {k + 1} null request: the stack's servers {entry['us_per_op_total']:.1f} us a request"
            f" ({_top(entry['us_per_op'])}), its server {entry['server_us_per_op']:.1f}"
        )
        return entry


def _latencies(rep: dict) -> dict:
    return {
        "p50_ms": rep["latencies"]["50th"] / 1e6,
        "p99_ms": rep["latencies"]["99th"] / 1e6,
        "success": rep["success"],
    }


def _entry(m: Measured) -> dict:
    per = {c: m.net[c] / max(m.ops, 1) * 1e6 for c in m.net}
    jit = {c: m.jit[c] / max(m.ops, 1) * 1e6 for c in m.jit}
    return {
        "ops": m.ops,
        "span_s": round(m.wall, 2),
        "drain_s": round(m.drained, 2),
        "idle_cores": round(sum(m.idle.values()), 3),
        "us_per_op": per,
        "us_per_op_total": sum(per.values()),
        "jit_us_per_op": jit,
        "jit_us_per_op_total": sum(jit.values()),
    }


def _top(per: dict[str, float], n: int = 4) -> str:
    best = sorted(per.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{c} {v:.2f}" if v < 10 else f"{c} {v:.0f}" for c, v in best)


def _summarise(result: dict) -> None:
    """Median (min-max) of each operation's total and of each component's share, over the runs."""
    for entry in [*result["operations"].values(), result["floor"], *([result["null"]] if "null" in result else [])]:
        runs = entry["runs"]
        if not runs:
            continue
        entry["us_per_op_total"] = summary([r["us_per_op_total"] for r in runs])
        if "server_us_per_op" in runs[0]:
            entry["server_us_per_op"] = summary([r["server_us_per_op"] for r in runs])
        entry["us_per_op"] = {c: summary([r["us_per_op"].get(c, 0.0) for r in runs]) for c in runs[0]["us_per_op"]}
        if "jit_us_per_op" in runs[0]:
            entry["jit_us_per_op_total"] = summary([r["jit_us_per_op_total"] for r in runs])
            entry["jit_us_per_op"] = {
                c: summary([r["jit_us_per_op"].get(c, 0.0) for r in runs]) for c in runs[0]["jit_us_per_op"]
            }
        for key in ("p50_ms", "p99_ms", "success"):
            if key in runs[0]:
                entry[key] = summary([r[key] for r in runs])
    result["idle_cores"] = {c: summary(v) for c, v in result["idle_cores"].items()}
    result["idle_cores_total"] = sum(v["median"] for v in result["idle_cores"].values())
    if "idle_jit_cores" in result:
        result["idle_jit_cores"] = {c: summary(v) for c, v in result["idle_jit_cores"].items()}
        result["idle_jit_cores_total"] = sum(v["median"] for v in result["idle_jit_cores"].values())


SHOWN = ("gateway", "flink-taskmanager", "cassandra", "kafka", "elasticsearch")


def plot(result: dict, png: Path) -> Path:
    """Stacked bars: each operation's µs of CPU by component (medians), the floor beside them."""
    plt = pyplot()
    rows = [(o["label"], o) for o in result["operations"].values() if o["runs"]]
    if result["floor"]["runs"]:
        rows.append(("floor: Kafka ProducerPerformance record (producer + broker)", result["floor"]))
    if result.get("null", {}).get("runs"):
        rows.append(("null request: the stack's servers' rise, its server outside the stack", result["null"]))
    fig, ax = plt.subplots(figsize=(11, 0.55 * len(rows) + 2))
    parts = list(SHOWN) + ["producer-performance", "other"]
    left = [0.0] * len(rows)
    for i, part in enumerate(parts):
        widths = []
        for _, o in rows:
            per = {c: s["median"] for c, s in o["us_per_op"].items()}
            if part == "other":
                widths.append(max(0.0, sum(v for c, v in per.items() if c not in parts)))
            else:
                widths.append(max(0.0, per.get(part, 0.0)))
        ax.barh(range(len(rows)), widths, left=left, color=f"C{i}", label=part)
        left = [a + b for a, b in zip(left, widths)]
    for y, (_, o) in enumerate(rows):
        s = o["us_per_op_total"]
        ax.annotate(f"{s['median']:,.0f} ({s['min']:,.0f}-{s['max']:,.0f})", (left[y], y), va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [label for label, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("µs of CPU per operation (median of runs; the idle stack's CPU subtracted)")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(alpha=0.3, axis="x")
    return _save(plt, fig, f"CPU per operation by component, commit {result.get('commit', '?')[:12]}", png)


def floor_median(result: dict) -> float | None:
    """The run's floor (Kafka's own producer and broker, µs a record, median), what its figures are
    read against between hours of the box; None when the run had none."""
    floor = result.get("floor", {})
    return floor["us_per_op_total"]["median"] if floor.get("runs") else None


def table(result: dict) -> str:
    """The README's cost table, from bench/out/cost.json (generated, never typed)."""
    fmt0 = lambda s: f"{s['median']:,.0f} ({s['min']:,.0f}-{s['max']:,.0f})" if s else "-"
    head = [
        "| operation | rate | µs of CPU per operation, whole stack | gateway | TaskManager | Cassandra | Kafka "
        "| Elasticsearch | others | of the whole, JIT compiling | × the floor | p99 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    floor = result["floor"]
    floor_us = floor_median(result)
    rows = []
    for o in result["operations"].values():
        if not o["runs"]:
            continue
        per = o["us_per_op"]
        others = sum(s["median"] for c, s in per.items() if c not in SHOWN)
        unit = "events/s" if o["per_request"] > 1 else "req/s"
        rate = o["rate"] * o["per_request"]
        ratio = f"{o['us_per_op_total']['median'] / floor_us:.1f}" if floor_us else "-"
        rows.append(
            f"| {o['label']} | {rate:,} {unit} | **{fmt0(o['us_per_op_total'])}** | "
            + " | ".join(fmt0(per.get(c)) for c in SHOWN)
            + f" | {others:,.0f} | {_jit(o)} | {ratio} | {o['p99_ms']['median']:.1f} |"
        )
    if floor.get("runs"):
        per = floor["us_per_op"]
        rows.append(
            f"| floor: Kafka ProducerPerformance, 205 B records, acks=all, idempotent, linger 1 ms "
            f"| {FLOOR_RATE:,} records/s | **{fmt0(floor['us_per_op_total'])}** "
            f"(producer {fmt0(per.get('producer-performance'))}, broker {fmt0(per.get('kafka'))}) | | | | | | | | 1.0 | |"
        )
    null = result.get("null", {})
    if null.get("runs"):
        per = null["us_per_op"]
        others = sum(s["median"] for c, s in per.items() if c not in SHOWN)
        ratio = f"{null['us_per_op_total']['median'] / floor_us:.1f}" if floor_us else "-"
        rows.append(
            f"| {null['label']}: the stack's servers' rise (its server's own CPU {fmt0(null['server_us_per_op'])}) "
            f"| {null['rate']:,} req/s | **{fmt0(null['us_per_op_total'])}** | "
            + " | ".join(fmt0(per.get(c)) for c in SHOWN)
            + f" | {others:,.0f} | {_jit(null)} | {ratio} | {null['p99_ms']['median']:.1f} |"
        )
    idle = result["idle_cores"]
    busiest = sorted(idle.items(), key=lambda kv: -kv[1]["median"])[:6]
    largest = ", ".join(f"{c} {s['median']:.3f}" for c, s in busiest)
    tail = (
        f"\nThe idle stack (every server up, the jobs running, nothing asked): "
        f"**{result['idle_cores_total']:.2f} cores** (median of its {len(next(iter(idle.values()))['runs'])} idle windows per"
        f" component; largest: {largest}{_idle_jit(result)}). "
        f"{_state(result.get('jobs_state_bytes'))}"
        f"{_caveats(result)}"
        f"{_windows(result)}"
        f"Median of {result['runs']} runs (min-max), {result['seconds']:g} s of load each, measured "
        f"{result.get('measured_at', '?')} at commit `{result.get('commit', '?')}` with the whole stack running "
        "(`./tally bench cost`, `bench/out/cost.json`, plot `bench/out/cost.png`)."
    )
    return "\n".join(head + rows) + "\n" + tail


def _windows(result: dict) -> str:
    """How the windows were cut, when they were cut to the background's period."""
    period = result.get("background_period_s")
    if not period:
        return ""
    return (
        f"Each window (idle {result['idle_seconds']:g} s; a load with its drain) lasted whole periods of the stack's"
        f" background ({period:g} s: the scrape and checkpoint intervals). "
    )


def _caveats(result: dict) -> str:
    """What the run shared its stack with that a user's would not have (none in a clean run)."""
    said = ""
    if result.get("churning_namespaces"):
        said += f"Namespaces of slices under {CHURN_SLICE_S // 60} minutes were present: {', '.join(result['churning_namespaces'])}. "
    if result.get("profiled_components"):
        said += f"async-profiler had been loaded into {', '.join(result['profiled_components'])}. "
    warm = result.get("warmup_seconds")
    if warm:
        longest = max(warm.items(), key=lambda kv: kv[1])
        said += (
            f"Warm-up before the rounds, until the JIT compilers were near idle: {sum(warm.values()):,.0f} s"
            f" (longest {longest[0]} {longest[1]:,.0f} s). "
        )
    return said


def _jit(o: dict) -> str:
    """The JIT compiler threads' µs an operation (median, min-max) and its largest server; "-" in a
    report from before they were measured."""
    total = o.get("jit_us_per_op_total")
    if not total:
        return "-"
    top, share = max(o["jit_us_per_op"].items(), key=lambda kv: kv[1]["median"])
    return f"{total['median']:,.0f} ({total['min']:,.0f}-{total['max']:,.0f}), {top} {share['median']:,.0f}"


def _idle_jit(result: dict) -> str:
    """The idle stack's cores in JIT compiler threads, when the report measured them."""
    if "idle_jit_cores_total" not in result:
        return ""
    top, share = max(result["idle_jit_cores"].items(), key=lambda kv: kv[1]["median"])
    return f"; of the whole, JIT compiling {result['idle_jit_cores_total']:.3f}, most of it {top} {share['median']:.3f}"


def _state(sizes: dict | None) -> str:
    """The jobs' checkpointed state at the start, which the TaskManager's share grows with."""
    if not sizes:
        return ""
    jobs = ", ".join(f"{job} {size / 1e6:.1f} MB" for job, size in sorted(sizes.items(), key=lambda kv: -kv[1]))
    return f"The jobs' state at the start (last checkpoint): {jobs}. "


def load_report(path: Path) -> dict:
    return json.loads(path.read_text())
