"""Benchmarks against the running stack. Each reports ratios against a ceiling measured in
the same run; none fails on a number (the report is the result)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import requests

from .addcount import bench_addcount
from .cost import bench_cost
from .gateway import bench_gateway
from .getcount import bench_getcount
from .lifecycle import bench_lifecycle
from .http import plot_runs, summary
from .reads import bench_reads
from .runq import bench_runq
from .tools import OUT, bench_jar, commit, cpu_seconds, iso, percentiles, timeseries_tool
from tally.components.base import JAVA
from tally.model import topic
from tally.stack import Stack


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


class WriterProbe:
    """Reads the writer's progress where it is current: the TaskManager's Prometheus reporter
    (the REST metrics lag by the fetcher interval) and Elasticsearch's document count."""

    def __init__(self, stack: Stack, namespace: str):
        tm = stack.component("flink-taskmanager")
        self.metrics_url = f"http://127.0.0.1:{tm.ports()['metrics']}/metrics"
        self.es = stack.component("elasticsearch").url()
        self.alias = f"tally-{namespace}"

    def cassandra_rows(self) -> float:
        return operator_records_in(self.metrics_url, "cassandra_rows:_Writer")

    def documents(self) -> int:
        r = requests.get(f"{self.es}/{self.alias}/_count", timeout=10)
        return r.json()["count"] if r.status_code == 200 else 0

    def wait_idle(self, say) -> float:
        last = self.cassandra_rows()
        for _ in range(300):
            time.sleep(2)
            now = self.cassandra_rows()
            if now == last:
                return now
            last = now
        raise RuntimeError("the writer did not go idle in 10 minutes (a backlog in tally.timeseries.events?)")


def bench_timeseries(stack: Stack, say, events: int = 200_000) -> dict:
    """Writer and indexer throughput per TaskManager core against ConsumerPerformance and raw
    async Cassandra inserts of the same rows; ReadEventRecords latency; store-to-visible lag."""
    from tally.jobs import Jobs

    if not Jobs(stack.s, log=lambda *_: None).running("tally-timeseries-writer"):
        raise RuntimeError("tally-timeseries-writer is not running: ./tally up deploys it")
    ns, run = "bench_ts", f"b{int(time.time())}"
    gw = stack.component("gateway").url()
    tool, common = timeseries_tool(stack, ns)
    probe = WriterProbe(stack, ns)
    refs = {c: stack.state.ref(c) for c in ("flink-taskmanager", "cassandra", "elasticsearch")}
    if (
        requests.post(
            f"{gw}/v1/timeseries/ReadEventRecords",
            json={"namespace": ns, "timeSeriesId": "x", "timeInterval": {"start": iso(0), "end": iso(1_000_000)}},
            timeout=10,
        ).status_code
        == 404
    ):
        raise RuntimeError(f"the gateway does not know namespace {ns}: restart it (./tally down; ./tally up)")

    def store(tag):
        """One writer run: events produced straight to Kafka, timed from the first row stored to the last."""
        say("waiting for the writer to be idle ...")
        rows0, docs0 = probe.wait_idle(say), probe.documents()
        say(f"writer: {events:,} events (2 items each, 150 B payload) over 1,000 ids, produced straight to Kafka ...")
        producer = subprocess.Popen(
            tool
            + ["produce", *common, "--events", str(events), "--ids", "1000", "--spread-seconds", "600", "--run", tag],
            stdout=subprocess.PIPE,
            text=True,
        )
        cpu0 = t_first = t_rows = t_docs = None
        deadline = time.monotonic() + 900
        while (t_rows is None or t_docs is None) and time.monotonic() < deadline:
            now, rows = time.monotonic(), probe.cassandra_rows()
            if t_first is None and rows > rows0:
                t_first, cpu0 = now, {c: cpu_seconds(r) for c, r in refs.items()}
            if t_rows is None and rows >= rows0 + 2 * events:
                t_rows, cpu_rows = now, {c: cpu_seconds(r) for c, r in refs.items()}
            if t_docs is None and t_first is not None and probe.documents() >= docs0 + events:
                t_docs, cpu_docs = now, {c: cpu_seconds(r) for c, r in refs.items()}
            time.sleep(0.2)
        produced = json.loads(producer.communicate(timeout=300)[0].strip().splitlines()[-1])
        if t_rows is None or t_docs is None:
            raise RuntimeError(
                f"the writer stored {probe.cassandra_rows() - rows0:.0f} of {2 * events} rows and "
                f"indexed {probe.documents() - docs0} of {events} documents in 15 minutes"
            )
        store_s, index_s = t_rows - t_first, t_docs - t_first
        cores = lambda cpu1, wall: {c: round((cpu1[c] - cpu0[c]) / wall, 2) for c in refs}
        writer = {
            "events": events,
            "rows": 2 * events,
            "producer": produced,
            "store_seconds": round(store_s, 2),
            "stored_events_per_s": round(events / store_s),
            "index_seconds": round(index_s, 2),
            "indexed_events_per_s": round(events / index_s),
            "cores_while_storing": cores(cpu_rows, store_s),
            "cores_while_indexing": cores(cpu_docs, index_s),
        }
        tm_store = writer["cores_while_storing"]["flink-taskmanager"]
        writer["stored_events_per_s_per_tm_core"] = round(writer["stored_events_per_s"] / max(tm_store, 0.01))
        writer["indexed_events_per_s_per_tm_core"] = round(
            writer["indexed_events_per_s"] / max(writer["cores_while_indexing"]["flink-taskmanager"], 0.01)
        )
        say(f"  {writer}")
        return writer

    def raw_inserts(tag):
        """The ceiling: the same rows as raw async single-row Cassandra inserts, in the same run."""
        say(f"ceiling: the same {2 * events:,} rows as raw async Cassandra inserts, 128 in flight ...")
        c0 = {c: cpu_seconds(r) for c, r in refs.items()}
        t0 = time.monotonic()
        r = subprocess.run(
            tool
            + [
                "cassandra-ceiling",
                *common,
                "--events",
                str(events),
                "--ids",
                "1000",
                "--spread-seconds",
                "600",
                "--run",
                tag,
            ],
            capture_output=True,
            text=True,
            env={**os.environ, **stack.s.cassandra_client_env()},
        )
        if r.returncode != 0:
            raise RuntimeError(r.stderr[-2000:])
        raw = json.loads(r.stdout.strip().splitlines()[-1])
        raw["cassandra_cores"] = round((cpu_seconds(refs["cassandra"]) - c0["cassandra"]) / (time.monotonic() - t0), 2)
        say(f"  {raw}")
        return raw

    writers, raws = [], []
    for i in range(3):  # each pair measured back to back: the ratio is of one moment of the host
        say(f"run {i + 1} of 3")
        writers.append(store(f"{run}-{i}"))
        raws.append(raw_inserts(f"{run}-{i}"))  # the same rows again, as single inserts
    ratios = summary([round(w["stored_events_per_s"] / r["events_per_s"], 3) for w, r in zip(writers, raws)])

    say(f"ceiling: Kafka ConsumerPerformance, {events:,} records of tally.timeseries.events ...")
    consumer = consumer_performance(stack, topic("timeseries_events"), events, f"bench-{run}")
    say(f"  {consumer}")
    consumer_per_s = float(consumer["nMsg.sec"])

    say("ReadEventRecords: 10,000 events of one id spread over the last day ...")
    one = f"{run}-day"
    before = probe.cassandra_rows()
    r = subprocess.run(
        tool + ["produce", *common, "--events", "10000", "--ids", "1", "--spread-seconds", "86400", "--run", one],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    deadline = time.monotonic() + 300
    while probe.cassandra_rows() < before + 20_000 and time.monotonic() < deadline:
        time.sleep(0.5)
    now_us = int(time.time() * 1e6)
    query = {
        "namespace": ns,
        "timeSeriesId": f"{one}-id-0",
        "totalRecordLimit": 1_000_000,
        "timeInterval": {"start": iso(now_us - 86_400_000_000 - 60_000_000), "end": iso(now_us + 60_000_000)},
    }
    http = requests.Session()

    def read(body):
        t = time.perf_counter()
        resp = http.post(f"{gw}/v1/timeseries/ReadEventRecords", json=body, timeout=30)
        resp.raise_for_status()
        return resp.json(), (time.perf_counter() - t) * 1000

    def read_all(page_size):
        got, token, t = 0, None, time.perf_counter()
        while True:
            page, _ = read({**query, "pageSize": page_size, **({"pageToken": token} if token else {})})
            got += len(page["events"])
            token = page.get("nextPageToken")
            if not token:
                return got, (time.perf_counter() - t) * 1000

    total, _ = read_all(1000)
    for _ in range(20):
        read({**query, "pageSize": 100})
    first_page = percentiles([read({**query, "pageSize": 100})[1] for _ in range(300)])
    full = [read_all(1000) for _ in range(20)]
    reads = {
        "events_in_window": total,
        "first_page_of_100": first_page,
        "all_10k_in_pages_of_1000": percentiles([ms for _, ms in full]),
    }
    say(f"  {reads}")

    say("store-to-visible lag: WriteEventRecordsSync acknowledged -> ReadEventRecords / SearchEventRecords show it ...")
    lag_read, lag_search = [], []
    for i in range(40):
        tsid, kind = f"{run}-lag-{i}", f"lag-{run}-{i}"
        t_us = int(time.time() * 1e6)
        body = {
            "namespace": ns,
            "events": [
                {
                    "timeSeriesId": tsid,
                    "eventTime": iso(t_us),
                    "eventId": f"lag{i}",
                    "eventItems": [
                        {"eventItemKey": "deviceType", "eventItemValue": base64.b64encode(kind.encode()).decode()}
                    ],
                }
            ],
        }
        http.post(f"{gw}/v1/timeseries/WriteEventRecordsSync", json=body, timeout=30).raise_for_status()
        acked = time.perf_counter()
        q = {
            "namespace": ns,
            "timeSeriesId": tsid,
            "timeInterval": {"start": iso(t_us - 60_000_000), "end": iso(t_us + 60_000_000)},
        }
        search = {
            "namespace": ns,
            "timeInterval": q["timeInterval"],
            "searchQuery": {
                "equals": {"eventItemKey": "deviceType", "eventItemValue": base64.b64encode(kind.encode()).decode()}
            },
        }
        seen_read = seen_search = None
        while (seen_read is None or seen_search is None) and time.perf_counter() - acked < 30:
            if seen_read is None and read(q)[0]["events"]:
                seen_read = (time.perf_counter() - acked) * 1000
            if seen_search is None:
                found = http.post(f"{gw}/v1/timeseries/SearchEventRecords", json=search, timeout=30)
                found.raise_for_status()
                if found.json()["events"]:
                    seen_search = (time.perf_counter() - acked) * 1000
            time.sleep(0.01)
        lag_read.append(seen_read if seen_read is not None else 30_000.0)
        lag_search.append(seen_search if seen_search is not None else 30_000.0)
    lag = {"read_cassandra": percentiles(lag_read), "search_elasticsearch": percentiles(lag_search)}
    say(f"  {lag}")
    result = {
        "writer_runs": writers,
        "stored_events_per_s": summary([w["stored_events_per_s"] for w in writers]),
        "stored_events_per_s_per_tm_core": summary([w["stored_events_per_s_per_tm_core"] for w in writers]),
        "ceiling_consumer_performance": consumer,
        "ceiling_cassandra_raw_insert_runs": raws,
        "ratio_stored_events_per_s_to_consumer_performance": round(
            summary([w["stored_events_per_s"] for w in writers])["median"] / consumer_per_s, 3
        ),
        "ratio_stored_events_per_s_to_raw_cassandra": ratios,
        "ratio_indexed_events_per_s_to_consumer_performance": round(
            summary([w["indexed_events_per_s"] for w in writers])["median"] / consumer_per_s, 3
        ),
        "read_event_records": reads,
        "store_to_visible_lag": lag,
    }
    result["plot"] = str(plot_timeseries(result))
    return result


def plot_timeseries(result: dict) -> Path:
    """bench/out/timeseries.png: the writer's runs beside raw inserts of the same rows, and ConsumerPerformance."""
    return plot_runs(
        {
            "writer events/s": [w["stored_events_per_s"] for w in result["writer_runs"]],
            "raw single-row inserts, same rows, events/s": [
                r["events_per_s"] for r in result["ceiling_cassandra_raw_insert_runs"]
            ],
        },
        {"ConsumerPerformance records/s": float(result["ceiling_consumer_performance"]["nMsg.sec"])},
        "TimeSeriesWriterJob: 200,000 events of 2 items, three runs (each beside raw inserts)",
        "events/s (log scale)",
        OUT / "timeseries.png",
    )


def operator_records_in(metrics_url: str, operator: str) -> float:
    """numRecordsIn of an operator, live from the TaskManager's Prometheus reporter."""
    text = requests.get(metrics_url, timeout=10).text
    return sum(
        float(l.rsplit(" ", 1)[1])
        for l in text.splitlines()
        if l.startswith("flink_taskmanager_job_task_operator_numRecordsIn{") and f'operator_name="{operator}"' in l
    )


def consumer_performance(stack: Stack, topic: str, messages: int, group: str) -> dict:
    kafka = stack.component("kafka")
    r = subprocess.run(
        [
            JAVA,
            "-Xmx512m",
            "-cp",
            f"{kafka.lib}/*",
            "org.apache.kafka.tools.ConsumerPerformance",
            "--bootstrap-server",
            kafka.bootstrap,
            "--topic",
            topic,
            "--messages",
            str(messages),
            "--group",
            group,
            "--timeout",
            "60000",
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    header, line = [l for l in r.stdout.splitlines() if l.strip()][-2:]
    return dict(zip([h.strip() for h in header.split(",")], [v.strip() for v in line.split(",")]))


def bench_counters(stack: Stack, say, events: int = 300_000) -> dict:
    """Rollup job events/s per TaskManager core (EVENTUAL with its event log, and BEST_EFFORT)
    beside ConsumerPerformance; AddCount-to-GetCount freshness; GetCount latency at 2,000/s."""
    from concurrent.futures import ThreadPoolExecutor

    from tally.jobs import Jobs

    if not Jobs(stack.s, log=lambda *_: None).running("tally-counter-rollup"):
        raise RuntimeError("tally-counter-rollup is not running: ./tally up deploys it")
    run = f"c{int(time.time())}"
    gw = stack.component("gateway").url()
    kafka = stack.component("kafka")
    tm = stack.component("flink-taskmanager")
    metrics_url = f"http://127.0.0.1:{tm.ports()['metrics']}/metrics"
    refs = {c: stack.state.ref(c) for c in ("flink-taskmanager", "cassandra")}
    tool = [
        JAVA,
        "-Xmx512m",
        "-cp",
        str(bench_jar()),
        "io.tally.bench.jobs.CounterBenchmark",
        "--bootstrap",
        kafka.bootstrap,
        "--registry",
        stack.component("registry").url(),
    ]

    def produce(ns, n, counters, tag):
        r = subprocess.run(
            tool + ["produce", "--namespace", ns, "--events", str(n), "--counters", str(counters), "--run", tag],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise RuntimeError(r.stderr[-2000:])
        return json.loads(r.stdout.strip().splitlines()[-1])

    def wait_idle(operator):
        last = operator_records_in(metrics_url, operator)
        for _ in range(300):
            time.sleep(2)
            now = operator_records_in(metrics_url, operator)
            if now == last:
                return now
            last = now
        raise RuntimeError(f"{operator} did not go idle in 10 minutes")

    def drain(ns, operator, label):
        base = wait_idle(operator)
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
            now, seen = time.monotonic(), operator_records_in(metrics_url, operator)
            if t_first is None and seen > base:
                t_first, cpu0 = now, {c: cpu_seconds(r) for c, r in refs.items()}
            if seen >= base + events:
                t_done, cpu1 = now, {c: cpu_seconds(r) for c, r in refs.items()}
            time.sleep(0.2)
        produced = json.loads(producer.communicate(timeout=300)[0].strip().splitlines()[-1])
        if t_done is None:
            raise RuntimeError(
                f"{operator} took in {operator_records_in(metrics_url, operator) - base:.0f} of {events} in 15 minutes"
            )
        wall = t_done - t_first
        cores = {c: round((cpu1[c] - cpu0[c]) / wall, 2) for c in refs}
        out = {
            "events": events,
            "producer": produced,
            "seconds": round(wall, 2),
            "events_per_s": round(events / wall),
            "cores": cores,
            "events_per_s_per_tm_core": round(events / wall / max(cores["flink-taskmanager"], 0.01)),
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


def bench_control(stack: Stack, say, changes: int = 100) -> dict:
    """How fast a namespace change reaches the data plane: admin PUT (Postgres commit), the
    Debezium change event on tally.control.namespaces (the ceiling: nothing downstream can apply
    a change before it is in Kafka), and the gateway applying it (its answers change)."""
    import threading

    import requests
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
}


def run(name: str, stack: Stack, say, **options) -> Path:
    result = BENCHMARKS[name](stack, say, **options)
    result["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result["commit"] = commit()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(result, indent=2))
    return path
