"""Counters end to end on the real stack: gateway (or a direct Avro producer) -> Kafka ->
Flink CounterRollupJob -> Cassandra counter_rollups + event log -> GetCount; exact under
retries, reused tokens, late events and faults (TaskManager killed, broker and gateway
restarted, stop-with-savepoint and resume)."""

import os
import signal
import subprocess
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from counter_load import Generator, call, fault_run, get_count, wait_count, wait_rollup
from kafka_tail import KafkaTail
from support import admin_headers, iso, kill_9, metric, now_iso

REPO = Path(__file__).resolve().parents[3]
ROLLUP = "tally-counter-rollup"


def avro_producer(stack, settings):
    bootstrap = f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"
    client = SchemaRegistryClient({"url": stack.component("registry").url()})
    schema = client.get_latest_version("tally.counter.events-value").schema.schema_str
    ser = AvroSerializer(client, schema, conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext("tally.counter.events", MessageField.VALUE)
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})

    def send(ns, counter, delta, event_us, event_id, op="ADD"):
        value = {
            "namespace": ns,
            "counter": counter,
            "op": op,
            "delta": delta,
            "event_time": event_us,
            "event_id": event_id,
            "source": "python",
        }
        producer.produce("tally.counter.events", key=f"{ns}/{counter}", value=ser(value, ctx))

    return producer, send


def test_generator_counts_are_exact_and_every_rejection_is_accounted_for(stack, settings, gw, cql, jobs):
    counters = [f"g-{uuid.uuid4().hex[:6]}-{n}" for n in range(12)]
    bootstrap = f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"
    tail = KafkaTail(bootstrap, stack.component("registry").url(), ["tally.deadletter"])
    results = {}
    for ns in ("video_views", "ad_clicks"):
        gen = Generator(gw, ns, counters, rounds=10).start(workers=6).join()
        assert gen.rejected == [] and sum(gen.truth.values()) > 0
        results[ns] = gen
    # at the gateway: a reused token with another delta (409), outside the window (400), no token (400)
    gen = results["ad_clicks"]
    reuse = call(
        gw,
        "AddCount",
        {
            "namespace": "ad_clicks",
            "counter_name": counters[0],
            "delta": 99,
            "idempotency_token": {"token": f"{gen.run}-{counters[0]}-0", "generation_time": now_iso()},
        },
    )
    assert reuse.status_code == 409 and reuse.json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSE"
    old = call(
        gw,
        "AddCount",
        {
            "namespace": "ad_clicks",
            "counter_name": counters[0],
            "delta": 1,
            "idempotency_token": {"token": "late", "generation_time": now_iso(-60)},
        },
    )
    assert old.status_code == 400 and old.json()["error"]["code"] == "OUTSIDE_ACCEPT_WINDOW"
    bare = call(gw, "AddCount", {"namespace": "ad_clicks", "counter_name": counters[0], "delta": 1})
    assert bare.status_code == 400 and bare.json()["error"]["field"] == "idempotency_token"
    # straight to Kafka, where only the job can tell: reuse, outside the window, unknown namespace
    producer, send = avro_producer(stack, settings)
    now_us = int(time.time() * 1e6)
    first = next(c for c in counters if gen.truth[c] > 0)
    send("ad_clicks", first, 1000, now_us, f"{gen.run}-{first}-1")  # token of round 1, other payload
    send("ad_clicks", first, 1000, now_us - 120_000_000, "too-old")  # two minutes behind the window
    send("ghost_ns", first, 1000, now_us, "ghost")
    send("ad_clicks", counters[1], 5, now_us, f"direct-{gen.run}")  # a good one
    assert producer.flush(30) == 0
    results["ad_clicks"].truth[counters[1]] += 5
    for ns, g in results.items():
        for c in counters:
            got = wait_count(gw, ns, c, g.truth[c], timeout=60)
            assert got["counter_type"] == ("ACCURATE" if ns == "ad_clicks" else "EVENTUAL")
    want = {"IDEMPOTENCY_KEY_REUSE", "OUTSIDE_ACCEPT_WINDOW", "UNKNOWN_NAMESPACE"}

    def of_first(recs):
        return [v for _, key, v in recs if key.endswith(f"/{first}")]

    # an unknown namespace is dead-lettered only after the job's grace for a namespace on its way
    mine = of_first(tail.records_until(lambda recs: {v["reason"] for v in of_first(recs)} >= want, timeout=120))
    tail.close()
    # dead letters are at least once: a job restart (e.g. a slow schema change) may repeat one
    assert {v["reason"] for v in mine} == want
    assert all(v["stage"] == "counter-rollup" and v["topic"] == "tally.counter.events" for v in mine)
    # the rollups themselves (EVENTUAL's answer) are exact once the window has passed; a
    # counter's rollup time moves only while it has events (counters[2:] got none directly)
    for ns, g in results.items():
        for c in counters[2:5]:
            wait_rollup(cql, ns, c, g.truth[c], g.last_event_us[c])


def test_clear_count_mid_stream_drops_what_came_before_in_event_time(gw, cql, jobs):
    for ns in ("ad_clicks", "video_views"):
        c = f"clr-{uuid.uuid4().hex[:8]}"
        base = datetime.now(UTC) - timedelta(seconds=2)

        def add(n, at, delta=1):
            r = call(
                gw,
                "AddCount",
                {
                    "namespace": ns,
                    "counter_name": c,
                    "delta": delta,
                    "idempotency_token": {"token": f"t{n}", "generation_time": iso(at)},
                },
            )
            assert r.status_code == 200, r.text

        for n in range(5):
            add(n, base + timedelta(milliseconds=10 * n))
        r = call(
            gw,
            "ClearCount",
            {
                "namespace": ns,
                "counter_name": c,
                "idempotency_token": {"token": "clear", "generation_time": iso(base + timedelta(milliseconds=500))},
            },
        )
        assert r.status_code == 200, r.text
        add(10, base + timedelta(milliseconds=100), delta=50)  # arrives after the clear, but is older: cleared
        for n in range(20, 23):
            add(n, base + timedelta(milliseconds=600 + n))
        got = wait_count(gw, ns, c, 3, timeout=30)
        assert got["counter_type"] in ("ACCURATE", "EVENTUAL")
        wait_rollup(cql, ns, c, 3, int((base + timedelta(milliseconds=622)).timestamp() * 1e6))  # the last event


def test_counter_types_freshness_and_add_and_get(gw, jobs):
    """ACCURATE reflects a write at once; EVENTUAL within accept_limit + skew + coalesce + 1 s;
    BEST_EFFORT within its flush interval, approximately (no dedup). Times are printed, the
    assertion bounds are generous (the benchmark measures them)."""
    c = f"fresh-{uuid.uuid4().hex[:8]}"
    seen = {}
    for ns, bound in (("ad_clicks", 5), ("video_views", 5 + 0.5 + 1 + 1 + 10), ("page_hits", 5)):
        body = {"namespace": ns, "counter_name": c, "delta": 3}
        if ns != "page_hits":
            body["idempotency_token"] = {"token": "f1", "generation_time": now_iso()}
        t0 = time.monotonic()
        r = call(gw, "AddAndGetCount", body)
        assert r.status_code == 200, r.text
        if ns == "ad_clicks":
            assert r.json()["count"] == 3, "AddAndGetCount on ACCURATE includes the add"
        wait_count(gw, ns, c, 3, timeout=bound)
        seen[ns] = round(time.monotonic() - t0, 2)
    print(f"visible after (s): {seen}")
    # BEST_EFFORT has no dedup: the same request twice counts twice
    for _ in range(2):
        assert call(gw, "AddCount", {"namespace": "page_hits", "counter_name": c, "delta": 1}).status_code == 202
    wait_count(gw, "page_hits", c, 5, timeout=10)


def test_add_and_get_on_accurate_counts_its_write_once_after_earlier_ones(gw, jobs):
    """AddAndGetCount on ACCURATE answers the count with its own write: exactly once whether the
    gateway answers from the counter view (the write newer than every event the live total holds)
    or from the event log (a retried token, which the live total may hold already)."""
    c = f"aag-{uuid.uuid4().hex[:8]}"
    answered = {s: metric(f"{gw}/metrics", "tally_gateway_add_and_get_total", source=s) for s in ("view", "cassandra")}
    calls = 0

    def add(endpoint, token, delta, at):
        body = {
            "namespace": "ad_clicks",
            "counter_name": c,
            "delta": delta,
            "idempotency_token": {"token": token, "generation_time": at},
        }
        nonlocal calls
        calls += endpoint == "AddAndGetCount"
        r = call(gw, endpoint, body)
        assert r.status_code in (200, 202), r.text
        return r.json()

    for n in range(3):
        add("AddCount", f"t{n}", 2, now_iso())
    wait_count(gw, "ad_clicks", c, 6, timeout=30)
    at = now_iso()
    assert add("AddAndGetCount", "a1", 5, at)["count"] == 11
    wait_count(gw, "ad_clicks", c, 11, timeout=30)
    # a retry reads the event log, which may lag the view by the writer's flush: never counted twice
    deadline, again = time.monotonic() + 15, None
    while again != 11 and time.monotonic() < deadline:
        again = add("AddAndGetCount", "a1", 5, at)["count"]
        assert again <= 11, f"a retried token counted twice: {again}"
    assert again == 11
    assert add("AddAndGetCount", "a2", -1, now_iso())["count"] == 10
    wait_count(gw, "ad_clicks", c, 10, timeout=30)
    # each answer counted once by where it came from (the view when it held the counter; which
    # one a call takes depends on how far the view is behind, so only the sum is exact here)
    moved = {s: metric(f"{gw}/metrics", "tally_gateway_add_and_get_total", source=s) - n for s, n in answered.items()}
    print(f"AddAndGetCount answered from: {moved}")
    assert sum(moved.values()) == calls


def stored_count(cql, counter: str) -> int:
    """The count in ad_clicks' durable rollup row."""
    return (
        cql.execute("SELECT last_rollup_count FROM ns_ad_clicks.counter_rollups WHERE counter = %s", (counter,))
        .one()
        .last_rollup_count
    )


def test_recount_finds_an_injected_discrepancy_and_repairs_it(stack, gw, cql, jobs):
    c = f"rc-{uuid.uuid4().hex[:8]}"
    gen = Generator(gw, "ad_clicks", [c], rounds=12).start(workers=1).join()
    row = wait_rollup(cql, "ad_clicks", c, gen.truth[c], gen.last_event_us[c])
    t_us = int(row.last_rollup_ts.replace(tzinfo=UTC).timestamp() * 1e6)
    wt = (
        cql.execute(
            "SELECT WRITETIME(last_rollup_count) AS wt FROM ns_ad_clicks.counter_rollups WHERE counter = %s", (c,)
        )
        .one()
        .wt
    )
    cql.execute(
        "UPDATE ns_ad_clicks.counter_rollups USING TIMESTAMP %s SET last_rollup_count = %s WHERE counter = %s",
        (wt + 1, gen.truth[c] + 17, c),
    )
    # GetCount answers from the view, which the job feeds (it never reads the row): the corruption is
    # in the durable store only, where a view rebuilt from Cassandra or a cold read would meet it
    assert get_count(gw, "ad_clicks", c)["count"] == gen.truth[c]
    assert stored_count(cql, c) == gen.truth[c] + 17
    out = subprocess.run(
        [str(REPO / "tally"), "counters", "recount", "ad_clicks", c], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 1, out.stdout + out.stderr  # a difference was found
    assert "difference -17" in out.stdout and f"recounted {gen.truth[c]}" in out.stdout
    out = subprocess.run(
        [str(REPO / "tally"), "counters", "recount", "ad_clicks", c, "--repair"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    # the repair went through the pipeline: a RECOUNT the rollup job applied and wrote as the rollup
    assert out.returncode == 0 and "repaired" in out.stdout, out.stdout + out.stderr
    assert "repair recount-" in out.stdout
    assert stored_count(cql, c) == gen.truth[c]
    assert get_count(gw, "ad_clicks", c)["count"] == gen.truth[c]
    again = call(gw, "Recount", {"namespace": "ad_clicks", "counter_name": c}).json()
    assert again["difference"] == 0 and again["last_rollup_ts"].startswith(
        row.last_rollup_ts.strftime("%Y-%m-%dT%H:%M:%S")
    )
    # a repair with a later from would write a partial sum: refused
    partial = call(gw, "Recount", {"namespace": "ad_clicks", "counter_name": c, "from": again["from"], "repair": True})
    assert partial.status_code == 400 and partial.json()["error"]["field"] == "from"
    # the next rollups build on the repaired count
    more = Generator(gw, "ad_clicks", [c], rounds=3).start(workers=1).join()
    wait_rollup(cql, "ad_clicks", c, gen.truth[c] + more.truth[c], more.last_event_us[c])
    assert get_count(gw, "ad_clicks", c)["count"] == gen.truth[c] + more.truth[c]
    # by default the whole stored log: from the namespace's first slice that is not deleted
    first = min(
        r.start_time
        for r in cql.execute("SELECT start_time, status FROM tally_meta.slices WHERE namespace = 'ad_clicks'")
        if r.status != "DELETED"
    )
    assert again["from"].startswith(first.strftime("%Y-%m-%dT%H:%M:%S")), (again["from"], first)
    assert t_us > gen.last_event_us[c]
    bad = call(gw, "Recount", {"namespace": "page_hits", "counter_name": c})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "NO_EVENT_LOG"


@pytest.mark.disruptive
def test_counts_stay_exact_when_the_taskmanager_is_killed(stack, gw, cql, jobs, wait_healthy):

    tm = stack.component("flink-taskmanager")
    blobs = tm.tmp_dir / f"tm_{tm.name}" / "blobStorage"

    def kill_tm():
        kill_9(stack, "flink-taskmanager")
        time.sleep(2)
        (blobs / "job_00000000000000000000000000000000").mkdir(parents=True, exist_ok=True)  # a stale cache
        stack.up()
        wait_healthy()

    fault_run(gw, cql, kill_tm)
    # the killed TaskManager's temporary files went with it (its blob cache kept every job's
    # jar ever run): the new one caches only the jobs running now
    running = {j["jid"] for j in jobs.rest.jobs() if j["state"] == "RUNNING"}
    assert {d.name.removeprefix("job_") for d in blobs.glob("job_*")} <= running


@pytest.mark.disruptive
def test_counts_stay_exact_when_the_whole_flink_cluster_is_killed(stack, gw, cql, jobs, wait_healthy):
    """JobManager and TaskManager killed (a crashed host; the session cluster keeps no jobs
    without HA): `./tally up` redeploys each job from its newest retained checkpoint, so no
    rollup, pending event or dedup id is lost."""

    def kill_flink():
        kill_9(stack, "flink-taskmanager", "flink-jobmanager")
        time.sleep(2)
        stack.up()
        wait_healthy()
        restored = {name: jobs.restore_point(name) for name in (ROLLUP,)}
        assert all(restored.values()), f"no retained checkpoint to restore from: {restored}"
        assert ROLLUP in jobs.ensure_deployed()

    fault_run(gw, cql, kill_flink)


def checkpoint_after(jobs, name: str, after_ms: int, timeout_s: float = 90) -> None:
    """Waits until the job has completed a checkpoint triggered after `after_ms` (epoch ms)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = jobs.running(name)
        if job:
            latest = jobs.rest.call("GET", f"/jobs/{job['jid']}/checkpoints").get("latest") or {}
            if ((latest.get("completed") or {}).get("trigger_timestamp") or 0) > after_ms:
                return
        time.sleep(0.5)
    raise AssertionError(f"{name} completed no checkpoint within {timeout_s:g} s")


def state_backend(jobs, name: str) -> str:
    job = jobs.running(name)
    return jobs.rest.call("GET", f"/jobs/{job['jid']}/checkpoints/config")["state_backend"]


@pytest.mark.disruptive
def test_counts_stay_exact_when_a_rocksdb_checkpoint_is_moved_to_the_heap_backend(
    stack, settings, gw, cql, jobs, wait_healthy
):
    """A stack upgraded across the change of state backend while it was down: the rollup job's
    last deployment ran on RocksDB and the whole Flink cluster dies, so `./tally up` finds only a
    native RocksDB checkpoint, which the heap backend cannot restore. It runs the job once more on
    RocksDB from it, stops it with a canonical savepoint and deploys it on the heap from that:
    every pending event (it_counters' 30 s window keeps the whole run pending) and its rollup
    timer survives, and the counts are exact."""
    from tally.jobs import Jobs
    from tally.settings import Settings

    assert jobs.backend() == "hashmap"
    rocks = Jobs(Settings.load({**os.environ, "TALLY_FLINK_STATE_BACKEND": "rocksdb"}), log=lambda *_: None)
    rocks.stop_with_savepoint(ROLLUP)  # heap -> canonical savepoint -> RocksDB: the other way
    rocks.resume(ROLLUP)
    assert state_backend(jobs, ROLLUP) == "EmbeddedRocksDBStateBackend"

    def kill_flink_and_up():
        checkpoint_after(jobs, ROLLUP, int(time.time() * 1000))  # on RocksDB, the run's events pending
        kill_9(stack, "flink-taskmanager", "flink-jobmanager")
        time.sleep(2)
        stack.up()
        wait_healthy()
        assert "/chk-" in jobs.restore_point(ROLLUP)
        assert ROLLUP in jobs.ensure_deployed()

    fault_run(gw, cql, kill_flink_and_up)
    assert state_backend(jobs, ROLLUP) == "HashMapStateBackend"


@pytest.mark.disruptive
def test_counts_stay_exact_across_a_broker_restart(stack, gw, cql, jobs, wait_healthy):
    def restart_broker():
        stack.stop(stack.component("kafka"))
        time.sleep(3)
        stack.up()
        wait_healthy()

    gen = fault_run(gw, cql, restart_broker)
    print(f"client retries through the broker restart: {gen.retries}")


@pytest.mark.disruptive
def test_counts_stay_exact_across_a_gateway_restart(stack, gw, cql, jobs, wait_healthy):
    def restart_gateway():
        ref = stack.state.ref("gateway")
        os.kill(ref.pid, signal.SIGKILL)  # its in-memory token cache is lost: the job's dedup must hold
        time.sleep(1)
        stack.up()
        wait_healthy()

    fault_run(gw, cql, restart_gateway)


@pytest.mark.disruptive
def test_counts_stay_exact_across_stop_with_savepoint_and_resume(gw, cql, jobs):
    def savepoint_and_resume():
        assert jobs.stop_with_savepoint(ROLLUP).startswith("file:")
        time.sleep(2)
        jobs.resume(ROLLUP)

    fault_run(gw, cql, savepoint_and_resume)


def test_eventual_counts_come_from_the_view_of_the_compacted_rollups_topic(stack, settings, gw, cql, jobs, tmp_path):
    """GetCount of an EVENTUAL counter answers from the gateway's in-memory view of
    tally.counter.rollups, not from Cassandra; a gateway started later rebuilds the view from the
    compacted topic."""
    from tally import process
    from test_gateway import second_gateway

    c = f"view-{uuid.uuid4().hex[:8]}"
    token = {"token": f"{c}-1", "generation_time": now_iso()}
    r = call(gw, "AddCount", {"namespace": "video_views", "counter_name": c, "delta": 5, "idempotency_token": token})
    assert r.status_code == 200, r.text
    wait_count(gw, "video_views", c, 5)
    # the view can answer before the rollup sink's row is in Cassandra (the rehearsal met it): wait for it
    wait_rollup(cql, "video_views", c, 5, 0)
    # change Cassandra's row behind the view's back: the answer does not move, so it is not read
    wt = (
        cql.execute(
            "SELECT WRITETIME(last_rollup_count) AS wt FROM ns_video_views.counter_rollups WHERE counter = %s", (c,)
        )
        .one()
        .wt
    )
    cql.execute(
        "UPDATE ns_video_views.counter_rollups USING TIMESTAMP %s SET last_rollup_count = %s WHERE counter = %s",
        (wt + 1, 99, c),
    )
    for _ in range(5):
        assert get_count(gw, "video_views", c)["count"] == 5
    ref, url = second_gateway(settings, stack, tmp_path)
    try:
        wait_count(url, "video_views", c, 5, timeout=60)  # from its rebuilt view (Cassandra says 99)
    finally:
        process.stop(ref, timeout=20)


def test_a_counter_never_written_is_remembered_as_such_until_its_first_rollup(gw, cql, jobs):
    """GetCount of an EVENTUAL counter nobody wrote reads Cassandra once, then the view answers 0;
    its first rollup, through the topic, replaces that (the job holds no state of it and reads
    back only counters it let go: the row planted in Cassandra is not its, and it counts from 0)."""
    c = f"unwritten-{uuid.uuid4().hex[:8]}"
    assert get_count(gw, "video_views", c)["count"] == 0  # read from Cassandra, remembered
    # a rollup row behind the view's back (the oldest write time, so the job's own rollup wins)
    cql.execute(
        "INSERT INTO ns_video_views.counter_rollups (counter, last_rollup_count, last_rollup_ts) "
        "VALUES (%s, %s, %s) USING TIMESTAMP 1",
        (c, 42, datetime.now(UTC) - timedelta(minutes=1)),
    )
    for _ in range(5):
        assert get_count(gw, "video_views", c)["count"] == 0  # the view answers, not Cassandra
    token = {"token": f"{c}-1", "generation_time": now_iso()}
    r = call(gw, "AddCount", {"namespace": "video_views", "counter_name": c, "delta": 3, "idempotency_token": token})
    assert r.status_code == 200, r.text
    wait_count(gw, "video_views", c, 3)  # the job's first rollup replaced the entry


def test_retention_folds_a_counter_log_slice_into_its_base_and_recount_still_counts_it_all(stack, gw, cql, jobs):
    """Counter event logs have retention like time series: a slice past delete_after is folded into
    each counter's base (counter_log_base), then dropped; GetCount and Recount stay whole."""
    ns = f"it_ctrlog_{uuid.uuid4().hex[:8]}"
    config = {
        "kind": "counter",
        "counter_type": "EVENTUAL",
        "accept_limit": "5s",
        "rollup": {"coalesce_ms": 500, "clock_skew_ms": 200},
        "time_partition": {"seconds_per_slice": 60, "seconds_per_bucket": 10, "buckets_per_id": 1},
        "retention": {"close_after": "5s", "delete_after": "10s"},
    }
    r = requests.put(f"{gw}/v1/namespaces/{ns}", json=config, headers=admin_headers(), timeout=10)
    assert r.status_code == 201, r.text
    try:
        c = "kept"
        deadline = time.monotonic() + 30  # until the gateway has heard of the new namespace
        while call(gw, "GetCount", {"namespace": ns, "counter_name": c}).status_code != 200:
            assert time.monotonic() < deadline, "the new namespace never reached the gateway"
            time.sleep(0.3)
        if datetime.now(UTC).second >= 50:  # the first events all in one one-minute slice
            time.sleep(61 - datetime.now(UTC).second)
        now = datetime.now(UTC)

        def send(endpoint, token, delta=None):
            body = {
                "namespace": ns,
                "counter_name": c,
                "idempotency_token": {"token": token, "generation_time": iso(now)},
            }
            if delta is not None:
                body["delta"] = delta
            deadline = time.monotonic() + 30  # the gateway hears of the new namespace within a second or two
            while True:
                r = call(gw, endpoint, body)
                if r.status_code == 200 or time.monotonic() > deadline:
                    assert r.status_code == 200, r.text
                    return
                time.sleep(0.3)

        send("AddCount", "a", 5)
        send("ClearCount", "clear")  # at the same instant: drops the 5 (a CLEAR comes after the ADDs)
        now += timedelta(milliseconds=1)
        send("AddCount", "b", 2)
        send("AddCount", "c", 3)
        wait_count(gw, ns, c, 5, timeout=60)
        slice_start = now.replace(second=0, microsecond=0)
        table = f"events_{slice_start.strftime('%Y%m%d_%H%M')}"

        def status():
            rows = cql.execute("SELECT table_name, status FROM tally_meta.slices WHERE namespace = %s", (ns,)).all()
            return {row.table_name: row.status for row in rows}

        deadline = time.monotonic() + 150  # the slice ends within 60 s; deleted 10 s later, on a 2 s pass
        while status().get(table) != "DELETED":
            assert time.monotonic() < deadline, f"{table} not deleted: {status()}"
            time.sleep(1)
        base = cql.execute(f"SELECT count, until FROM ns_{ns}.counter_log_base WHERE counter = %s", (c,)).one()
        assert base is not None and base.count == 5, base
        assert base.until.replace(tzinfo=UTC) == slice_start + timedelta(seconds=60)
        assert table not in {
            t.table_name
            for t in cql.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (f"ns_{ns}",))
        }

        # every slice up to the quiet counter's rollup time is gone: Recount answers from the base alone
        rc = call(gw, "Recount", {"namespace": ns, "counter_name": c})
        assert rc.status_code == 200, rc.text
        rc = rc.json()
        assert rc["log_base"] == 5 and rc["recounted"] == 5 and rc["difference"] == 0, rc
        assert rc["events"] == 0 and rc["from"] == rc["to"] == rc["last_rollup_ts"], rc  # no slice read

        now = datetime.now(UTC)
        send("AddCount", "d", 4)
        wait_count(gw, ns, c, 9, timeout=60)
        # Recount compares with the rollup row in Cassandra, which GetCount's view can be ahead of:
        # until that row passes d, the rollup time is older than every slice retention kept
        wait_rollup(cql, ns, c, 9, int(now.timestamp() * 1e6) - 1)
        rc = call(gw, "Recount", {"namespace": ns, "counter_name": c})
        assert rc.status_code == 200, rc.text
        rc = rc.json()
        assert rc["log_base"] == 5 and rc["recounted"] == 9 and rc["difference"] == 0, rc
        assert rc["from"] >= iso(slice_start + timedelta(seconds=60))[:19], rc
    finally:
        requests.delete(f"{gw}/v1/namespaces/{ns}", headers=admin_headers(), timeout=10)
