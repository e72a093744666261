"""./tally bench reads: ReadEventRecords' first page of one busy id under an open-loop load (vegeta).

Produces `events` events of one id into one hour bucket of bench_ts (straight to Kafka, the
writer's input, through the benchmark tool), waits until the writer stored them all, then asks
the first page (100 events) of that id at each rate for `seconds`, three runs a rate: each
figure the median of the runs with min and max, the host's load and each component's CPU share.
Then the same for bench_ts_by_time, whose event buckets are by time (a page from the newest
partition alone, where bench_ts's four event buckets are four partition reads), and for
bench_ts_closed, whose 5 s window makes the page final 35 s after the writer stored it: the
gateway then serves it from memory (its read cache), not Cassandra. Before the first
rate of each, the same page is read at the highest rate, unmeasured, until the servers' JIT
compilers are back near their idle rate, as `bench cost` warms each operation: a stack a minute
old compiled its read path during the first runs (2026-11-30: p50 660 ms at 100 req/s in the first
run, 28 ms in the second). No figure is asserted."""

from __future__ import annotations

import json
import subprocess
import time

import requests
from tally.stack import Stack

from .http import attack, fmt, measured, plot_latencies, runs_at_rates, settle, targets, vegeta
from .tools import OUT, iso, read_cache_hits, timeseries_tool
from .warmup import WARMUP_S, warm

PNG = OUT / "reads.png"
PNG_BY_TIME = OUT / "reads_by_time.png"
PNG_CLOSED = OUT / "reads_closed.png"
NAMESPACE = "bench_ts"
NAMESPACE_BY_TIME = "bench_ts_by_time"
#: bench_ts with a 5 s accept window: its events are final (the gateway's read cache) 5 s + the
#: 30 s store grace after the writer stored them, where bench_ts's stay open for two days
NAMESPACE_CLOSED = "bench_ts_closed"


def seed(stack: Stack, say, events: int, namespace: str = NAMESPACE, spread_s: int = 600) -> tuple[str, int, int]:
    """`events` events of one new id inside the current hour (one time bucket of the namespace),
    over at most the last `spread_s`; returns the id and the span of its event times (micros)."""
    into_hour = time.time() % 3600
    if into_hour < 120:  # too early in the hour to spread them inside it: wait for a few minutes of room
        say(f"waiting {120 - into_hour:.0f} s for room inside this hour's bucket ...")
        time.sleep(120 - into_hour)
        into_hour = time.time() % 3600
    spread = int(min(spread_s, into_hour - 30))
    run = f"r{int(time.time())}"
    tool, common = timeseries_tool(stack, namespace)
    say(f"seeding {events:,} events of one id over the last {spread} s, straight to Kafka ...")
    r = subprocess.run(
        tool
        + ["produce", *common, "--events", str(events), "--ids", "1", "--spread-seconds", str(spread), "--run", run],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    produced = json.loads(r.stdout.strip().splitlines()[-1])
    now_us = int(produced["produced_at_micros"])
    return f"{run}-id-0", now_us - spread * 1_000_000, now_us


def stored(gw: str, tsid: str, start_us: int, end_us: int, namespace: str = NAMESPACE) -> int:
    """How many events of the id a full read returns."""
    query = {
        "namespace": namespace,
        "timeSeriesId": tsid,
        "pageSize": 1000,
        "totalRecordLimit": 1_000_000,
        "timeInterval": {"start": iso(start_us - 60_000_000), "end": iso(end_us + 60_000_000)},
    }
    got, token = 0, None
    while True:
        page = requests.post(
            f"{gw}/v1/timeseries/ReadEventRecords",
            json={**query, **({"pageToken": token} if token else {})},
            timeout=30,
        )
        page.raise_for_status()
        got += len(page.json()["events"])
        token = page.json().get("nextPageToken")
        if not token:
            return got


def bench_reads(stack: Stack, say, events: int = 10_000, rates=(100, 500), seconds: float = 20) -> dict:
    result = {"events": events, "seconds": seconds, "page_size": 100}
    result.update(read_at_rates(stack, say, NAMESPACE, events, rates, seconds))
    say(f"the same with the event buckets by time ({NAMESPACE_BY_TIME}) ...")
    result["by_time"] = read_at_rates(stack, say, NAMESPACE_BY_TIME, events, rates, seconds)
    say(f"the same in the closed past, served from the gateway's memory ({NAMESPACE_CLOSED}) ...")
    result["closed"] = read_at_rates(stack, say, NAMESPACE_CLOSED, events, rates, seconds, closed=True)
    title = f"ReadEventRecords, first page of 100 of an id with {events:,} events"
    result["plot"] = str(plot_latencies(result["rates"], title, PNG))
    result["by_time"]["plot"] = str(
        plot_latencies(result["by_time"]["rates"], title + ", event buckets by time", PNG_BY_TIME)
    )
    result["closed"]["plot"] = str(
        plot_latencies(result["closed"]["rates"], title + ", closed past (the gateway's memory)", PNG_CLOSED)
    )
    return result


def read_at_rates(stack: Stack, say, namespace: str, events: int, rates, seconds: float, closed: bool = False) -> dict:
    """closed: the events within the namespace's 5 s window plus the store grace of now (a 25 s
    spread), and the page's interval ending 1 s after them, so that it is final once the writer has
    stored them and the window and grace have passed; measured once the gateway serves it from memory."""
    gw = stack.component("gateway").url()
    # what earlier benchmarks left for the writer first (bench gateway leaves millions of events):
    # the seed queued behind them was not stored within the wait below
    settle(say, stack=stack)
    tsid, start_us, end_us = seed(stack, say, events, namespace, spread_s=25 if closed else 600)
    say("waiting for the writer to store them ...")
    deadline, got = time.monotonic() + 300, 0
    while time.monotonic() < deadline:
        got = stored(gw, tsid, start_us, end_us, namespace)
        if got >= events:
            break
        time.sleep(2)
    if got < events:
        raise RuntimeError(f"the writer stored {got} of {events} events in 5 minutes")
    body = {
        "namespace": namespace,
        "timeSeriesId": tsid,
        "pageSize": 100,
        "timeInterval": {
            "start": iso(start_us - 60_000_000),
            "end": iso(end_us + (1_000_000 if closed else 60_000_000)),
        },
    }
    url = f"{gw}/v1/timeseries/ReadEventRecords"
    first = requests.post(url, json=body, timeout=30).json()
    if len(first["events"]) != 100:
        raise RuntimeError(f"the first page held {len(first['events'])} events, not 100")
    if closed:
        say("waiting until the page is final and served from the gateway's memory ...")
        deadline = time.monotonic() + 240
        while True:
            hits = read_cache_hits(gw)
            again = requests.post(url, json=body, timeout=30).json()
            if read_cache_hits(gw) > hits:
                if again != first:
                    raise RuntimeError("the page served from memory differs from Cassandra's")
                break
            if time.monotonic() > deadline:
                raise RuntimeError("the page was not served from the gateway's memory within 4 minutes")
            time.sleep(2)
    lines = targets(url, [body])
    warmup_s = warm_reads(stack, say, lines, max(rates))
    measured_rates = runs_at_rates(stack, say, "ReadEventRecords", lines, rates, seconds)
    # the same page cut to one event at the highest rate: what a read costs before its first event
    # (2026-12-02 by hand: about 1,200 µs of the gateway's and Cassandra's CPU, 2-2.5 µs an event after)
    one = {**body, "pageSize": 1}
    if len(requests.post(url, json=one, timeout=30).json()["events"]) != 1:
        raise RuntimeError("a page of 1 did not hold one event")
    return {
        "namespace": namespace,
        "stored": got,
        "query": body,
        "warmup_seconds": warmup_s,
        "rates": measured_rates,
        "page_of_one": runs_at_rates(
            stack, say, "ReadEventRecords, a page of 1", targets(url, [one]), [max(rates)], seconds
        ),
    }


def cpu_us_per_read(run: dict, rate: int | str, component: str) -> float | None:
    """A component's CPU a read in µs (its idle share included), from its median % of a core at `rate`."""
    share = run.get("cpu_percent_of_a_core", {}).get(component)
    return share["median"] * 10_000 / int(rate) if share else None


def fixed_cost(layout: dict) -> str:
    """A sentence: each server's CPU a read for a page of 1 and of 100 at the same rate ("" for a
    report made before the page of 1 was measured)."""
    if "page_of_one" not in layout:
        return ""
    rate, one = next(iter(layout["page_of_one"].items()))
    full = layout["rates"].get(rate)
    if full is None:
        return ""
    parts = []
    for component, said in (("gateway", "the gateway"), ("cassandra", "Cassandra")):
        a, b = cpu_us_per_read(one, rate, component), cpu_us_per_read(full, rate, component)
        if a is not None and b is not None:
            parts.append(f"{said} {a:,.0f} µs a read for a page of 1 against {b:,.0f} for a page of 100")
    return f"at {int(rate):,} req/s, " + ", ".join(parts) if parts else ""


def warm_reads(stack: Stack, say, lines: bytes, rate: int) -> float:
    """Reads the page at `rate`, unmeasured, until the servers' JIT compilers settle (see warmup)."""
    exe = vegeta(stack)
    return warm(stack, say, "the page", lambda first: attack(exe, lines, rate, WARMUP_S), rate)


def table(result: dict) -> str:
    """The README's ReadEventRecords table, from bench/out/reads.json (generated, never typed)."""
    rows = [
        f"| ReadEventRecords, first page (100) of an id with {result['events']:,} events in one hour bucket, "
        f"open loop (vegeta), {result['seconds']:g} s a run | p50 ms | p99 ms | success | "
        "gateway CPU (% of a core) | Cassandra CPU | host busy | steal | host load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    # a report made before the second layout holds bench_ts's rates alone
    layouts = [("", result)]
    if "by_time" in result:
        layouts = [
            ("event buckets by id (bench_ts), ", result),
            (f"by time ({result['by_time']['namespace']}), ", result["by_time"]),
        ]
    if "closed" in result:
        layouts.append(
            (f"closed past, from the gateway's memory ({result['closed']['namespace']}), ", result["closed"])
        )
    for name, layout in layouts:
        ordered = [
            (f"{int(rate):,} req/s", r) for rate, r in sorted(layout["rates"].items(), key=lambda kv: int(kv[0]))
        ]
        ordered += [(f"a page of 1, {int(rate):,} req/s", r) for rate, r in layout.get("page_of_one", {}).items()]
        for label, r in ordered:
            cpu = r["cpu_percent_of_a_core"]
            rows.append(
                f"| {name}{label} | {fmt(r['p50_ms'])} | {fmt(r['p99_ms'])} | {fmt(r['success'], 4)} | "
                f"{fmt(cpu.get('gateway'), 0)} | {fmt(cpu.get('cassandra'), 0)} | "
                # the host's busy CPU and the hypervisor's steal (% of a core): reports since 2026-12-08
                f"{fmt(r.get('host_busy_percent_of_a_core'), 0)} | {fmt(r.get('steal_percent_of_a_core'), 1)} | "
                f"{fmt(r['load1'])} |"
            )
    plots = (
        "plots `bench/out/reads.png`"
        + (", `bench/out/reads_by_time.png`" if "by_time" in result else "")
        + (", `bench/out/reads_closed.png`" if "closed" in result else "")
    )
    warmed = [r.get("warmup_seconds") for r in (result, result.get("by_time", {}), result.get("closed", {}))]
    warm = (
        f" Each layout's page was read unmeasured first until the JIT compilers settled ({', '.join(f'{w:g} s' for w in warmed if w is not None)})."
        if any(w is not None for w in warmed)
        else ""
    )
    costs = [(name.rstrip(", ") or "the page", fixed_cost(layout)) for name, layout in layouts]
    fixed = [f"{name} {text}" for name, text in costs if text]
    cost = (
        " What a read costs before its first event, each server's CPU over the run a request (its idle share"
        " included): " + "; ".join(fixed) + "."
        if fixed
        else ""
    )
    rows.append(
        "\nMedian of 3 runs (min-max), with the whole stack running, "
        + measured(result, "reads", plots)
        + "."
        + warm
        + cost
    )
    return "\n".join(rows)
