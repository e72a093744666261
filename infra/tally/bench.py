"""Benchmarks against the running stack. Each reports ratios against a ceiling measured in
the same run; none fails on a number (the report is the result)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from .components.base import JAVA
from .components.gateway import gateway_jar
from .components.registry import registry_jar
from .process import ProcessRef
from .settings import REPO
from .stack import Stack

OUT = REPO / "bench" / "out"


def cpu_seconds(ref: ProcessRef) -> float:
    fields = Path(f"/proc/{ref.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(ref: ProcessRef) -> float:
    for line in Path(f"/proc/{ref.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measured(ref: ProcessRef, cmd: list[str]) -> tuple[str, float, float]:
    """Runs cmd; returns its stdout, the watched process's CPU% (of one core) and wall time."""
    c0, t0 = cpu_seconds(ref), time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd[3:5]} failed: {r.stderr[-2000:]}")
    wall = time.monotonic() - t0
    return r.stdout, 100 * (cpu_seconds(ref) - c0) / wall, wall


def producer_performance(stack: Stack, record_size: int, records: int) -> dict:
    kafka = stack.component("kafka")
    cmd = [JAVA, "-Xmx512m", "-cp", f"{kafka.lib}/*", "org.apache.kafka.tools.ProducerPerformance",
           "--topic", "bench.ceiling", "--num-records", str(records), "--record-size", str(record_size),
           "--throughput", "-1", "--producer-props", f"bootstrap.servers={kafka.bootstrap}", "acks=all",
           "enable.idempotence=true", "compression.type=lz4", "linger.ms=5", "batch.size=131072"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    last = [l for l in r.stdout.splitlines() if "records sent" in l][-1]
    m = re.search(r"([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency.*?(\d+) ms 50th.*?(\d+) ms 99th", last)
    return {"records_per_s": float(m.group(1)), "mb_per_s": float(m.group(2)), "avg_ms": float(m.group(3)),
            "p50_ms": float(m.group(4)), "p99_ms": float(m.group(5)), "line": last}


def bench_gateway(stack: Stack, say) -> dict:
    gw = stack.component("gateway")
    ref = stack.state.ref("gateway")
    port = str(gw.ports()["http"])
    gen = [JAVA, "-Xmx512m", "-cp", str(gateway_jar()), "io.tally.gateway.bench.GatewayLoadGenerator"]
    say("ceiling: Kafka ProducerPerformance, 205 B records, acks=all, idempotent, lz4, linger 5 ms ...")
    ceiling = producer_performance(stack, 205, 1_000_000)
    say(f"  {ceiling['line']}")
    say("gateway: WriteEventRecordsSync, 100 events of ~205 B per request, 16 in flight, 5 s warm-up + 20 s ...")
    out, cpu_batch, _ = measured(ref, gen + ["batch", "--port", port, "--seconds", "20", "--concurrency", "16",
                                             "--events", "100", "--value-bytes", "150"])
    batch = json.loads(out.strip().splitlines()[-1])
    say(f"  {batch}")
    say("gateway: AddCount (EVENTUAL, durable) at a fixed 5,000 requests/s, 5 s warm-up + 15 s ...")
    out, cpu_rate, _ = measured(ref, gen + ["rate", "--port", port, "--seconds", "15", "--rps", "5000"])
    rate = json.loads(out.strip().splitlines()[-1])
    say(f"  {rate}")
    return {"ceiling_producer_performance": ceiling, "batch_sync": batch,
            "ratio_events_per_s_to_ceiling": round(batch["events_per_s"] / ceiling["records_per_s"], 3),
            "add_count_fixed_rate": rate, "gateway_cpu_percent_batch": round(cpu_batch),
            "gateway_cpu_percent_rate": round(cpu_rate), "gateway_rss_mb": round(rss_mb(ref))}


def bench_registry(stack: Stack, say) -> dict:
    r = subprocess.run([JAVA, "-Xmx512m", "-cp", str(registry_jar()), "io.tally.registry.bench.SerdeBenchmark",
                        stack.component("registry").url()], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    say(r.stdout.rstrip())
    return {"report": r.stdout.splitlines()}


BENCHMARKS = {"gateway": bench_gateway, "registry": bench_registry}


def run(name: str, stack: Stack, say) -> Path:
    result = BENCHMARKS[name](stack, say)
    result["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(result, indent=2))
    return path
