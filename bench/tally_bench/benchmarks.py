"""Benchmarks against the running stack. Each reports ratios against a ceiling measured in
the same run; none fails on a number (the report is the result)."""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import requests
from tally.components.base import JAVA
from tally.model import topic
from tally.provenance import stamp
from tally.stack import Stack

from .addcount import bench_addcount
from .cost import bench_cost
from .counters import bench_counters
from .gateway import bench_gateway
from .getcount import bench_getcount
from .host import host
from .http import settle
from .lifecycle import bench_lifecycle
from .linger import bench_linger
from .reads import bench_reads
from .runq import bench_runq
from .timeseries import bench_timeseries
from .tools import OUT, bench_jar, iso, name_report, percentiles
from .transport import bench_transport


def bench_registry(stack: Stack, say) -> dict:
    r = subprocess.run(
        [
            JAVA,
            "-Xmx512m",
            "-cp",
            str(bench_jar()),
            "io.tally.bench.registry.SerdeBenchmark",
            stack.component("registry").url(),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "TALLY_ADMIN_TOKEN": stack.s.admin_token()},
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    say(r.stdout.rstrip())
    return {"report": r.stdout.splitlines()}


def bench_control(stack: Stack, say, changes: int = 100) -> dict:
    """How fast a namespace change reaches the data plane: admin PUT (Postgres commit), the
    Debezium change event on tally.control.namespaces (the ceiling: nothing downstream can apply
    a change before it is in Kafka), and the gateway applying it (its answers change)."""
    import threading

    from confluent_kafka import Consumer, TopicPartition

    gw = stack.component("gateway").url()
    bootstrap = stack.s.kafka_bootstrap()
    name = f"bench_cp_{uuid.uuid4().hex[:6]}"
    seen: dict[int, float] = {}
    stop = threading.Event()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4()}",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 5,
            "log_level": 0,
        }
    )
    high = consumer.get_watermark_offsets(TopicPartition(topic("control_namespaces"), 0), timeout=10)[1]
    consumer.assign([TopicPartition(topic("control_namespaces"), 0, high)])

    def tail():
        while not stop.is_set():
            m = consumer.poll(0.05)
            if m is None or m.error() or m.value() is None:
                continue
            event = json.loads(m.value())
            row = event.get("after") or {}
            if row.get("name") == name:
                seen.setdefault(int(row["version"]), time.monotonic())

    t = threading.Thread(target=tail, daemon=True)
    t.start()
    put_ms, kafka_ms, applied_ms = [], [], []
    try:
        # applied = the gateway's answer to a 30 s old event flips: 202 under a 60 s window, 400 under 5 s
        config = {"kind": "timeseries", "accept_limit": "5s"}
        version = 0
        session = requests.Session()
        session.headers.update(stack.s.admin_headers())

        def answer() -> int:
            when = time.time() - 30
            body = {
                "namespace": name,
                "events": [{"timeSeriesId": "bench", "eventTime": iso(int(when * 1e6)), "eventItems": []}],
            }
            return session.post(f"{gw}/v1/timeseries/WriteEventRecords", json=body, timeout=10).status_code

        for i in range(changes + 1):
            wide = i % 2 == 1
            config["accept_limit"] = "60s" if wide else "5s"
            t0 = time.monotonic()
            r = session.put(f"{gw}/v1/namespaces/{name}", json=config, headers={"If-Match": f'"{version}"'}, timeout=10)
            r.raise_for_status()
            t_put = time.monotonic()
            version = r.json()["version"]
            while answer() != (202 if wide else 400):
                pass
            t_applied = time.monotonic()
            deadline = time.monotonic() + 10
            while version not in seen and time.monotonic() < deadline:
                time.sleep(0.002)
            if i == 0:
                continue  # the create: keyspace-free, but the first poll of a new name warms caches
            put_ms.append((t_put - t0) * 1000)
            applied_ms.append((t_applied - t0) * 1000)
            if version in seen:
                kafka_ms.append((seen[version] - t0) * 1000)
    finally:
        stop.set()
        t.join(2)
        consumer.close()
        requests.delete(f"{gw}/v1/namespaces/{name}", headers=stack.s.admin_headers(), timeout=10)
    result = {
        "changes": changes,
        "admin_put": percentiles(put_ms),
        "in_kafka": percentiles(kafka_ms),
        "applied_by_gateway": percentiles(applied_ms),
    }
    result["ratio_applied_over_in_kafka_p50"] = round(
        result["applied_by_gateway"]["p50_ms"] / result["in_kafka"]["p50_ms"], 2
    )
    say(json.dumps(result, indent=2))
    return result


BENCHMARKS = {
    "cost": bench_cost,
    "addcount": bench_addcount,
    "gateway": bench_gateway,
    "getcount": bench_getcount,
    "reads": bench_reads,
    "registry": bench_registry,
    "timeseries": bench_timeseries,
    "counters": bench_counters,
    "runq": bench_runq,
    "control": bench_control,
    "lifecycle": bench_lifecycle,
    "linger": bench_linger,
    "transport": bench_transport,
}


def run(name: str, stack: Stack, say, report: str | None = None, **options) -> Path:
    """Runs a benchmark and writes its report, bench/out/<report or name>.json (its figures beside it
    as <report>.<figure>.png when the report is named apart)."""
    name_report(report if report not in (None, name) else None)
    try:
        result = BENCHMARKS[name](stack, say, **options)
    finally:
        name_report(None)
    # the probes read the box at rest, not the benchmark's drain: a thread hand-off cost 2.2-2.7 µs
    # of CPU on a quiet box and 9.7-13 µs with both cores busy (2026-12-02)
    result["host_settled_after_s"] = settle(say)
    say("the host: its CPU, kernel, a random read of memory and a thread hand-off ...")
    result["host"] = host()
    stamp(result)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{report or name}.json"
    path.write_text(json.dumps(result, indent=2))
    return path
