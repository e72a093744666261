"""What every benchmark measures with: the bench jar, the report folder, a process's CPU and
memory, Kafka's ProducerPerformance (the ceiling), percentiles, and the counter and TimeSeries tools' commands.
The benchmarks import this; it imports none of them."""

from __future__ import annotations

import os
import re
import socket
import statistics
import subprocess
import time
from pathlib import Path

import requests
from tally.components.base import JAVA
from tally.components.java_service import shaded_jar
from tally.gateway_metrics import read_cache_counts
from tally.process import ProcessRef
from tally.settings import REPO
from tally.stack import Stack


def bench_jar():
    """The benchmarks' own jar (bench/): none of its classes ship in a production jar."""
    return shaded_jar("bench", "tally-bench")


OUT = REPO / "bench" / "out"

# The report a run writes when it is named apart (--report): its figures go apart too, so a partial
# run never replaces the figure of the report the tables read.
_report_name: str | None = None


def name_report(name: str | None) -> None:
    """Names the report the figures drawn from now on belong to (None: the benchmark's own)."""
    global _report_name
    _report_name = name


def figure_path(png: Path) -> Path:
    """Where a benchmark's figure is written: its own path, or beside a report named apart."""
    return png if _report_name is None else png.with_name(f"{_report_name}.{png.name}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


def cpu_seconds(ref: ProcessRef) -> float:
    fields = Path(f"/proc/{ref.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(ref: ProcessRef) -> float:
    for line in Path(f"/proc/{ref.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def summary(runs: list[float]) -> dict:
    return {"median": statistics.median(runs), "min": min(runs), "max": max(runs), "runs": runs}


def producer_performance_runs(stack: Stack, say, runs: int, *args, **kwargs) -> dict:
    """A ceiling: `runs` runs of producer_performance(stack, *args, **kwargs), each figure their
    median (min-max), and each run's own line. One run is not a ceiling: a million records ranged
    164,962-378,501 records/s within an hour on the development host."""
    found = []
    for k in range(runs):
        found.append(producer_performance(stack, *args, **kwargs))
        say(f"  run {k + 1}: {found[-1]['line']}")
    return {
        **{f: summary([c[f] for c in found]) for f in ("records_per_s", "p50_ms", "p99_ms")},
        "lines": [c["line"] for c in found],
    }


def producer_performance(
    stack: Stack,
    record_size: int,
    records: int,
    throughput: int = -1,
    props: tuple[str, ...] = ("compression.type=lz4", "linger.ms=5", "batch.size=131072"),
    wrap=None,
) -> dict:
    """Kafka's ProducerPerformance on the stack's broker (acks=all, idempotent, plus props), at
    `throughput` records/s (-1: as fast as it goes): records/s, MB/s and latency (ms). `wrap`
    turns the command into the one to run (e.g. one that joins a cgroup first)."""
    kafka = stack.component("kafka")
    cmd = [
        JAVA,
        "-Xmx512m",
        "-cp",
        f"{kafka.lib}/*",
        "org.apache.kafka.tools.ProducerPerformance",
        "--topic",
        "bench.ceiling",
        "--num-records",
        str(records),
        "--record-size",
        str(record_size),
        "--throughput",
        str(throughput),
        "--producer-props",
        f"bootstrap.servers={kafka.bootstrap}",
        "acks=all",
        "enable.idempotence=true",
        *props,
    ]
    r = subprocess.run(wrap(cmd) if wrap else cmd, capture_output=True, text=True)
    last = [l for l in r.stdout.splitlines() if "records sent" in l][-1]
    m = re.search(
        r"([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency.*?(\d+) ms 50th.*?(\d+) ms 99th", last
    )
    return {
        "records_per_s": float(m.group(1)),
        "mb_per_s": float(m.group(2)),
        "avg_ms": float(m.group(3)),
        "p50_ms": float(m.group(4)),
        "p99_ms": float(m.group(5)),
        "line": last,
    }


def percentiles(samples_ms: list[float]) -> dict:
    xs = sorted(samples_ms)
    pick = lambda q: round(xs[min(len(xs) - 1, int(q * len(xs)))], 2)
    return {"n": len(xs), "p50_ms": pick(0.50), "p99_ms": pick(0.99), "max_ms": round(xs[-1], 2)}


def iso(micros: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(micros / 1e6)) + f".{micros % 1_000_000:06d}Z"


def counter_tool(stack: Stack) -> list[str]:
    """The counter benchmark tool's command (AddCount events straight to Kafka) for this stack."""
    return [
        JAVA,
        "-Xmx512m",
        "-cp",
        str(bench_jar()),
        "io.tally.bench.jobs.CounterBenchmark",
        "--bootstrap",
        stack.component("kafka").bootstrap,
        "--registry",
        stack.component("registry").url(),
    ]


def timeseries_tool(stack: Stack, ns: str) -> tuple[list[str], list[str]]:
    """The TimeSeries benchmark tool's command and its options for this stack and namespace."""
    tool = [JAVA, "-Xmx512m", "-cp", str(bench_jar()), "io.tally.bench.jobs.TimeSeriesBenchmark"]
    common = [
        "--bootstrap",
        stack.component("kafka").bootstrap,
        "--registry",
        stack.component("registry").url(),
        "--cassandra",
        f"127.0.0.1:{stack.component('cassandra').ports()['cql']}",
        "--namespace",
        ns,
    ]
    return tool, common


# the jobs whose input backlog a benchmark waits out (their consumer group is the job's name);
# the noisy-neighbor job starts at the end of its topics and keeps no backlog worth waiting for
BACKLOG_GROUPS = ("tally-counter-rollup", "tally-timeseries-writer")


def jobs_state_bytes(stack: Stack) -> dict[str, int]:
    """Each running job's state as its last completed checkpoint holds it (Flink's REST API). The heap
    backend writes a job's whole state at every checkpoint, so the TaskManager's CPU, at rest and
    under load, grows with it: a benchmark names it beside its figures."""
    rest = stack.component("flink-jobmanager").url().rstrip("/")
    sizes = {}
    for job in requests.get(f"{rest}/jobs/overview", timeout=10).json()["jobs"]:
        if job["state"] != "RUNNING":
            continue
        latest = requests.get(f"{rest}/jobs/{job['jid']}/checkpoints", timeout=10).json()["latest"]["completed"]
        if latest:
            sizes[job["name"]] = int(latest["state_size"])
    return sizes


def pipeline_backlog(stack: Stack) -> int:
    """Records the jobs have not consumed yet (log end minus the group's committed offset, which
    Flink commits at each checkpoint), summed over their topics' partitions."""
    from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    bootstrap = stack.component("kafka").bootstrap
    admin = AdminClient({"bootstrap.servers": bootstrap})
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": "tally-bench-backlog-probe"})
    total = 0
    try:
        for group in BACKLOG_GROUPS:
            futures = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
            for tp in futures[group].result(timeout=10).topic_partitions:
                if tp.offset >= 0:
                    _, high = probe.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=10)
                    total += max(0, high - tp.offset)
    finally:
        probe.close()
    return total


#: Cassandra's pools of background writes: a flush or compaction still running when a window of
#: idle CPU is read is counted as idle (a dropped slice table once flushed every table, and the idle
#: readings around a load swung by 0.3 cores)
CASSANDRA_BACKGROUND_POOLS = ("CompactionExecutor", "MemtableFlushWriter", "MemtablePostFlush")


def cassandra_background(session) -> int:
    """Flushes and compactions Cassandra runs or has queued (its `system_views.thread_pools`); the
    caller keeps one session for a whole run (a login costs the node a password hash)."""
    rows = session.execute("SELECT name, active_tasks, pending_tasks FROM system_views.thread_pools")
    return sum(
        r.active_tasks + r.pending_tasks
        for r in rows
        if r.name in CASSANDRA_BACKGROUND_POOLS or r.name.startswith("PerDiskMemtableFlushWriter")
    )


#: how many times a TaskManager metrics scrape is tried before a run gives up on it
SCRAPE_TRIES = 3


def operator_records_in(metrics_url: str, operator: str) -> float:
    """numRecordsIn of an operator, live from the TaskManager's Prometheus reporter. A scrape the
    reporter drops (its HTTP server closed a connection unanswered while the box was saturated, in
    `bench timeseries` of 2026-12-02) is asked again; a reporter that stays away fails the run."""
    for attempt in range(SCRAPE_TRIES):
        try:
            text = requests.get(metrics_url, timeout=10).text
            break
        except requests.ConnectionError:
            if attempt == SCRAPE_TRIES - 1:
                raise
            time.sleep(0.5)
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


#: the share of a benchmark's records that counts as all of them (see Standing.reached)
REACHED = 0.99


class Standing:
    """A job's count of records taken in, net of the stack's standing load. The count is never
    still: the runq exporter's samples reach the TimeSeries writer (hundreds of rows a second)
    and heartbeats the rollup job (about 20 records a second), so a benchmark that waited for it
    to stop waited forever. `wait` waits until it grows no faster than STANDING_PER_S for three
    windows in a row and takes that rate; `added` is what came in since, beyond that rate."""

    STANDING_PER_S = 1000.0

    def __init__(self, read, what: str):
        self.read, self.what = read, what
        self.base = self.rate = self.since = 0.0
        self.last: tuple[float, float] | None = None  # the count and its time at the last `reached`

    def wait(self, say, window_s: float = 2.0, timeout_s: float = 900) -> Standing:
        deadline = time.monotonic() + timeout_s
        last, t_last, calm = self.read(), time.monotonic(), []
        while time.monotonic() < deadline:
            time.sleep(window_s)
            value, t = self.read(), time.monotonic()
            rate = (value - last) / (t - t_last)
            calm = calm + [rate] if rate <= self.STANDING_PER_S else []
            last, t_last = value, t
            if len(calm) >= 3:
                self.base, self.since, self.rate = value, t, sum(calm) / len(calm)
                say(f"  {self.what}: standing load {self.rate:.0f} a second")
                return self
        raise RuntimeError(f"{self.what} did not fall to a standing load in {timeout_s:.0f} s (a backlog?)")

    def added(self) -> float:
        return self._net(self.read(), time.monotonic())

    def _net(self, value: float, t: float) -> float:
        """The count at t above the base, less the standing load since."""
        return value - self.base - self.rate * (t - self.since)

    def reached(self, target: float) -> bool:
        """Whether `added` has come within 1% of target: the standing rate is an estimate, and its
        error grows with time, so an exact target could be missed for good (a run of 300,000 sat at
        299,9xx); the last 1% of a drain is about 1% of its time. Or whether the whole target is in
        above the base and the count has stopped growing faster than twice the standing rate: a rate
        taken from the falling tail of the run before (332 a second on 2026-12-03, the operator's
        own about 0) is subtracted for as long as the run lasts, and kept a finished run under 1%
        of its target until the benchmark's 15 minutes ran out."""
        value, t = self.read(), time.monotonic()
        if self._net(value, t) >= REACHED * target:
            return True
        last, self.last = self.last, (value, t)
        if last is None or t <= last[1]:
            return False
        growing = (value - last[0]) / (t - last[1])
        return value - self.base >= target and growing <= max(2 * self.rate, 1.0)


def read_cache_hits(gw: str) -> float:
    """The gateway's read-cache hits so far (tally_gateway_read_cache_total{result="hit"})."""
    return read_cache_counts(gw)["hit"]
