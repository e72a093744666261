"""`./tally bench counters`: the counter rollup job's events/s per TaskManager core (EVENTUAL with
its event log, and BEST_EFFORT) beside Kafka's ConsumerPerformance, the CPU each server spends an
event, and how soon GetCount shows an acknowledged AddCount."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import requests
from tally.model import topic
from tally.stack import Stack

from .http import fmt, measured, plot_runs, settle, summary
from .tools import (
    OUT,
    REACHED,
    Standing,
    consumer_performance,
    counter_tool,
    cpu_seconds,
    iso,
    operator_records_in,
    percentiles,
)

#: records beyond the standing load (heartbeats) that mark the benchmark's first
FIRST_EVENTS = 200


def bench_counters(stack: Stack, say, events: int = 300_000) -> dict:
    """Rollup job events/s per TaskManager core (EVENTUAL with its event log, and BEST_EFFORT)
    beside ConsumerPerformance; AddCount-to-GetCount freshness; GetCount latency at 2,000/s."""
    from concurrent.futures import ThreadPoolExecutor

    from tally.jobs import Jobs

    if not Jobs(stack.s, log=lambda *_: None).running("tally-counter-rollup"):
        raise RuntimeError("tally-counter-rollup is not running: ./tally up deploys it")
    run = f"c{int(time.time())}"
    gw = stack.component("gateway").url()
    tm = stack.component("flink-taskmanager")
    metrics_url = f"http://127.0.0.1:{tm.ports()['metrics']}/metrics"
    refs = {c: stack.state.ref(c) for c in ("flink-taskmanager", "cassandra")}
    tool = counter_tool(stack)

    def produce(ns, n, counters, tag):
        r = subprocess.run(
            tool + ["produce", "--namespace", ns, "--events", str(n), "--counters", str(counters), "--run", tag],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise RuntimeError(r.stderr[-2000:])
        return json.loads(r.stdout.strip().splitlines()[-1])

    def drain(ns, operator, label):
        taken = Standing(lambda: operator_records_in(metrics_url, operator), operator).wait(say)
        say(f"{label}: {events:,} AddCount events over 100,000 counters of {ns}, straight to Kafka ...")
        producer = subprocess.Popen(
            tool
            + ["produce", "--namespace", ns, "--events", str(events), "--counters", "100000", "--run", f"{run}-{ns}"],
            stdout=subprocess.PIPE,
            text=True,
        )
        t_first = t_done = cpu0 = None
        deadline = time.monotonic() + 900
        while t_done is None and time.monotonic() < deadline:
            now, seen = time.monotonic(), taken.added()
            if t_first is None and seen > FIRST_EVENTS:
                t_first, cpu0 = now, {c: cpu_seconds(r) for c, r in refs.items()}
            if taken.reached(events):
                t_done, cpu1 = now, {c: cpu_seconds(r) for c, r in refs.items()}
            time.sleep(0.2)
        produced = json.loads(producer.communicate(timeout=300)[0].strip().splitlines()[-1])
        if t_done is None:
            raise RuntimeError(f"{operator} took in {taken.added():.0f} of {events} in 15 minutes")
        wall = t_done - t_first
        cores = {c: round((cpu1[c] - cpu0[c]) / wall, 2) for c in refs}
        out = {
            "events": events,
            "producer": produced,
            "seconds": round(wall, 2),
            "events_per_s": round(REACHED * events / wall),
            "cores": cores,
            "events_per_s_per_tm_core": round(REACHED * events / wall / max(cores["flink-taskmanager"], 0.01)),
            "standing_per_s": round(taken.rate),
        }
        say(f"  {out}")
        return out

    def three(ns, operator, label):
        """Three drains: each figure the median with min and max, and every run kept."""
        runs = [drain(ns, operator, f"{label}, run {i + 1} of 3") for i in range(3)]
        out = {"runs": runs}
        for key in ("events_per_s", "events_per_s_per_tm_core"):
            out[key] = summary([r[key] for r in runs])
        out["tm_cores"] = summary([r["cores"]["flink-taskmanager"] for r in runs])
        out["cassandra_cores"] = summary([r["cores"]["cassandra"] for r in runs])
        return out

    settle(say, stack=stack)  # what earlier benchmarks left for the rollup job (bench addcount: over a million)
    durable = three("video_views", "counter_rollup", "rollup job (EVENTUAL: dedup, event log, rollups)")
    best = three("page_hits", "best_effort_aggregate", "rollup job (BEST_EFFORT: aggregation only)")
    say(f"ceiling: Kafka ConsumerPerformance, {events:,} records of tally.counter.events ...")
    consumer = consumer_performance(stack, topic("counter_events"), events, f"bench-{run}")
    say(f"  {consumer}")

    say("freshness: AddCount acknowledged -> GetCount shows it, 40 new counters per type, 10 at a time ...")

    def probe(ns, i):
        counter = f"{run}-fresh-{ns}-{i}"
        body = {
            "namespace": ns,
            "counter_name": counter,
            "delta": 1,
            "idempotency_token": {"token": f"{run}-{i}", "generation_time": iso(int(time.time() * 1e6))},
        }
        requests.post(f"{gw}/v1/counter/AddCount", json=body, timeout=30).raise_for_status()
        acked = time.perf_counter()
        while time.perf_counter() - acked < 60:
            got = requests.post(
                f"{gw}/v1/counter/GetCount", json={"namespace": ns, "counter_name": counter}, timeout=30
            )
            if got.json().get("count") == 1:
                return (time.perf_counter() - acked) * 1000
            time.sleep(0.01)
        return 60_000.0

    freshness = {}
    with ThreadPoolExecutor(10) as pool:
        for ns, kind in (("ad_clicks", "ACCURATE"), ("video_views", "EVENTUAL")):
            freshness[kind] = percentiles(list(pool.map(lambda i: probe(ns, i), range(40))))
    say(f"  {freshness}")

    consumer_per_s = float(consumer["nMsg.sec"])
    result = {
        "rollup_eventual": durable,
        "rollup_best_effort": best,
        "ceiling_consumer_performance": consumer,
        "ratio_rollup_eventual_to_consumer_performance": round(durable["events_per_s"]["median"] / consumer_per_s, 3),
        "ratio_rollup_best_effort_to_consumer_performance": round(best["events_per_s"]["median"] / consumer_per_s, 3),
        "freshness_ack_to_get_count": freshness,
    }
    result["plot"] = str(plot_counters(result))
    return result


def plot_counters(result: dict) -> Path:
    """bench/out/counters.png: the rollup job's runs per type beside ConsumerPerformance."""
    return plot_runs(
        {
            "EVENTUAL events/s": result["rollup_eventual"]["events_per_s"]["runs"],
            "EVENTUAL events/s per TM core": result["rollup_eventual"]["events_per_s_per_tm_core"]["runs"],
            "BEST_EFFORT events/s": result["rollup_best_effort"]["events_per_s"]["runs"],
        },
        {"ConsumerPerformance records/s": float(result["ceiling_consumer_performance"]["nMsg.sec"])},
        "CounterRollupJob: 300,000 AddCounts over 100,000 counters, three runs",
        "events/s (log scale)",
        OUT / "counters.png",
    )


def table(result: dict) -> str:
    """docs/benchmarks.md's Counters table, from bench/out/counters.json (generated, never typed)."""

    def cpu(kind: dict, server: str) -> str:
        runs = kind["runs"]
        return fmt(summary([round(r["cores"][server] * 1e6 / r["events_per_s"], 1) for r in runs]), 1)

    eventual, best = result["rollup_eventual"], result["rollup_best_effort"]
    fresh = result["freshness_ack_to_get_count"]
    rows = [
        "| what | events/s | TaskManager cores | events/s per TaskManager core | CPU an event (µs): TaskManager, "
        "Cassandra | goal |",
        "|---|---|---|---|---|---|",
    ]
    for label, kind, goal in (
        ("rollup job, EVENTUAL (dedup, event log in Cassandra, rollups)", eventual, "20,000 a TaskManager core"),
        ("rollup job, BEST_EFFORT (aggregation only)", best, ""),
    ):
        rows.append(
            f"| {label} | {fmt(kind['events_per_s'], 0)} | {fmt(kind['tm_cores'])} "
            f"| **{fmt(kind['events_per_s_per_tm_core'], 0)}** "
            f"| {cpu(kind, 'flink-taskmanager')}, {cpu(kind, 'cassandra')} | {goal} |"
        )
    consumer = float(result["ceiling_consumer_performance"]["nMsg.sec"])
    rows += [
        f"| ceiling: `ConsumerPerformance` on `tally.counter.events`; ratio EVENTUAL / it | {consumer:,.0f} "
        f"| | {result['ratio_rollup_eventual_to_consumer_performance']:.3f} | | |",
        "| freshness, AddCount acknowledged to GetCount showing it (40 new counters each): ACCURATE; EVENTUAL "
        f"| p50 {fresh['ACCURATE']['p50_ms']:,.0f} ms, p99 {fresh['ACCURATE']['p99_ms']:,.0f} ms; "
        f"p50 {fresh['EVENTUAL']['p50_ms']:,.0f} ms, p99 {fresh['EVENTUAL']['p99_ms']:,.0f} ms | | | | |",
        "",
        "Median of 3 runs (min-max), with the whole stack running on the same 2 cores; "
        + measured(result, "counters", "plot `bench/out/counters.png`")
        + ".",
    ]
    return "\n".join(rows)
