"""./tally bench getcount: GetCount latency under an open-loop load (vegeta), over many counters.

Seeds `counters` EVENTUAL counters (one AddCount each, sent by vegeta in chunks fresh enough for
the 5 s accept window), waits for their rollups, then attacks GetCount over all of them at each
rate for `seconds`, three runs a rate; reports each figure as the median of the runs with min and
max, the host's load and each component's CPU share during the runs. No figure is asserted."""

from __future__ import annotations

import subprocess
import time
import uuid

import requests

from .bench import OUT
from .bench_http import attack, fmt, plot_latencies, runs_at_rates, targets, vegeta
from .stack import Stack

PNG = OUT / "getcount.png"


def heap_used_mb(pid: int) -> float:
    """The gateway's used heap after a full GC (jcmd), in MB."""
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, check=True)
    out = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, check=True).stdout
    import re

    m = re.search(r"total (\d+)K, used (\d+)K", out)
    if not m:
        raise RuntimeError(f"no heap figures in jcmd GC.heap_info: {out[:500]}")
    return int(m.group(2)) / 1024


def view_metric(gw: str, name: str) -> float:
    for line in requests.get(f"{gw}/metrics", timeout=10).text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def view_memory(stack: Stack, say, counters: int = 100_000) -> dict:
    """Bytes a counter costs in the gateway's view: used heap after a full GC, before and after
    the view took `counters` rollups produced straight to tally.counter.rollups."""
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from .model import topic

    gw = stack.component("gateway").url()
    pid = stack.state.ref("gateway").pid
    rollups = topic("counter_rollups")
    client = SchemaRegistryClient({"url": stack.component("registry").url()})
    schema = client.get_latest_version(f"{rollups}-value").schema.schema_str
    ser = AvroSerializer(client, schema, conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext(rollups, MessageField.VALUE)
    held = view_metric(gw, "tally_gateway_counter_view_counters")
    before = heap_used_mb(pid)
    producer = Producer({"bootstrap.servers": f"{stack.s.host}:{stack.s.port('TALLY_KAFKA_PORT')}", "linger.ms": 20})
    run = uuid.uuid4().hex[:6]
    now_us = int(time.time() * 1e6)
    say(f"view memory: {counters} rollups straight to {rollups} ...")
    for i in range(counters):
        name = f"mem-{run}-{i}"
        value = {
            "namespace": "bench_view",
            "counter": name,
            "count": i,
            "rollup_time": now_us,
            "last_write_time": now_us,
        }
        producer.produce(rollups, key=f"bench_view/{name}", value=ser(value, ctx))
        if i % 10_000 == 0:
            producer.poll(0)
    producer.flush(60)
    deadline = time.monotonic() + 120
    while view_metric(gw, "tally_gateway_counter_view_counters") < held + counters and time.monotonic() < deadline:
        time.sleep(1)
    now_held = view_metric(gw, "tally_gateway_counter_view_counters")
    after = heap_used_mb(pid)
    added = now_held - held
    per = (after - before) * 1024 * 1024 / added if added > 0 else None
    for i in range(counters):  # tombstones: the view drops them and compaction removes them
        producer.produce(rollups, key=f"bench_view/mem-{run}-{i}", value=None)
        if i % 10_000 == 0:
            producer.poll(0)
    producer.flush(60)
    say(
        f"  view holds {now_held:.0f} counters (+{added:.0f}); heap {before:.0f} -> {after:.0f} MB: {per:.0f} bytes a counter"
    )
    return {"counters_added": added, "heap_before_mb": before, "heap_after_mb": after, "bytes_per_counter": per}


def bench_getcount(stack: Stack, say, counters: int = 20_000, rates=(500, 2000), seconds: float = 30) -> dict:
    exe = vegeta(stack)
    gw = stack.component("gateway").url()
    run = uuid.uuid4().hex[:6]
    names = [f"bench-{run}-{i}" for i in range(counters)]
    say(f"seeding {counters} EVENTUAL counters (video_views) with vegeta ...")
    chunk = 1000  # a second's worth at 1,000/s: each chunk's generation_time stays inside the 5 s window
    for i in range(0, counters, chunk):
        now = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z"
        bodies = [
            {
                "namespace": "video_views",
                "counter_name": n,
                "delta": 1,
                "idempotency_token": {"token": n, "generation_time": now},
            }
            for n in names[i : i + chunk]
        ]
        rep = attack(exe, targets(f"{gw}/v1/counter/AddCount", bodies), 1000, len(bodies) / 1000)
        if rep.get("success", 0) < 0.99:
            raise RuntimeError(f"seeding failed: {rep.get('status_codes')} {rep.get('errors', [])[:3]}")
    say("waiting for the rollups ...")
    deadline = time.monotonic() + 120
    for n in (names[0], names[-1], names[len(names) // 2]):
        while time.monotonic() < deadline:
            r = requests.post(
                f"{gw}/v1/counter/GetCount", json={"namespace": "video_views", "counter_name": n}, timeout=10
            )
            if r.status_code == 200 and r.json()["count"] == 1:
                break
            time.sleep(0.5)
    get_lines = targets(f"{gw}/v1/counter/GetCount", [{"namespace": "video_views", "counter_name": n} for n in names])
    result = {"counters": counters, "seconds": seconds, "view_memory": view_memory(stack, say)}
    result["rates"] = runs_at_rates(stack, say, "GetCount", get_lines, rates, seconds)
    result["plot"] = str(plot_latencies(result["rates"], f"GetCount, EVENTUAL, {counters:,} counters", PNG))
    return result


def table(result: dict) -> str:
    """The README's GetCount table, from bench/out/getcount.json (generated, never typed)."""
    rows = [
        "| GetCount, EVENTUAL, open loop (vegeta), "
        + f"{result['counters']:,} counters, {result['seconds']:g} s a run | p50 ms | p99 ms | success | "
        + "gateway CPU (% of a core) | host load (1 min) |",
        "|---|---|---|---|---|---|",
    ]

    for rate, r in sorted(result["rates"].items(), key=lambda kv: int(kv[0])):
        gateway = r["cpu_percent_of_a_core"].get("gateway")
        rows.append(
            f"| {int(rate):,} req/s | {fmt(r['p50_ms'])} | {fmt(r['p99_ms'])} | {fmt(r['success'], 4)} | "
            f"{fmt(gateway, 0)} | {fmt(r['load1'])} |"
        )
    mem = result.get("view_memory")
    if mem and mem.get("bytes_per_counter"):
        rows.append(
            f"\nCounter view memory: {mem['bytes_per_counter']:.0f} bytes a counter (used heap after a full GC,"
            f" {mem['heap_before_mb']:.0f} -> {mem['heap_after_mb']:.0f} MB for {mem['counters_added']:,.0f} counters), so"
            f" about {mem['bytes_per_counter'] * 1e6 / 2**20:.0f} MB per million counters."
        )
    rows.append(
        f"\nMedian of 3 runs (min-max), measured {result.get('measured_at', '?')} with the whole stack running "
        "(`./tally bench getcount`, `bench/out/getcount.json`)."
    )
    return "\n".join(rows)
