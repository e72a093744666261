"""./tally bench gateway: WriteEventRecordsSync events/s over Kafka's own ProducerPerformance on the
same broker, in the same run, with the whole stack and the jobs running. No figure is asserted."""

from __future__ import annotations

import base64
import time
import uuid

from tally.stack import Stack

from .http import attack, fmt, measured, settle, summary, targets, vegeta
from .tools import cpu_seconds, iso, producer_performance_runs, rss_mb


def bench_gateway(stack: Stack, say, seconds: float = 20) -> dict:
    """WriteEventRecordsSync events/s over Kafka's ProducerPerformance on the same broker, jobs running:
    vegeta at no fixed rate with 16 requests in flight (a throughput test), 100 events of ~205 B a
    request into bench_ts (its 2-day accept window lets the bodies be made in advance)."""
    exe = vegeta(stack)
    gw = stack.component("gateway").url()
    ref = stack.state.ref("gateway")
    settle(say, stack=stack)  # a ceiling taken while the jobs digest an earlier benchmark is not one
    # three runs, as the gateway's: the ratio followed one run's spread (performance log, "What
    # bounds the gateway's WriteEventRecordsSync rate")
    say("ceiling: Kafka ProducerPerformance, 205 B records, acks=all, idempotent, lz4, linger 5 ms, 3 runs ...")
    ceiling = producer_performance_runs(stack, say, 3, 205, 1_000_000)
    run, now_us = uuid.uuid4().hex[:6], int(time.time() * 1e6)
    payload = base64.b64encode(bytes(150)).decode()
    bodies = [
        {
            "namespace": "bench_ts",
            "events": [
                {
                    "timeSeriesId": f"gw-{run}-{(r * 100 + e) % 1000}",
                    "eventTime": iso(now_us - (r * 100 + e)),
                    "eventId": f"{run}-{r}-{e}",
                    "eventItems": [
                        {"eventItemKey": "deviceType", "eventItemValue": base64.b64encode(b"tv").decode()},
                        {"eventItemKey": "payload", "eventItemValue": payload},
                    ],
                }
                for e in range(100)
            ],
        }
        for r in range(1000)
    ]
    lines = targets(f"{gw}/v1/timeseries/WriteEventRecordsSync", bodies)
    # unmeasured: a gateway `up` has just restarted compiles this path in its first run (65,000-80,000
    # events/s at 80-90% of a core against 100,000-120,000 at 55% in the runs after)
    say(f"warm-up, not measured: {seconds / 2:g} s of the same load ...")
    attack(exe, lines, 0, seconds / 2, max_workers=16)
    say(f"gateway: WriteEventRecordsSync, 100 events a request, 16 in flight (vegeta), {seconds:g} s, 3 runs ...")
    runs = []
    for k in range(3):
        c0, t0 = cpu_seconds(ref), time.monotonic()
        rep = attack(exe, lines, 0, seconds, max_workers=16)
        cpu = 100 * (cpu_seconds(ref) - c0) / (time.monotonic() - t0)
        ok = rep.get("status_codes", {}).get("200", 0)
        runs.append({"events_per_s": ok * 100 / seconds, "p99_ms": rep["latencies"]["99th"] / 1e6, "gateway_cpu": cpu})
        say(f"  run {k + 1}: {runs[-1]}, codes {rep.get('status_codes')}")
    events = summary([r["events_per_s"] for r in runs])
    return {
        "seconds": seconds,
        "ceiling_producer_performance": ceiling,
        "batch_sync_runs": runs,
        "events_per_s": events,
        "p99_ms": summary([r["p99_ms"] for r in runs]),
        "gateway_cpu_percent_of_a_core": summary([r["gateway_cpu"] for r in runs]),
        "ratio_events_per_s_to_ceiling": round(events["median"] / ceiling["records_per_s"]["median"], 3),
        "gateway_rss_mb": round(rss_mb(ref)),
    }


def table(result: dict) -> str:
    """The README's gateway table, from bench/out/gateway.json (generated, never typed)."""
    c = result["ceiling_producer_performance"]
    return "\n".join(
        [
            "| what | events/s | p99 ms | gateway CPU (% of a core) |",
            "|---|---|---|---|",
            f"| ceiling: Kafka ProducerPerformance, 205 B records, acks=all, idempotent, lz4, linger 5 ms "
            f"| {fmt(c['records_per_s'], 0)} | {fmt(c['p99_ms'], 0)} | |",
            f"| WriteEventRecordsSync, 100 events of ~205 B a request, 16 in flight (vegeta), {result['seconds']:g} s a run "
            f"| {fmt(result['events_per_s'], 0)} | {fmt(result['p99_ms'], 1)} "
            f"| {fmt(result['gateway_cpu_percent_of_a_core'], 0)} |",
            "",
            f"Ratio to the ceiling: **{result['ratio_events_per_s_to_ceiling']}** (median events/s over"
            " ProducerPerformance's median). Median of 3 runs each (min-max), the gateway's after an unmeasured"
            " warm-up, with the whole stack and the jobs running, " + measured(result, "gateway") + ".",
        ]
    )
