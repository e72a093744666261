"""./tally bench getcount: GetCount latency under an open-loop load (vegeta), over many counters.

For EVENTUAL (video_views) and ACCURATE (ad_clicks): seeds `counters` counters (one AddCount
each, sent by vegeta in chunks fresh enough for the 5 s accept window), waits until GetCount
shows them, reads them unmeasured until the servers' JIT compilers settle (see warmup), then
attacks GetCount over all of them at each rate for `seconds`, three runs a rate;
reports each figure as the median of the runs with min and max, the host's load and each
component's CPU share during the runs. Then ACCURATE freshness (AddCount acknowledged -> GetCount
shows it) and the view's memory a counter. No figure is asserted."""

from __future__ import annotations

import subprocess
import time
import uuid

import requests
from tally.stack import Stack

from .http import attack, fmt, measured, plot_latencies, runs_at_rates, settle, targets, vegeta
from .tools import OUT
from .warmup import WARMUP_S, warm


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
    from tally.model import topic

    gw = stack.component("gateway").url()
    pid = stack.state.ref("gateway").pid
    rollups = topic("counter_rollups")
    client = SchemaRegistryClient({"url": stack.component("registry").url()})
    schema = client.get_latest_version(f"{rollups}-value").schema.schema_str
    ser = AvroSerializer(client, schema, conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext(rollups, MessageField.VALUE)
    held = view_metric(gw, "tally_gateway_counter_view_counters")
    before = heap_used_mb(pid)
    producer = Producer({"bootstrap.servers": stack.s.kafka_bootstrap(), "linger.ms": 20})
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
    # a view at its bound replaces counters instead of adding them: then there is nothing to divide by
    per = (after - before) * 1024 * 1024 / added if added >= counters / 2 else None
    for i in range(counters):  # tombstones: the view drops them and compaction removes them
        producer.produce(rollups, key=f"bench_view/mem-{run}-{i}", value=None)
        if i % 10_000 == 0:
            producer.poll(0)
    producer.flush(60)
    say(
        f"  view holds {now_held:.0f} counters (+{added:.0f}); heap {before:.0f} -> {after:.0f} MB: "
        + (f"{per:.0f} bytes a counter" if per else "not measured (the view is at its bound)")
    )
    return {"counters_added": added, "heap_before_mb": before, "heap_after_mb": after, "bytes_per_counter": per}


# fewer new counters than this in the view-memory step: the view was full, the figure means nothing
VIEW_MEMORY_MIN_ADDED = 50_000

NAMESPACES = {"EVENTUAL": "video_views", "ACCURATE": "ad_clicks"}  # both with a 5 s accept window


def seed(exe, gw: str, say, ns: str, names: list[str]) -> None:
    """One AddCount a counter, sent by vegeta at 1,000/s, then waits until GetCount shows them."""
    say(f"seeding {len(names):,} counters of {ns} with vegeta ...")
    chunk = 1000  # a second's worth at 1,000/s: each chunk's generation_time stays inside the 5 s window
    for i in range(0, len(names), chunk):
        now = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z"
        bodies = [
            {
                "namespace": ns,
                "counter_name": n,
                "delta": 1,
                "idempotency_token": {"token": n, "generation_time": now},
            }
            for n in names[i : i + chunk]
        ]
        rep = attack(exe, targets(f"{gw}/v1/counter/AddCount", bodies), 1000, len(bodies) / 1000)
        if rep.get("success", 0) < 0.99:
            raise RuntimeError(f"seeding failed: {rep.get('status_codes')} {rep.get('errors', [])[:3]}")
    deadline = time.monotonic() + 120
    for n in (names[0], names[-1], names[len(names) // 2]):
        while time.monotonic() < deadline:
            r = requests.post(f"{gw}/v1/counter/GetCount", json={"namespace": ns, "counter_name": n}, timeout=10)
            if r.status_code == 200 and r.json()["count"] == 1:
                break
            time.sleep(0.5)


def freshness(gw: str, say, samples: int = 100) -> dict:
    """ACCURATE freshness: AddCount acknowledged (durable) -> the first GetCount that shows it, in ms."""
    ns = NAMESPACES["ACCURATE"]
    http = requests.Session()
    counter = f"fresh-{uuid.uuid4().hex[:6]}"
    lags = []
    for i in range(samples):
        now = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z"
        r = http.post(
            f"{gw}/v1/counter/AddCount",
            json={
                "namespace": ns,
                "counter_name": counter,
                "delta": 1,
                "idempotency_token": {"token": f"{counter}-{i}", "generation_time": now},
            },
            timeout=10,
        )
        r.raise_for_status()
        acked = time.perf_counter()
        while time.perf_counter() - acked < 10:
            got = http.post(f"{gw}/v1/counter/GetCount", json={"namespace": ns, "counter_name": counter}, timeout=10)
            if got.status_code == 200 and got.json()["count"] >= i + 1:
                break
            time.sleep(0.005)
        lags.append((time.perf_counter() - acked) * 1000)
        time.sleep(0.05)
    lags.sort()
    out = {
        "samples": samples,
        "p50_ms": lags[len(lags) // 2],
        "p99_ms": lags[min(len(lags) - 1, int(0.99 * len(lags)))],
        "max_ms": lags[-1],
    }
    say(f"  ACCURATE freshness: {out}")
    return out


def bench_getcount(stack: Stack, say, counters: int = 100_000, rates=(500, 2000), seconds: float = 30) -> dict:
    exe = vegeta(stack)
    gw = stack.component("gateway").url()
    run = uuid.uuid4().hex[:6]
    result = {"counters": counters, "seconds": seconds, "types": {}}
    for kind, ns in NAMESPACES.items():
        names = [f"bench-{run}-{i}" for i in range(counters)]
        seed(exe, gw, say, ns, names)
        lines = targets(f"{gw}/v1/counter/GetCount", [{"namespace": ns, "counter_name": n} for n in names])
        settle(say, stack=stack)  # the seeds' backlog drained before the warm-up
        warmed = warm(stack, say, f"GetCount {kind}", lambda first: attack(exe, lines, rates[0], WARMUP_S), rates[0])
        rates_out = runs_at_rates(stack, say, f"GetCount {kind}", lines, rates, seconds)
        png = OUT / f"getcount-{kind.lower()}.png"
        plot_latencies(rates_out, f"GetCount, {kind} ({ns}), {counters:,} counters", png)
        result["types"][kind] = {"namespace": ns, "rates": rates_out, "plot": str(png), "warmup_seconds": warmed}
    settle(say, stack=stack)  # freshness of a quiet pipeline, not of the seeds' backlog
    result["accurate_freshness"] = freshness(gw, say)
    result["view_memory"] = view_memory(stack, say)
    return result


def table(result: dict) -> str:
    """The README's GetCount table, from bench/out/getcount.json (generated, never typed)."""
    rows = [
        f"| GetCount, open loop (vegeta), {result['counters']:,} counters, {result['seconds']:g} s a run "
        "| p50 ms | p99 ms | success | gateway CPU (% of a core) | host load (1 min) |",
        "|---|---|---|---|---|---|",
    ]
    types = result.get("types") or {"EVENTUAL": {"rates": result["rates"]}}  # reports before ACCURATE was measured
    for kind, t in types.items():
        for rate, r in sorted(t["rates"].items(), key=lambda kv: int(kv[0])):
            gateway = r["cpu_percent_of_a_core"].get("gateway")
            rows.append(
                f"| {kind}, {int(rate):,} req/s | {fmt(r['p50_ms'])} | {fmt(r['p99_ms'])} | {fmt(r['success'], 4)} | "
                f"{fmt(gateway, 0)} | {fmt(r['load1'])} |"
            )
    fresh = result.get("accurate_freshness")
    if fresh:
        rows.append(
            f"\nACCURATE freshness (AddCount acknowledged -> GetCount shows it, {fresh['samples']} samples, one at a"
            f" time): p50 {fresh['p50_ms']:.0f} ms, p99 {fresh['p99_ms']:.0f} ms, max {fresh['max_ms']:.0f} ms."
        )
    mem = result.get("view_memory")
    if mem and mem.get("counters_added", 0) < VIEW_MEMORY_MIN_ADDED:
        rows.append(
            f"\nCounter view memory: not measured in this run (the view took {mem.get('counters_added', 0):,.0f} new"
            " counters: it was at its bound, so new counters replaced others)."
        )
    elif mem and mem.get("bytes_per_counter"):
        rows.append(
            f"\nCounter view memory: {mem['bytes_per_counter']:.0f} bytes a counter (used heap after a full GC,"
            f" {mem['heap_before_mb']:.0f} -> {mem['heap_after_mb']:.0f} MB for {mem['counters_added']:,.0f} counters), so"
            f" about {mem['bytes_per_counter'] * 1e6 / 2**20:.0f} MB per million counters."
        )
    rows.append(
        "\nMedian of 3 runs (min-max), with the whole stack running, "
        + measured(result, "getcount", "plots `bench/out/getcount-*.png`")
        + "."
        + (
            " Each type's counters were read unmeasured first until the JIT compilers settled ("
            + ", ".join(f"{kind} {t['warmup_seconds']:g} s" for kind, t in types.items() if "warmup_seconds" in t)
            + ")."
            if any("warmup_seconds" in t for t in types.values())
            else ""
        )
    )
    return "\n".join(rows)
