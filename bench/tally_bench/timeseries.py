"""`./tally bench timeseries`: the TimeSeries writer's and indexer's events/s beside raw async
Cassandra inserts of the same rows and Kafka's ConsumerPerformance, the CPU each server spends an
event, ReadEventRecords latency and the store-to-visible lag."""

from __future__ import annotations

import base64
import json
import os
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
    cpu_seconds,
    iso,
    operator_records_in,
    percentiles,
    timeseries_tool,
)


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


#: rows beyond the standing load that mark the benchmark's first (a margin over its bursts)
FIRST_ROWS = 2_000


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

    # the gateway's benchmark leaves millions of events for the writer: drain them first, or the
    # idle probe below times out (it did, after bench gateway)
    settle(say, stack=stack)

    def store(tag):
        """One writer run: events produced straight to Kafka, timed from the first row stored to the last."""
        say("waiting for the writer to be down to its standing load ...")
        rows = Standing(probe.cassandra_rows, "the writer's rows").wait(say)
        docs = Standing(probe.documents, "documents").wait(say)
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
            now, added = time.monotonic(), rows.added()
            if t_first is None and added > FIRST_ROWS:
                t_first, cpu0 = now, {c: cpu_seconds(r) for c, r in refs.items()}
            if t_rows is None and rows.reached(2 * events):
                t_rows, cpu_rows = now, {c: cpu_seconds(r) for c, r in refs.items()}
            if t_docs is None and t_first is not None and docs.reached(events):
                t_docs, cpu_docs = now, {c: cpu_seconds(r) for c, r in refs.items()}
            time.sleep(0.2)
        produced = json.loads(producer.communicate(timeout=300)[0].strip().splitlines()[-1])
        if t_rows is None or t_docs is None:
            raise RuntimeError(
                f"the writer stored {rows.added():.0f} of {2 * events} rows and "
                f"indexed {docs.added():.0f} of {events} documents in 15 minutes"
            )
        store_s, index_s = t_rows - t_first, t_docs - t_first
        cores = lambda cpu1, wall: {c: round((cpu1[c] - cpu0[c]) / wall, 2) for c in refs}
        writer = {
            "events": events,
            "rows": 2 * events,
            "producer": produced,
            "store_seconds": round(store_s, 2),
            "stored_events_per_s": round(REACHED * events / store_s),
            "index_seconds": round(index_s, 2),
            "indexed_events_per_s": round(REACHED * events / index_s),
            "cores_while_storing": cores(cpu_rows, store_s),
            "cores_while_indexing": cores(cpu_docs, index_s),
            "standing_rows_per_s": round(rows.rate),
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


def us_per_event(runs: list[dict], cores_key: str, rate_key: str) -> dict:
    """Each server's CPU an event (µs), per run and summarised: its cores over the events/s."""
    servers = runs[0][cores_key]
    return {c: summary([round(r[cores_key][c] * 1e6 / r[rate_key], 1) for r in runs]) for c in servers}


def table(result: dict) -> str:
    """docs/benchmarks.md's TimeSeries table, from bench/out/timeseries.json (generated, never typed)."""
    writers, raws = result["writer_runs"], result["ceiling_cassandra_raw_insert_runs"]
    store_cpu = us_per_event(writers, "cores_while_storing", "stored_events_per_s")
    index_cpu = us_per_event(writers, "cores_while_indexing", "indexed_events_per_s")
    cores = {c: summary([w["cores_while_storing"][c] for w in writers]) for c in store_cpu}
    raw_rate = summary([r["events_per_s"] for r in raws])
    raw_cpu = summary([round(r["cassandra_cores"] * 1e6 / r["events_per_s"], 1) for r in raws])
    consumer = float(result["ceiling_consumer_performance"]["nMsg.sec"])
    reads, lag = result["read_event_records"], result["store_to_visible_lag"]
    ms = lambda p: f"p50 {p['p50_ms']:.1f} ms, p99 {p['p99_ms']:.1f} ms"
    return "\n".join(
        [
            "| what | result |",
            "|---|---|",
            f"| writer: events stored in Cassandra per second | {fmt(result['stored_events_per_s'], 0)} |",
            "| indexer: events searchable in Elasticsearch per second "
            f"| {fmt(summary([w['indexed_events_per_s'] for w in writers]), 0)} |",
            "| cores while storing: TaskManager, Cassandra, Elasticsearch | "
            + ", ".join(fmt(cores[c]) for c in ("flink-taskmanager", "cassandra", "elasticsearch"))
            + " |",
            "| CPU an event stored (µs): TaskManager, Cassandra, Elasticsearch | "
            + ", ".join(fmt(store_cpu[c], 1) for c in ("flink-taskmanager", "cassandra", "elasticsearch"))
            + " |",
            "| CPU an event searchable (µs, from the first row to the last document): TaskManager, "
            "Cassandra, Elasticsearch | "
            + ", ".join(fmt(index_cpu[c], 1) for c in ("flink-taskmanager", "cassandra", "elasticsearch"))
            + " |",
            f"| writer events/s per TaskManager core | {fmt(result['stored_events_per_s_per_tm_core'], 0)} |",
            "| ceiling: raw async Cassandra inserts of the same rows (128 in flight); Cassandra CPU an event "
            f"| {fmt(raw_rate, 0)} events/s; {fmt(raw_cpu, 1)} µs |",
            "| ratio writer / raw Cassandra inserts (goal 1.5) "
            f"| **{fmt(result['ratio_stored_events_per_s_to_raw_cassandra'])}** |",
            "| ceiling: `ConsumerPerformance` on `tally.timeseries.events`; ratio writer / it "
            f"| {consumer:,.0f} records/s; {result['ratio_stored_events_per_s_to_consumer_performance']:.3f} |",
            f"| ReadEventRecords, one id, {reads['events_in_window']:,} events over the last day: first page of 100 "
            f"| {ms(reads['first_page_of_100'])} |",
            f"| the same, all {reads['events_in_window']:,} in pages of 1,000 | {ms(reads['all_10k_in_pages_of_1000'])} |",
            f"| store-to-visible lag after WriteEventRecordsSync: ReadEventRecords | {ms(lag['read_cassandra'])} |",
            f"| the same, SearchEventRecords (index refresh 1 s) | {ms(lag['search_elasticsearch'])} |",
            "",
            "Median of 3 runs (min-max) where three were made, with the whole stack running on the same 2 cores; "
            + measured(result, "timeseries", "plot `bench/out/timeseries.png`")
            + ".",
        ]
    )
