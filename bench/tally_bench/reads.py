"""./tally bench reads: ReadEventRecords' first page of one busy id under an open-loop load (vegeta).

Produces `events` events of one id into one hour bucket of bench_ts (straight to Kafka, the
writer's input, through the benchmark tool), waits until the writer stored them all, then asks
the first page (100 events) of that id at each rate for `seconds`, three runs a rate: each
figure the median of the runs with min and max, the host's load and each component's CPU share.
No figure is asserted."""

from __future__ import annotations

import json
import subprocess
import time

import requests
from tally.stack import Stack

from .http import fmt, measured, plot_latencies, runs_at_rates, targets
from .tools import OUT, iso, timeseries_tool

PNG = OUT / "reads.png"
NAMESPACE = "bench_ts"


def seed(stack: Stack, say, events: int) -> tuple[str, int, int]:
    """`events` events of one new id inside the current hour (one time bucket of bench_ts);
    returns the id and the span of its event times (micros)."""
    into_hour = time.time() % 3600
    if into_hour < 120:  # too early in the hour to spread them inside it: wait for a few minutes of room
        say(f"waiting {120 - into_hour:.0f} s for room inside this hour's bucket ...")
        time.sleep(120 - into_hour)
        into_hour = time.time() % 3600
    spread = int(min(600, into_hour - 30))
    run = f"r{int(time.time())}"
    tool, common = timeseries_tool(stack, NAMESPACE)
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


def stored(gw: str, tsid: str, start_us: int, end_us: int) -> int:
    """How many events of the id a full read returns."""
    query = {
        "namespace": NAMESPACE,
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
    gw = stack.component("gateway").url()
    tsid, start_us, end_us = seed(stack, say, events)
    say("waiting for the writer to store them ...")
    deadline, got = time.monotonic() + 300, 0
    while time.monotonic() < deadline:
        got = stored(gw, tsid, start_us, end_us)
        if got >= events:
            break
        time.sleep(2)
    if got < events:
        raise RuntimeError(f"the writer stored {got} of {events} events in 5 minutes")
    body = {
        "namespace": NAMESPACE,
        "timeSeriesId": tsid,
        "pageSize": 100,
        "timeInterval": {"start": iso(start_us - 60_000_000), "end": iso(end_us + 60_000_000)},
    }
    first = requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=body, timeout=30).json()
    if len(first["events"]) != 100:
        raise RuntimeError(f"the first page held {len(first['events'])} events, not 100")
    lines = targets(f"{gw}/v1/timeseries/ReadEventRecords", [body])
    result = {"events": events, "seconds": seconds, "page_size": 100, "stored": got, "query": body}
    result["rates"] = runs_at_rates(stack, say, "ReadEventRecords", lines, rates, seconds)
    result["plot"] = str(
        plot_latencies(result["rates"], f"ReadEventRecords, first page of 100 of an id with {events:,} events", PNG)
    )
    return result


def table(result: dict) -> str:
    """The README's ReadEventRecords table, from bench/out/reads.json (generated, never typed)."""
    rows = [
        f"| ReadEventRecords, first page (100) of an id with {result['events']:,} events in one hour bucket, "
        f"open loop (vegeta), {result['seconds']:g} s a run | p50 ms | p99 ms | success | "
        "gateway CPU (% of a core) | Cassandra CPU | host load (1 min) |",
        "|---|---|---|---|---|---|---|",
    ]
    for rate, r in sorted(result["rates"].items(), key=lambda kv: int(kv[0])):
        cpu = r["cpu_percent_of_a_core"]
        rows.append(
            f"| {int(rate):,} req/s | {fmt(r['p50_ms'])} | {fmt(r['p99_ms'])} | {fmt(r['success'], 4)} | "
            f"{fmt(cpu.get('gateway'), 0)} | {fmt(cpu.get('cassandra'), 0)} | {fmt(r['load1'])} |"
        )
    rows.append(
        "\nMedian of 3 runs (min-max), with the whole stack running, "
        + measured(result, "reads", "plot `bench/out/reads.png`")
        + "."
    )
    return "\n".join(rows)
