"""./tally bench addcount: durable AddCount under an open-loop load (vegeta), against Kafka's own
ProducerPerformance at the same rate on the same broker, measured in the same run.

The ceiling: ProducerPerformance at `rate` records/s for `seconds` (205 B records, acks=all,
idempotent, linger 1 ms), three runs. Then AddCount on ad_clicks (ACCURATE: durable, acknowledged
once Kafka has it) at each rate for `seconds`, three runs a rate: vegeta reads its targets lazily
from a generator that stamps each request's idempotency token as it is sent (the 5 s accept window
would refuse a target file made in advance). After each run, the pipeline's lag: how long until
GetCount shows a sentinel counter added last. Each figure the median of the runs with min and max;
the host's load and each component's CPU share. Before all, AddCount at half the first rate,
unmeasured, until the servers' JIT compilers settle (see warmup). No figure is asserted."""

from __future__ import annotations

import time
import uuid

import requests
from tally.stack import Stack

from .http import attack_lazy, fmt, measured, plot_latencies, runs_at_rates, settle, vegeta
from .tools import OUT, producer_performance_runs
from .warmup import WARMUP_S, warm

NAMESPACE = "ad_clicks"  # ACCURATE, 5 s accept window
PNG = OUT / "addcount.png"
LAG_WAIT_S = 60  # a pipeline lag this long is reported as this long (the job is not keeping up)


def add_count_bodies(run: str, counters: int):
    """The i-th AddCount of a run: `counters` counters in turn, its token stamped as it is sent."""

    def body(i: int) -> dict:
        t = time.time()
        return {
            "namespace": NAMESPACE,
            "counter_name": f"add-{run}-{i % counters}",
            "delta": 1,
            "idempotency_token": {
                "token": f"{run}-{i}",
                "generation_time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
                + f".{int(t * 1e6) % 1_000_000:06d}Z",
            },
        }

    return body


def add_count_run(exe, gw: str, rate: int, seconds: float, counters: int) -> dict:
    run = uuid.uuid4().hex[:6]
    report = attack_lazy(exe, f"{gw}/v1/counter/AddCount", add_count_bodies(run, counters), rate, seconds)
    # the pipeline's lag at the end: a sentinel added now, until GetCount (the job's live total) shows it
    sentinel = f"lag-{run}"
    now = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z"
    requests.post(
        f"{gw}/v1/counter/AddCount",
        json={
            "namespace": NAMESPACE,
            "counter_name": sentinel,
            "delta": 1,
            "idempotency_token": {"token": sentinel, "generation_time": now},
        },
        timeout=30,
    ).raise_for_status()
    t0 = time.monotonic()
    while time.monotonic() - t0 < LAG_WAIT_S:
        r = requests.post(
            f"{gw}/v1/counter/GetCount", json={"namespace": NAMESPACE, "counter_name": sentinel}, timeout=10
        )
        if r.status_code == 200 and r.json()["count"] == 1:
            break
        time.sleep(0.05)
    report["pipeline_lag_s"] = time.monotonic() - t0
    return report


def bench_addcount(stack: Stack, say, rates=(2000, 5000), seconds: float = 60, counters: int = 10_000) -> dict:
    exe = vegeta(stack)
    gw = stack.component("gateway").url()
    result = {"namespace": NAMESPACE, "seconds": seconds, "counters": counters, "rates": {}}
    ceiling_rate = rates[0]
    settle(say, stack=stack)
    body, warm_rate = add_count_bodies("warm" + uuid.uuid4().hex[:6], counters), ceiling_rate // 2
    result["warmup_seconds"] = warm(
        stack,
        say,
        "durable AddCount",
        lambda first: attack_lazy(exe, f"{gw}/v1/counter/AddCount", lambda i: body(first + i), warm_rate, WARMUP_S),
        warm_rate,
    )
    settle(say, stack=stack)  # the warm-up's backlog drained before the ceiling
    say(f"ceiling: Kafka ProducerPerformance at {ceiling_rate:,} records/s, acks=all, idempotent, linger 1 ms ...")
    result["ceiling_producer_performance"] = {
        "rate": ceiling_rate,
        **producer_performance_runs(
            stack, say, 3, 205, int(ceiling_rate * seconds), throughput=ceiling_rate, props=("linger.ms=1",)
        ),
    }
    result["rates"] = runs_at_rates(
        stack,
        say,
        "AddCount",
        None,
        rates,
        seconds,
        one_run=lambda rate: add_count_run(exe, gw, rate, seconds, counters),
        extras=("pipeline_lag_s",),
    )
    base = result["rates"][str(ceiling_rate)]["p99_ms"]["median"]
    result["p99_ratio_to_producer_performance"] = base / max(
        result["ceiling_producer_performance"]["p99_ms"]["median"], 0.001
    )
    result["plot"] = str(plot_latencies(result["rates"], f"AddCount (durable, {NAMESPACE}), open loop", PNG))
    return result


def table(result: dict) -> str:
    """The README's AddCount table, from bench/out/addcount.json (generated, never typed)."""
    ceiling = result["ceiling_producer_performance"]
    rows = [
        f"| durable AddCount ({result['namespace']}, ACCURATE), open loop (vegeta), {result['seconds']:g} s a run "
        "| p50 ms | p99 ms | success | answered/s | pipeline lag after, s | gateway CPU (% of a core) "
        "| TaskManager CPU | Cassandra CPU | host load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| Kafka ProducerPerformance, {ceiling['rate']:,} records/s, acks=all (the ceiling) | {fmt(ceiling['p50_ms'], 0)} "
        f"| {fmt(ceiling['p99_ms'], 0)} | | | | | | | |",
    ]
    for rate, r in sorted(result["rates"].items(), key=lambda kv: int(kv[0])):
        cpu = r["cpu_percent_of_a_core"]
        rows.append(
            f"| {int(rate):,} req/s | {fmt(r['p50_ms'])} | {fmt(r['p99_ms'])} | {fmt(r['success'], 4)} "
            f"| {fmt(r['answered_per_s'], 0)} | {fmt(r['pipeline_lag_s'])} | {fmt(cpu.get('gateway'), 0)} "
            f"| {fmt(cpu.get('flink-taskmanager'), 0)} | {fmt(cpu.get('cassandra'), 0)} | {fmt(r['load1'])} |"
        )
    rows.append(
        f"\nAddCount p99 at {ceiling['rate']:,}/s over ProducerPerformance's p99 at the same rate: "
        f"{result['p99_ratio_to_producer_performance']:.1f} (medians). Median of 3 runs (min-max), with the whole stack running, "
        + measured(result, "addcount", "plot `bench/out/addcount.png`")
        + "."
        + (
            f" AddCount was sent unmeasured first until the JIT compilers settled ({result['warmup_seconds']:g} s)."
            if "warmup_seconds" in result
            else ""
        )
    )
    return "\n".join(rows)
