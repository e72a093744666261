"""Flink SQL over Tally, through the SQL gateway's REST API as a user's program talks to it:
the tally catalog's tables (tally-avro on Tally's registry) agree with what the gateway wrote
and what it answers, an INSERT goes through the jobs to ReadEventRecords, a topic written with
a newer compatible schema still reads, and the docs' example queries run as written."""

import base64
import json
import re
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import requests
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from counter_load import call, get_count
from sql_rest import SqlSession, bounded_since, minutes_ago
from support import admin_headers, now_iso, until

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def sql_url(stack):
    return stack.component("sql-gateway").url()


@pytest.fixture(scope="module")
def flink_url(stack):
    return stack.component("flink-jobmanager").url()


@pytest.fixture
def batch(sql_url, flink_url):
    s = SqlSession(sql_url, {"execution.runtime-mode": "batch"}, flink_url)
    yield s
    s.close()


@pytest.fixture
def streaming(sql_url, flink_url):
    s = SqlSession(sql_url, {"execution.runtime-mode": "streaming"}, flink_url)
    yield s
    s.close()


def flink_job(stack, job_id: str) -> dict:
    return requests.get(f"{stack.component('flink-jobmanager').url()}/jobs/{job_id}", timeout=10).json()


def test_a_bounded_count_equals_what_the_gateway_wrote_and_runs_as_a_dashboard_job(stack, gw, batch, jobs):
    tsid = f"sql-{uuid.uuid4().hex[:8]}"
    since = minutes_ago(1)
    for b in range(3):
        events = [
            {"timeSeriesId": tsid, "eventTime": now_iso(), "eventId": f"b{b}-{i}", "eventItems": []} for i in range(25)
        ]
        r = requests.post(
            f"{gw}/v1/timeseries/WriteEventRecordsSync", json={"namespace": "playback", "events": events}, timeout=30
        )
        assert r.status_code == 200, r.text
    op = batch.submit(
        f"SELECT COUNT(*) AS events, COUNT(DISTINCT event_id) AS ids FROM timeseries_events {bounded_since(since)} "
        f"WHERE namespace = 'playback' AND time_series_id = '{tsid}'"
    )
    rows, job = batch.result(op)
    assert [r["fields"] for r in rows] == [[75, 75]], "acknowledged by WriteEventRecordsSync, so in Kafka once"
    assert flink_job(stack, job)["state"] == "FINISHED", "the statement ran as a job of the session cluster"


def test_a_tumbling_window_over_counter_events_equals_the_rollup_and_counter_rollups_agrees(gw, batch, streaming, jobs):
    counter = f"sql-{uuid.uuid4().hex[:8]}"
    since, total = minutes_ago(1), 0
    for i in range(30):  # about 6 s of increments: several 2-second windows
        delta = i % 4 + 1
        body = {
            "namespace": "it_counters",
            "counter_name": counter,
            "delta": delta,
            "idempotency_token": {"token": f"{counter}-{i}", "generation_time": now_iso()},
        }
        assert call(gw, "AddCount", body).status_code == 200
        total += delta
        time.sleep(0.2)
    windows = batch.query(
        "SELECT TUMBLE_START(rowtime, INTERVAL '2' SECOND) AS window_start, SUM(delta) AS added, COUNT(*) AS events "
        f"FROM counter_events {bounded_since(since)} WHERE namespace = 'it_counters' AND counter = '{counter}' "
        "GROUP BY TUMBLE(rowtime, INTERVAL '2' SECOND)"
    )
    assert len(windows) > 1 and sum(w[2] for w in windows) == 30
    assert sum(w[1] for w in windows) == total
    until("the rollup reaches every increment", lambda: get_count(gw, "it_counters", counter)["count"] == total, 120)
    # counter_rollups is an upsert table over the compacted rollup topic: an unbounded query whose
    # row for the counter is updated to the newest rollup
    rows = streaming.watch(
        f"SELECT `count` FROM counter_rollups WHERE namespace = 'it_counters' AND counter = '{counter}'",
        until=lambda rows: rows == [[total]],
        timeout=120,
    )
    assert rows == [[total]]
    assert get_count(gw, "it_counters", counter)["count"] == total


def test_an_insert_from_values_is_stored_by_the_writer_and_read_through_the_gateway(stack, gw, streaming, jobs):
    tsid = f"sql-{uuid.uuid4().hex[:8]}"
    job = streaming.execute(
        "INSERT INTO timeseries_events (namespace, time_series_id, event_time, event_id, items, source) VALUES "
        f"('playback', '{tsid}', CAST(CURRENT_TIMESTAMP AS TIMESTAMP(6)), 'v1', "
        "ARRAY[ROW('deviceType', CAST('ios' AS BYTES))], 'flink-sql'), "
        f"('playback', '{tsid}', CAST(CURRENT_TIMESTAMP AS TIMESTAMP(6)), 'v2', "
        "ARRAY[ROW('deviceType', CAST('tv' AS BYTES))], 'flink-sql')"
    )
    until("the INSERT's job finishes", lambda: flink_job(stack, job)["state"] == "FINISHED", 60)
    query = {
        "namespace": "playback",
        "timeSeriesId": tsid,
        "timeInterval": {"start": now_iso(-3600), "end": now_iso(60)},
    }

    def read():
        r = requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=query, timeout=30)
        assert r.status_code == 200, r.text
        return r.json()["events"]

    until("both rows are readable", lambda: len(read()) == 2, 60)
    items = {e["eventId"]: base64.b64decode(e["eventItems"][0]["eventItemValue"]) for e in read()}
    assert items == {"v1": b"ios", "v2": b"tv"}


def test_a_record_written_with_a_newer_compatible_schema_still_reads(stack, settings, batch):
    topic = f"it.sql.compat.{uuid.uuid4().hex[:8]}"
    subject = f"{topic}-value"
    bootstrap = settings.kafka_bootstrap()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, num_partitions=1)])[topic].result(30)  # the broker's replication
    registry_url = stack.component("registry").url()
    v1 = {
        "type": "record",
        "name": "Reading",
        "namespace": "it.sql",
        "fields": [{"name": "sensor", "type": "string"}, {"name": "value", "type": "long"}],
    }
    v2 = {**v1, "fields": v1["fields"] + [{"name": "unit", "type": "string", "default": "ms"}]}
    client = SchemaRegistryClient({"url": registry_url})
    producer = Producer({"bootstrap.servers": bootstrap})
    ctx = SerializationContext(topic, MessageField.VALUE)
    for schema, value in ((v1, {"sensor": "a", "value": 1}), (v2, {"sensor": "b", "value": 2, "unit": "us"})):
        r = requests.post(
            f"{registry_url}/subjects/{subject}/versions",
            json={"schema": json.dumps(schema)},
            headers=admin_headers(),
            timeout=10,
        )
        assert r.status_code == 200, r.text
        ser = AvroSerializer(
            client, json.dumps(schema), conf={"auto.register.schemas": False, "use.latest.version": False}
        )
        producer.produce(topic, value=ser(value, ctx))
    assert producer.flush(30) == 0
    batch.execute(
        f"CREATE TEMPORARY TABLE readings (sensor STRING, `value` BIGINT, unit STRING) WITH ("
        f"'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', "
        "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', "
        f"'format' = 'tally-avro', 'tally-avro.url' = '{registry_url}', 'tally-avro.subject' = '{subject}')"
    )
    rows = batch.query("SELECT sensor, `value`, unit FROM readings ORDER BY sensor")
    assert rows == [["a", 1, "ms"], ["b", 2, "us"]], "v1's record gets v2's default, v2's its own value"


def test_tally_sql_prints_a_count_and_fails_a_bad_statement(stack, gw, jobs):
    since = minutes_ago(1)
    event = {"timeSeriesId": f"sql-{uuid.uuid4().hex[:8]}", "eventTime": now_iso(), "eventId": "e", "eventItems": []}
    r = requests.post(
        f"{gw}/v1/timeseries/WriteEventRecordsSync", json={"namespace": "playback", "events": [event]}, timeout=30
    )
    assert r.status_code == 200, r.text
    r = subprocess.run(
        [str(REPO / "tally"), "sql", "-e", f"SELECT COUNT(*) AS events FROM timeseries_events {bounded_since(since)}"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert re.search(r"\|\s+events \|", r.stdout) and re.search(r"\|\s+[1-9][0-9]* \|", r.stdout), r.stdout[-2000:]
    bad = subprocess.run(
        [str(REPO / "tally"), "sql", "-e", "SELECT nope FROM no_such_table"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 1 and "no_such_table" in bad.stdout


def docs_queries() -> list[tuple[str, str]]:
    """The ```sql blocks of the docs' "Query it with SQL" page, with their first line (a comment
    that says whether it needs streaming)."""
    section = (REPO / "docs" / "sql.md").read_text()
    blocks = re.findall(r"```sql\n(.*?)```", section, re.S)
    return [(b.splitlines()[0], b.strip().rstrip(";")) for b in blocks]


def test_the_sql_page_has_five_example_queries():
    assert len(docs_queries()) == 5


def dead_letter_one(settings) -> None:
    """A record no schema reads, straight to the time-series topic: the writer dead-letters it, so
    the dead-letter query has a row of its own on a stack no other suite has run on."""
    producer = Producer({"bootstrap.servers": f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}", "log_level": 0})
    producer.produce("tally.timeseries.events", key=f"playback/sql-{uuid.uuid4().hex[:8]}", value=b"not avro")
    assert producer.flush(30) == 0


@pytest.mark.parametrize("title,query", docs_queries(), ids=[q[0][3:40] for q in docs_queries()])
def test_a_readme_query_runs_as_written(sql_url, flink_url, jobs, settings, title, query):
    streaming = "streaming" in title
    session = SqlSession(sql_url, {"execution.runtime-mode": "streaming" if streaming else "batch"}, flink_url)
    try:
        if "FROM dead_letters" in query:
            dead_letter_one(settings)
            until("the dead letter in the topic", lambda: session.query(query), timeout=120, every=2)
        if "sched.runq" in query:
            samples = session.query(
                f"SELECT COUNT(*) FROM timeseries_events {bounded_since(minutes_ago(15))} WHERE namespace = 'sched.runq'"
            )
            if samples == [[0]]:
                pytest.skip("no sched.runq samples in 15 minutes: the exporter attributed no run-queue wait here")
        if streaming:  # an unbounded query: its first rows, then it is cancelled
            rows = session.watch(query, until=lambda rows: len(rows) > 0, timeout=120)
        else:
            rows = session.query(query)
        assert rows, f"{title}: no rows"
    finally:
        session.close()
