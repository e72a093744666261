"""./tally bench addcount: durable AddCount under an open-loop load (vegeta), against Kafka's own
ProducerPerformance at the same rate on the same broker, measured in the same run.

The ceiling: ProducerPerformance at `rate` records/s for `seconds` (205 B records, acks=all,
idempotent, linger 1 ms), three runs. Then AddCount on ad_clicks (ACCURATE: durable, acknowledged
once Kafka has it) at each rate for `seconds`, three runs a rate: vegeta reads its targets lazily
from a generator that stamps each request's idempotency token as it is sent (the 5 s accept window
would refuse a target file made in advance). After each run, the pipeline's lag: how long until
GetCount shows a sentinel counter added last. Each figure the median of the runs with min and max;
the host's load and each component's CPU share. No figure is asserted."""

from __future__ import annotations

import os
import re
import subprocess
import time
import uuid

import requests

from .bench import JAVA, OUT
from .bench_http import attack_lazy, component_cpu, fmt, plot_latencies, settle, summary, vegeta
from .stack import Stack

NAMESPACE = "ad_clicks"  # ACCURATE, 5 s accept window
PNG = OUT / "addcount.png"


def producer_performance(stack: Stack, rate: int, seconds: float) -> dict:
    """Kafka's ProducerPerformance at a fixed rate: its p50/p99 (ms) from its final line."""
    kafka = stack.component("kafka")
    r = subprocess.run(
        [
            JAVA,
            "-Xmx256m",
            "-cp",
            f"{kafka.lib}/*",
            "org.apache.kafka.tools.ProducerPerformance",
            "--topic",
            "bench.ceiling",
            "--num-records",
            str(int(rate * seconds)),
            "--record-size",
            "205",
            "--throughput",
            str(rate),
            "--producer-props",
            f"bootstrap.servers={kafka.bootstrap}",
            "acks=all",
            "enable.idempotence=true",
            "linger.ms=1",
        ],
        capture_output=True,
        text=True,
    )
    last = [line for line in r.stdout.splitlines() if "records sent" in line][-1]
    m = re.search(r"([\d.]+) records/sec.*?(\d+) ms 50th.*?(\d+) ms 99th", last)
    return {"records_per_s": float(m.group(1)), "p50_ms": float(m.group(2)), "p99_ms": float(m.group(3)), "line": last}


def add_count_run(exe, gw: str, rate: int, seconds: float, counters: int) -> dict:
    run = uuid.uuid4().hex[:6]

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

    report = attack_lazy(exe, f"{gw}/v1/counter/AddCount", body, rate, seconds)
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
    while time.monotonic() - t0 < 120:
        r = requests.post(
            f"{gw}/v1/counter/GetCount", json={"namespace": NAMESPACE, "counter_name": sentinel}, timeout=10
        )
        if r.status_code == 200 and r.json()["count"] == 1:
            break
        time.sleep(0.05)
    report["pipeline_lag_s"] = time.monotonic() - t0
    return report


def bench_addcount(stack: Stack, say, rates=(2000, 3500, 5000), seconds: float = 60, counters: int = 10_000) -> dict:
    exe = vegeta(stack)
    gw = stack.component("gateway").url()
    result = {"namespace": NAMESPACE, "seconds": seconds, "counters": counters, "rates": {}}
    ceiling_rate = rates[0]
    settle(say)
    say(f"ceiling: Kafka ProducerPerformance at {ceiling_rate:,} records/s, acks=all, idempotent, linger 1 ms ...")
    ceilings = []
    for k in range(3):
        c = producer_performance(stack, ceiling_rate, seconds)
        say(f"  run {k + 1}: {c['line']}")
        ceilings.append(c)
    result["ceiling_producer_performance"] = {
        "rate": ceiling_rate,
        "p50_ms": summary([c["p50_ms"] for c in ceilings]),
        "p99_ms": summary([c["p99_ms"] for c in ceilings]),
        "lines": [c["line"] for c in ceilings],
    }
    for rate in rates:
        settled = settle(say)
        p50, p99, ok, lag, cpu, loads, series, achieved = [], [], [], [], {}, [], [], []
        for k in range(3):
            c0, t0 = component_cpu(stack), time.monotonic()
            rep = add_count_run(exe, gw, rate, seconds, counters)
            wall = time.monotonic() - t0
            c1 = component_cpu(stack)
            for name in c1:
                cpu.setdefault(name, []).append(100 * (c1[name] - c0.get(name, c1[name])) / wall)
            loads.append(os.getloadavg()[0])
            lat = rep["latencies"]
            p50.append(lat["50th"] / 1e6)
            p99.append(lat["99th"] / 1e6)
            ok.append(rep["success"])
            lag.append(rep["pipeline_lag_s"])
            achieved.append(rep.get("throughput", 0.0))
            series = rep["per_second"]
            say(
                f"  AddCount {rate}/s run {k + 1}: p50 {lat['50th'] / 1e6:.2f} ms, p99 {lat['99th'] / 1e6:.2f} ms,"
                f" success {rep['success']:.4f}, codes {rep.get('status_codes')}, pipeline lag {rep['pipeline_lag_s']:.2f} s"
            )
        result["rates"][str(rate)] = {
            "p50_ms": summary(p50),
            "p99_ms": summary(p99),
            "success": summary(ok),
            "answered_per_s": summary(achieved),
            "pipeline_lag_s": summary(lag),
            "load1": summary(loads),
            "cpu_percent_of_a_core": {name: summary(v) for name, v in cpu.items()},
            "last_run_per_second": series,
            "settled_after_s": settled,
        }
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
        f"{result['p99_ratio_to_producer_performance']:.1f} (medians). Median of 3 runs (min-max), measured "
        f"{result.get('measured_at', '?')} with the whole stack running (`./tally bench addcount`, "
        "`bench/out/addcount.json`, plot `bench/out/addcount.png`)."
    )
    return "\n".join(rows)
