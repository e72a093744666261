"""TimeSeries end to end on the real stack: gateway or a direct Avro producer -> Kafka ->
Flink TimeSeriesWriterJob -> Cassandra slice tables; undecodable and unknown events ->
tally.deadletter with a reason."""

import base64
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import requests
from cassandra.cluster import Cluster
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from kafka_tail import KafkaTail
from support import admin_headers, avro_values, now_iso, timeseries_config, until
from tally.gateway_metrics import read_cache_counts
from tally.jobs import Jobs

DAY_US, HOUR_US = 86_400_000_000, 3_600_000_000  # playback: daily slices, hourly buckets, 4 event buckets


@pytest.fixture(scope="module")
def writer_running(stack, settings):
    jobs = Jobs(settings, log=lambda *_: None)
    jobs.ensure_deployed()
    return jobs


@pytest.fixture(scope="module")
def backdating(stack, cql):
    """A namespace whose accept_limit spans 3 days, for events a direct producer writes hours and
    days back (the topic carries the broker's clock, so playback's 5 s window would refuse them)."""
    name = f"it_backdate_{uuid.uuid4().hex[:6]}"
    gw = stack.component("gateway").url()
    admin = admin_headers()
    made = requests.put(
        f"{gw}/v1/namespaces/{name}",
        json=timeseries_config(accept="259200s", retention=("518400s", "604800s")),
        headers=admin,
        timeout=10,
    )
    assert made.status_code == 201, made.text
    until(
        "the namespace's first slices",
        lambda: list(cql.execute("SELECT table_name FROM tally_meta.slices WHERE namespace = %s", (name,))),
        180,
        0.5,
    )
    yield name
    requests.delete(f"{gw}/v1/namespaces/{name}", headers=admin, timeout=10)


def micros(iso: str) -> int:
    d = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return (int(d.timestamp()) * 1_000_000) + d.microsecond


def stored(cql, tsid: str, event_time_us: int, keyspace: str = "ns_playback") -> list:
    """Every row of tsid in the time bucket of event_time_us, over all event buckets; none while
    its day's table is not made yet (the lifecycle makes the current and the next day's ahead; an
    earlier day's, the writer with its first row)."""
    day = datetime.fromtimestamp(event_time_us // 1_000_000, UTC).strftime("%Y%m%d")
    bucket = (event_time_us % DAY_US) // HOUR_US
    try:
        return list(
            cql.execute(
                f"SELECT * FROM {keyspace}.events_{day} WHERE time_series_id = %s AND time_bucket = %s "
                "AND event_bucket IN (0, 1, 2, 3)",
                (tsid, bucket),
            )
        )
    except Exception as e:  # the keyspace or table does not exist until the job's first write
        if "does not exist" in str(e) or "unconfigured table" in str(e):
            return []
        raise


def wait_rows(cql, tsid, event_time_us, expected, timeout=60):
    deadline = time.monotonic() + timeout
    rows = []
    while time.monotonic() < deadline:
        rows = stored(cql, tsid, event_time_us)
        if len(rows) >= expected:
            time.sleep(1)  # and nothing more arrives
            return stored(cql, tsid, event_time_us)
        time.sleep(0.5)
    return rows


def wait_keys(cql, tsid, times_us, expected: int | set[str], timeout=120):
    """Distinct (event_time, event_id, item key) rows of tsid over the time buckets of times_us,
    polled until `expected` of them are there, or, given a set of event ids, until each of those
    is (or the timeout), plus the raw row count. A set where other events may be stored too
    (abandoned batches): a count would be reached by those while one of the set is still on its way."""
    buckets = sorted({t - t % HOUR_US for t in times_us})
    deadline = time.monotonic() + timeout
    while True:
        rows = [r for b in buckets for r in stored(cql, tsid, b)]
        keys = {(r.event_time, r.event_id, r.event_item_key) for r in rows}
        if isinstance(expected, set):
            done = expected <= {k[1] for k in keys}
        else:
            done = len(keys) >= expected
        if done or time.monotonic() > deadline:
            return keys, len(rows)
        time.sleep(0.5)


def write_sync(gw, events):
    r = requests.post(
        f"{gw}/v1/timeseries/WriteEventRecordsSync", json={"namespace": "playback", "events": events}, timeout=30
    )
    assert r.status_code == 200, r.text
    return r.json()


def test_gateway_events_are_stored_once_per_idempotency_key(stack, cql, writer_running):
    gw = stack.component("gateway").url()
    tsid, t = f"ts-{uuid.uuid4().hex[:8]}", now_iso()
    events = [
        {
            "timeSeriesId": tsid,
            "eventTime": t,
            "eventId": f"e{i}",
            "eventItems": [
                {"eventItemKey": "deviceType", "eventItemValue": base64.b64encode(f"dev{i}".encode()).decode()},
                {"eventItemKey": "duration", "eventItemValue": base64.b64encode(str(i).encode()).decode()},
            ],
        }
        for i in range(20)
    ]
    events.append({"timeSeriesId": tsid, "eventTime": t, "eventId": "bare", "eventItems": []})
    write_sync(gw, events)
    write_sync(gw, events)  # a retry of the whole batch: identical upserts
    rows = wait_rows(cql, tsid, micros(t), 41)
    keys = [(r.event_time, r.event_id, r.event_item_key) for r in rows]
    assert len(keys) == 41 and len(set(keys)) == 41
    by = {(r.event_id, r.event_item_key): r for r in rows}
    assert by[("e7", "deviceType")].event_item_value == b"dev7"
    assert by[("e7", "duration")].event_item_value == b"7"
    assert by[("bare", "")].event_item_value == b""
    assert all(r.event_time == micros(t) for r in rows)
    # Elasticsearch: one document per event (id = idempotency key) behind the alias, typed fields
    es = stack.component("elasticsearch").url()
    deadline, hits = time.monotonic() + 60, []
    while time.monotonic() < deadline:
        requests.post(f"{es}/tally-playback/_refresh", timeout=10)
        r = requests.post(
            f"{es}/tally-playback/_search", json={"size": 100, "query": {"term": {"time_series_id": tsid}}}, timeout=10
        )
        hits = r.json().get("hits", {}).get("hits", []) if r.ok else []
        if len(hits) >= 21:
            break
        time.sleep(0.5)
    assert len(hits) == 21, "retried events are indexed once"
    doc = next(h for h in hits if h["_source"]["event_id"] == "e7")
    assert doc["_id"] == f"{tsid}/{micros(t)}/e7"
    assert doc["_source"]["deviceType"] == "dev7" and doc["_source"]["duration"] == 7
    assert doc["_index"].startswith("tally-playback-")
    found = requests.post(
        f"{es}/tally-playback/_search",
        json={
            "query": {"bool": {"filter": [{"term": {"time_series_id": tsid}}, {"range": {"duration": {"gte": 15}}}]}}
        },
        timeout=10,
    ).json()
    assert sorted(h["_source"]["event_id"] for h in found["hits"]["hits"]) == [f"e{i}" for i in range(15, 20)]
    slices = list(cql.execute("SELECT table_name, status FROM tally_meta.slices WHERE namespace = 'playback'"))
    day = datetime.fromtimestamp(micros(t) // 1_000_000, UTC).strftime("%Y%m%d")
    assert (f"events_{day}", "OPEN") in [(s.table_name, s.status) for s in slices]


def test_a_direct_avro_producer_is_stored_and_bad_records_are_dead_lettered(stack, settings, cql, writer_running):
    bootstrap = f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"
    registry = stack.component("registry").url()
    client = SchemaRegistryClient({"url": registry})
    schema = client.get_latest_version("tally.timeseries.events-value").schema.schema_str
    ser = AvroSerializer(client, schema, conf={"auto.register.schemas": False, "use.latest.version": True})
    tail = KafkaTail(bootstrap, registry, ["tally.deadletter"])
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    tsid, now_us = f"direct-{uuid.uuid4().hex[:6]}", micros(now_iso())
    ctx = SerializationContext("tally.timeseries.events", MessageField.VALUE)

    def event(ns, eid):
        return {
            "namespace": ns,
            "time_series_id": tsid,
            "event_time": now_us,
            "event_id": eid,
            "items": [{"key": "k", "value": b"\x00\x01"}],
            "source": "python",
        }

    producer.produce("tally.timeseries.events", key=f"playback/{tsid}", value=ser(event("playback", "py-1"), ctx))
    producer.produce("tally.timeseries.events", key=f"ghost/{tsid}", value=ser(event("ghost", "py-2"), ctx))
    producer.produce("tally.timeseries.events", key=f"playback/{tsid}", value=b"\x07not avro at all")
    assert producer.flush(30) == 0
    rows = wait_rows(cql, tsid, now_us, 1)
    assert [(r.event_id, r.event_item_key, r.event_item_value) for r in rows] == [("py-1", "k", b"\x00\x01")]
    want = {"UNKNOWN_NAMESPACE", "UNDECODABLE"}
    recs = tail.records_until(lambda rs: {v["reason"] for _, _, v in rs} >= want, timeout=120)
    dead = {v["reason"]: v for _, _, v in recs if v["reason"] in want}
    tail.close()
    assert set(dead) == {"UNKNOWN_NAMESPACE", "UNDECODABLE"}
    assert dead["UNDECODABLE"]["original_value"] == b"\x07not avro at all"
    assert "magic byte 0x07" in dead["UNDECODABLE"]["message"]
    assert dead["UNKNOWN_NAMESPACE"]["topic"] == "tally.timeseries.events"
    assert dead["UNKNOWN_NAMESPACE"]["stage"] == "timeseries-writer"


def test_a_page_behind_the_stored_horizon_is_served_from_memory_and_the_past_stays_closed(
    stack, settings, writer_running
):
    """Once the writer has stored every record appended before T (its committed offsets), nothing
    older than T less playback's accept_limit (5 s) and the store grace (30 s) can be stored any
    more: the topic carries the broker's clock, so even a direct producer's event for that past is
    dead-lettered. A page of that past is then served again from the gateway's memory (its
    read-cache metric counts the hits), page for page what Cassandra gave, and stays right after
    the late event."""
    gw = stack.component("gateway").url()
    bootstrap = f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"
    registry = stack.component("registry").url()
    tsid, now_us = f"closed-{uuid.uuid4().hex[:8]}", micros(now_iso())
    events = [
        {
            "timeSeriesId": tsid,
            "eventTime": datetime.fromtimestamp((now_us - 2_000_000 + n * 1000) / 1e6, UTC)
            .isoformat(timespec="microseconds")
            .replace("+00:00", "Z"),
            "eventId": f"c{n:02d}",
            "eventItems": [{"eventItemKey": "n", "eventItemValue": base64.b64encode(str(n).encode()).decode()}],
        }
        for n in range(20)
    ]
    r = requests.post(
        f"{gw}/v1/timeseries/WriteEventRecordsSync", json={"namespace": "playback", "events": events}, timeout=30
    )
    assert r.status_code == 200, r.text
    expected = [f"c{n:02d}" for n in reversed(range(20))]
    query = {
        "namespace": "playback",
        "timeSeriesId": tsid,
        "timeInterval": {"start": now_iso(-60), "end": now_iso(1)},
        "pageSize": 7,
    }

    def pages() -> list[list[str]]:
        out, body = [], dict(query)
        while True:
            got = requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=body, timeout=30)
            assert got.status_code == 200, got.text
            out.append([e["eventId"] for e in got.json()["events"]])
            if not got.json().get("nextPageToken"):
                return out
            body["pageToken"] = got.json()["nextPageToken"]

    until("every event stored", lambda: [i for p in pages() for i in p] == expected, 60, 0.5)
    first = pages()
    # the range ends 1 s after the writes: final once the writer has passed it by 5 s + 30 s (+ 2 s skew)
    before = read_cache_counts(gw)
    until(
        "the pages served from memory",
        lambda: pages() == first and read_cache_counts(gw)["hit"] >= before["hit"] + len(first),
        120,
        1,
    )
    # a direct producer's event for that past: the broker stamps it now, so it is out of its window
    tail = KafkaTail(bootstrap, registry, ["tally.deadletter"])
    encode = avro_values(registry, "tally.timeseries.events")
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    late = {
        "namespace": "playback",
        "time_series_id": tsid,
        "event_time": now_us - 1_000_000,
        "event_id": "late-1",
        "items": [],
        "source": "python",
    }
    producer.produce("tally.timeseries.events", key=f"playback/{tsid}", value=encode(late))
    assert producer.flush(30) == 0
    recs = tail.records_until(
        lambda rs: any(
            v["reason"] == "OUTSIDE_ACCEPT_WINDOW" and tsid.encode() in v["original_value"] for _, _, v in rs
        ),
        timeout=60,
    )
    tail.close()
    assert any(v["reason"] == "OUTSIDE_ACCEPT_WINDOW" and tsid.encode() in v["original_value"] for _, _, v in recs)
    assert pages() == first
    # the same interval asked with another page size is another page: read from Cassandra, and equal
    whole = requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json={**query, "pageSize": 100}, timeout=30)
    assert [e["eventId"] for e in whole.json()["events"]] == expected


@pytest.mark.disruptive
def test_stop_with_savepoint_and_resume_store_everything_once(stack, cql, writer_running):
    gw = stack.component("gateway").url()
    tsid, t = f"sp-{uuid.uuid4().hex[:8]}", now_iso()
    before = [{"timeSeriesId": tsid, "eventTime": t, "eventId": f"a{i}", "eventItems": []} for i in range(30)]
    write_sync(gw, before)
    path = writer_running.stop_with_savepoint("tally-timeseries-writer")
    assert path.startswith("file:")
    t2 = now_iso()
    during = [{"timeSeriesId": tsid, "eventTime": t2, "eventId": f"b{i}", "eventItems": []} for i in range(30)]
    write_sync(gw, during)  # written while the job is stopped: picked up after the resume
    writer_running.resume("tally-timeseries-writer")
    # a batch and its retry after the resume (a retry of the first batch could be behind the
    # 5 s accept window by now: the gateway rightly refuses it)
    t3 = now_iso()
    after = [{"timeSeriesId": tsid, "eventTime": t3, "eventId": f"c{i}", "eventItems": []} for i in range(30)]
    write_sync(gw, after)
    write_sync(gw, after)
    keys, n_rows = wait_keys(cql, tsid, [micros(t), micros(t2), micros(t3)], 90)
    assert sorted(k[1] for k in keys) == sorted([f"{p}{i}" for p in "abc" for i in range(30)])
    assert n_rows == 90, "every idempotency key is one row"


@pytest.mark.disruptive
def test_a_killed_taskmanager_loses_and_duplicates_nothing(stack, settings, cql, writer_running, wait_healthy):
    import os
    import signal

    from tally import process

    gw = stack.component("gateway").url()
    tsid = f"kill-{uuid.uuid4().hex[:8]}"
    batches = []
    for n in range(3):
        t = now_iso()
        write_sync(
            gw, [{"timeSeriesId": tsid, "eventTime": t, "eventId": f"k{n}-{i}", "eventItems": []} for i in range(50)]
        )
        batches.append(t)
    tm = stack.component("flink-taskmanager")
    ref = stack.state.ref(tm.name)
    os.kill(ref.pid, signal.SIGKILL)
    process.wait_until("taskmanager killed", lambda: not process.alive(ref), 10, lambda: True)
    for n in range(3, 6):  # the stream goes on while the TaskManager is dead
        t = now_iso()
        write_sync(
            gw, [{"timeSeriesId": tsid, "eventTime": t, "eventId": f"k{n}-{i}", "eventItems": []} for i in range(50)]
        )
        batches.append(t)
    stack.up()  # restarts the crashed TaskManager; the job recovers from its last checkpoint
    wait_healthy()
    keys, n_rows = wait_keys(cql, tsid, [micros(t) for t in batches], 300)
    assert len(keys) == 300, f"{len(keys)} of 300 events stored"
    assert n_rows == 300, "every idempotency key is one row"


def test_read_event_records_newest_first_across_buckets_and_slices_with_pages(
    stack, settings, cql, writer_running, backdating
):
    gw = stack.component("gateway").url()
    bootstrap = f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"
    client = SchemaRegistryClient({"url": stack.component("registry").url()})
    schema = client.get_latest_version("tally.timeseries.events-value").schema.schema_str
    ser = AvroSerializer(client, schema, conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext("tally.timeseries.events", MessageField.VALUE)
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    tsid, now_us = f"read-{uuid.uuid4().hex[:8]}", micros(now_iso())
    # event times in this hour, earlier hours (other time buckets) and earlier days (other slices);
    # a direct producer into a namespace whose accept_limit spans days: the topic carries the
    # broker's clock, so its window (3 days here) is what lets these times in
    offsets_s = [0, 1, 1, 30, 2 * 3600, 2 * 3600 + 5, 26 * 3600, 50 * 3600, 50 * 3600 + 1]
    written = []
    for n, back in enumerate(offsets_s):
        t = now_us - back * 1_000_000 - n  # distinct microseconds; the two at "1 s ago" differ by 1 us
        eid = f"r{n}"
        items = [{"key": "deviceType", "value": (b"ios" if n % 2 else b"tv")}, {"key": "n", "value": str(n).encode()}]
        producer.produce(
            "tally.timeseries.events",
            key=f"{backdating}/{tsid}",
            value=ser(
                {
                    "namespace": backdating,
                    "time_series_id": tsid,
                    "event_time": t,
                    "event_id": eid,
                    "items": items,
                    "source": "python",
                },
                ctx,
            ),
        )
        written.append((t, eid))
    assert producer.flush(30) == 0
    expected = [eid for t, eid in sorted(written, key=lambda x: (-x[0], x[1]))]
    start = datetime.fromtimestamp((now_us - 3 * DAY_US) / 1e6, UTC).isoformat().replace("+00:00", "Z")
    end = datetime.fromtimestamp((now_us + 60_000_000) / 1e6, UTC).isoformat().replace("+00:00", "Z")
    query = {"namespace": backdating, "timeSeriesId": tsid, "timeInterval": {"start": start, "end": end}, "pageSize": 3}

    def read(body):
        r = requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=body, timeout=30)
        assert r.status_code == 200, r.text
        return r.json()

    deadline = time.monotonic() + 60
    while len(read({**query, "pageSize": 100})["events"]) < len(expected) and time.monotonic() < deadline:
        time.sleep(0.5)
    pages, token = [], None
    while True:
        page = read({**query, **({"pageToken": token} if token else {})})
        pages.append([e["eventId"] for e in page["events"]])
        token = page.get("nextPageToken")
        if not token:
            break
    assert [i for p in pages for i in p] == expected, "newest first, across buckets and slices, no gaps or repeats"
    assert all(len(p) == 3 for p in pages[:-1])
    first = read({**query, "pageSize": 1})["events"][0]
    assert first["eventTime"].endswith("Z") and micros(first["eventTime"]) == max(t for t, _ in written)
    assert {i["eventItemKey"] for i in first["eventItems"]} == {"deviceType", "n"}
    filtered = read(
        {
            **query,
            "pageSize": 100,
            "eventFilters": [
                {"matchEventItemKey": "deviceType", "matchEventItemValue": base64.b64encode(b"ios").decode()}
            ],
        }
    )
    assert [e["eventId"] for e in filtered["events"]] == [e for e in expected if int(e[1:]) % 2]
    limited = read({**query, "pageSize": 3, "totalRecordLimit": 4})
    second = read({**query, "pageSize": 3, "totalRecordLimit": 4, "pageToken": limited["nextPageToken"]})
    assert [e["eventId"] for e in limited["events"] + second["events"]] == expected[
        :4
    ] and "nextPageToken" not in second
    tampered = limited["nextPageToken"][:-3] + ("AAA" if not limited["nextPageToken"].endswith("AAA") else "BBB")
    r = requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json={**query, "pageToken": tampered}, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["code"] == "INVALID_PAGE_TOKEN"
    other = {**query, "timeSeriesId": "someone-else", "pageToken": limited["nextPageToken"]}
    r = requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=other, timeout=30)
    assert r.status_code == 400 and r.json()["error"]["code"] == "INVALID_PAGE_TOKEN"
    r = requests.post(
        f"{gw}/v1/timeseries/ReadEventRecords", json={**query, "timeInterval": {"start": end, "end": start}}, timeout=30
    )
    assert r.status_code == 400 and r.json()["error"]["field"] == "timeInterval"


def test_pages_of_an_id_with_hundreds_of_rows_a_partition_match_cassandra_row_for_row(stack, cql, writer_running):
    """A page's first rows come from one query over the time bucket's event buckets, at most a
    page's share a partition; past them each partition goes on with its own query. 1,200 events
    of one id in one time bucket (about 300 a partition, events of one and of six items, three
    at each millisecond) read in pages of 100 and of 1,000 come out as Cassandra holds them: newest
    first, ids ascending at one time, every event once with all its items."""
    gw = stack.component("gateway").url()
    tsid, now_us = f"deep-{uuid.uuid4().hex[:8]}", micros(now_iso())
    base = now_us - 2_000_000  # within the accept window (5 s); 400 ms of events
    written = {}
    for start in range(0, 1200, 300):
        batch = []
        for n in range(start, start + 300):
            t = base + (n // 3) * 1000  # three events at each millisecond
            items = [{"eventItemKey": "n", "eventItemValue": b64(str(n))}]
            if n % 2 == 0:  # six rows: a page's events hold more rows than the shared query takes a partition
                items += [{"eventItemKey": k, "eventItemValue": b64(k * 3)} for k in ("a", "b", "c", "d", "z")]
            iso = datetime.fromtimestamp(t / 1e6, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
            batch.append({"timeSeriesId": tsid, "eventTime": iso, "eventId": f"e{n:04d}", "eventItems": items})
            written[(t, f"e{n:04d}")] = len(items)
        write_sync(gw, batch)
    expected = [eid for (t, eid) in sorted(written, key=lambda k: (-k[0], k[1]))]
    times = [t for t, _ in written]
    keys, _ = wait_keys(cql, tsid, times, sum(written.values()))
    assert len(keys) == sum(written.values())
    interval = {
        "start": datetime.fromtimestamp((min(times) - 1) / 1e6, UTC).isoformat().replace("+00:00", "Z"),
        "end": datetime.fromtimestamp((max(times) + 1_000_000) / 1e6, UTC).isoformat().replace("+00:00", "Z"),
    }
    for size in (100, 1000):
        got = read_in_pages(gw, "playback", tsid, interval, size)
        assert [i for i, _ in got] == expected, f"pages of {size}"
        items = {eid: n for (_, eid), n in written.items()}
        assert all(n == items[i] for i, n in got), f"pages of {size}: every event with all its items"


def read_in_pages(gw: str, namespace: str, tsid: str, interval: dict, size: int) -> list[tuple[str, int]]:
    """Every event of the id in the interval, page after page: (eventId, how many items) each."""
    got, token = [], None
    while True:
        # the default totalRecordLimit stops a read at 1,000 events
        body = {"namespace": namespace, "timeSeriesId": tsid, "timeInterval": interval, "pageSize": size}
        body["totalRecordLimit"] = 10_000
        r = requests.post(
            f"{gw}/v1/timeseries/ReadEventRecords", json={**body, **({"pageToken": token} if token else {})}, timeout=30
        )
        assert r.status_code == 200, r.text
        got += [(e["eventId"], len(e["eventItems"])) for e in r.json()["events"]]
        token = r.json().get("nextPageToken")
        if not token:
            return got


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def test_search_and_aggregate_agree_with_ground_truth(stack, writer_running):
    gw = stack.component("gateway").url()
    run = uuid.uuid4().hex[:6]
    kinds = [f"ios-{run}", f"tv-{run}", f"web-{run}"]
    events = [
        {
            "timeSeriesId": f"s-{run}-{i % 4}",
            "eventTime": now_iso(),
            "eventId": f"q{i}",
            "eventItems": [
                {"eventItemKey": "deviceType", "eventItemValue": base64.b64encode(kinds[i % 3].encode()).decode()},
                {"eventItemKey": "duration", "eventItemValue": base64.b64encode(str(i).encode()).decode()},
            ],
        }
        for i in range(30)
    ]
    write_sync(gw, events)
    truth = {e["eventId"]: (kinds[i % 3], i) for i, e in enumerate(events)}
    b64 = lambda s: base64.b64encode(str(s).encode()).decode()
    interval = {
        "start": (datetime.now(UTC) - timedelta(minutes=5)).isoformat().replace("+00:00", "Z"),
        "end": (datetime.now(UTC) + timedelta(minutes=1)).isoformat().replace("+00:00", "Z"),
    }
    ours = {
        "booleanQuery": {
            "operator": "OR",
            "searchQuery": [{"equals": {"eventItemKey": "deviceType", "eventItemValue": b64(k)}} for k in kinds],
        }
    }

    def call(path, body, status=200):
        r = requests.post(
            f"{gw}/v1/timeseries/{path}", json={"namespace": "playback", "timeInterval": interval, **body}, timeout=30
        )
        assert r.status_code == status, r.text
        return r.json()

    deadline = time.monotonic() + 60
    while (
        len(call("SearchEventRecords", {"searchQuery": ours, "pageSize": 100})["events"]) < 30
        and time.monotonic() < deadline
    ):
        time.sleep(0.5)
    # equals
    got = call(
        "SearchEventRecords",
        {"searchQuery": {"equals": {"eventItemKey": "deviceType", "eventItemValue": b64(kinds[1])}}, "pageSize": 100},
    )
    assert sorted(e["eventId"] for e in got["events"]) == sorted(i for i, (k, _) in truth.items() if k == kinds[1])
    # range AND (ios OR web), paged by 4
    query = {
        "booleanQuery": {
            "operator": "AND",
            "searchQuery": [
                {
                    "range": {
                        "eventItemKey": "duration",
                        "lowerBound": {"eventItemValue": b64(10), "inclusive": True},
                        "upperBound": {"eventItemValue": b64(20)},
                    }
                },
                {
                    "booleanQuery": {
                        "operator": "OR",
                        "searchQuery": [
                            {"equals": {"eventItemKey": "deviceType", "eventItemValue": b64(kinds[0])}},
                            {"equals": {"eventItemKey": "deviceType", "eventItemValue": b64(kinds[2])}},
                        ],
                    }
                },
            ],
        }
    }
    ids, token = [], None
    while True:
        page = call(
            "SearchEventRecords", {"searchQuery": query, "pageSize": 4, **({"pageToken": token} if token else {})}
        )
        ids += [e["eventId"] for e in page["events"]]
        token = page.get("nextPageToken")
        if not token:
            break
    expected = {i for i, (k, n) in truth.items() if 10 <= n < 20 and k in (kinds[0], kinds[2])}
    assert sorted(ids) == sorted(expected) and len(ids) == len(set(ids))
    sample = call("SearchEventRecords", {"searchQuery": query, "pageSize": 1})["events"][0]
    assert {i["eventItemKey"] for i in sample["eventItems"]} == {"deviceType", "duration"}
    # distinct aggregation
    agg = call(
        "AggregateEventRecords",
        {"searchQuery": ours, "aggregationQuery": {"distinct": {"eventItemKey": "deviceType", "pageSize": 10}}},
    )
    counts = {base64.b64decode(v["eventItemValue"]).decode(): v["count"] for v in agg["distinct"]["values"]}
    assert counts == {k: sum(1 for kk, _ in truth.values() if kk == k) for k in kinds}
    assert agg["distinct"]["eventItemKey"] == "deviceType"
    # bad criteria: a clear error naming the field
    bad = call(
        "SearchEventRecords", {"searchQuery": {"equals": {"eventItemKey": "colour", "eventItemValue": b64("red")}}}, 400
    )
    assert bad["error"]["code"] == "UNMAPPED_FIELD" and bad["error"]["field"] == "searchQuery.equals.eventItemKey"
    bad = call(
        "SearchEventRecords",
        {"searchQuery": {"range": {"eventItemKey": "duration", "lowerBound": {"eventItemValue": b64("ten")}}}},
        400,
    )
    assert bad["error"]["field"] == "searchQuery.range.lowerBound.eventItemValue"


def test_retention_closes_slices_and_drops_their_tables_and_indexes(stack, settings, cql, writer_running):
    """A namespace of one-minute slices, closed 5 s and dropped 10 s after they end, made for this
    test and deleted after it: a slice table made and dropped every minute makes Cassandra flush
    every table (a drop recycles the commit log), so no stack keeps such a namespace at rest."""
    name = f"it_retention_{uuid.uuid4().hex[:6]}"
    gw = stack.component("gateway").url()
    admin = admin_headers()
    config = timeseries_config(accept="600s", fields={"k": "KEYWORD"}, partition=(60, 10, 1), retention=("5s", "10s"))
    made = requests.put(f"{gw}/v1/namespaces/{name}", json=config, headers=admin, timeout=10)
    assert made.status_code == 201, made.text
    try:
        check_retention(name, settings, stack, cql)
    finally:
        requests.delete(f"{gw}/v1/namespaces/{name}", headers=admin, timeout=10)


def check_retention(name, settings, stack, cql):
    bootstrap = f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"
    registry = stack.component("registry").url()
    es = stack.component("elasticsearch").url()
    client = SchemaRegistryClient({"url": registry})
    schema = client.get_latest_version("tally.timeseries.events-value").schema.schema_str
    ser = AvroSerializer(client, schema, conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext("tally.timeseries.events", MessageField.VALUE)
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    tail = KafkaTail(bootstrap, registry, ["tally.deadletter"])

    def catalogue():
        return {
            r.table_name: (r.status, r.start_time, r.end_time)
            for r in cql.execute(
                "SELECT table_name, status, start_time, end_time FROM tally_meta.slices WHERE namespace = %s", (name,)
            )
        }

    # the jobs know the namespace once its first slices are made (the provisioner works in order)
    until("the namespace's first slices", catalogue, 180, 0.5)
    now_us = micros(now_iso())

    def event(t_us, eid):
        return ser(
            {
                "namespace": name,
                "time_series_id": "r",
                "event_time": t_us,
                "event_id": eid,
                "items": [{"key": "k", "value": b"v"}],
                "source": "python",
            },
            ctx,
        )

    producer.produce("tally.timeseries.events", key=f"{name}/r", value=event(now_us, "current"))
    # a late event for a slice that ended more than close_after ago: refused
    producer.produce("tally.timeseries.events", key=f"{name}/r", value=event(now_us - 120_000_000, "late"))
    assert producer.flush(30) == 0
    table = "events_" + datetime.fromtimestamp(now_us // 60_000_000 * 60, UTC).strftime("%Y%m%d_%H%M")
    index = f"tally-{name}-" + table[len("events_") :]

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (requests.head(f"{es}/{index}", timeout=5).ok and catalogue().get(table)):
        time.sleep(0.5)
    assert requests.head(f"{es}/{index}", timeout=5).ok, "the slice's index exists while it is open"
    deadline = time.monotonic() + 30
    live = []
    while time.monotonic() < deadline:
        live = sorted((v for v in catalogue().values() if v[0] == "OPEN"), key=lambda v: v[1])
        if len(live) >= 2:
            break
        time.sleep(0.5)
    assert len(live) >= 2, "the next slice is created ahead of need"
    assert all(a[2] == b[1] for a, b in zip(live, live[1:])), "open slices are contiguous"
    seen = []
    deadline = time.monotonic() + 120  # the slice ends within 60 s, closes 5 s later, is dropped 10 s later
    while time.monotonic() < deadline:
        status = catalogue().get(table, ("?",))[0]
        if not seen or seen[-1] != status:
            seen.append(status)
        if status == "DELETED":
            break
        time.sleep(0.5)
    assert seen[-1] == "DELETED" and "CLOSED" in seen, seen
    assert not list(
        cql.execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s AND table_name = %s",
            (f"ns_{name}", table),
        )
    ), "the dropped slice's table is gone"
    assert requests.head(f"{es}/{index}", timeout=5).status_code == 404, "the dropped slice's index is gone"
    recs = tail.records_until(lambda rs: any(v["reason"] == "SLICE_CLOSED" for _, _, v in rs), timeout=60)
    dead = [v for _, _, v in recs if v["reason"] == "SLICE_CLOSED"]
    tail.close()
    assert dead and "is closed" in dead[0]["message"]


@pytest.mark.disruptive
@pytest.mark.parametrize("store", ["cassandra", "elasticsearch"])
def test_a_store_down_for_20s_is_caught_up_with_nothing_lost_or_doubled(
    store, stack, settings, writer_running, wait_healthy
):
    gw = stack.component("gateway").url()
    es = stack.component("elasticsearch").url()
    tsid = f"down-{store}-{uuid.uuid4().hex[:6]}"
    times = []

    def batch(n):
        t = now_iso()
        write_sync(
            gw,
            [
                {
                    "timeSeriesId": tsid,
                    "eventTime": t,
                    "eventId": f"{n}-{i}",
                    "eventItems": [{"eventItemKey": "deviceType", "eventItemValue": base64.b64encode(b"ios").decode()}],
                }
                for i in range(40)
            ],
        )
        times.append(micros(t))

    batch(0)
    component = stack.component(store)
    stack.stop(component)
    try:
        t_end = time.monotonic() + 20
        n = 1
        while time.monotonic() < t_end:  # the stream goes on into Kafka while the store is down
            batch(n)
            n += 1
            time.sleep(4)
    finally:
        stack.up()
    wait_healthy()
    # a session that saw no outage
    cluster = Cluster([settings.host], port=settings.port("TALLY_CASSANDRA_PORT"), **settings.cassandra_connect_args())
    cql = cluster.connect()
    expected = 40 * len(times)
    try:
        keys, n_rows = wait_keys(cql, tsid, times, expected, timeout=180)
    finally:
        cluster.shutdown()
    assert len(keys) == expected and n_rows == expected, f"{len(keys)} keys / {n_rows} rows of {expected}"
    deadline, count = time.monotonic() + 120, 0
    while time.monotonic() < deadline:
        requests.post(f"{es}/tally-playback/_refresh", timeout=10)
        r = requests.post(f"{es}/tally-playback/_count", json={"query": {"term": {"time_series_id": tsid}}}, timeout=10)
        count = r.json().get("count", 0) if r.ok else 0
        if count >= expected:
            break
        time.sleep(1)
    assert count == expected, f"{count} documents of {expected}"


def test_a_read_past_its_deadline_returns_early_with_a_token_and_loses_nothing(
    stack, settings, tmp_path, gw, writer_running, backdating
):
    """A gateway whose read deadline is 1 ms returns after one time bucket each call (the
    TimeSeries article's early return); following the tokens yields every event once, in order."""
    from tally import process
    from test_gateway import second_gateway

    bootstrap = f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"
    encode = avro_values(stack.component("registry").url(), "tally.timeseries.events")
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    tsid, now_us = f"early-{uuid.uuid4().hex[:8]}", micros(now_iso())
    written = []
    for n, back_h in enumerate([0, 0, 2, 5, 5, 9]):  # four hourly time buckets
        t = now_us - back_h * HOUR_US - n
        value = {
            "namespace": backdating,
            "time_series_id": tsid,
            "event_time": t,
            "event_id": f"e{n}",
            "items": [],
            "source": "python",
        }
        producer.produce("tally.timeseries.events", key=f"{backdating}/{tsid}", value=encode(value))
        written.append((t, f"e{n}"))
    assert producer.flush(30) == 0
    expected = [eid for _, eid in sorted(written, key=lambda x: (-x[0], x[1]))]
    whole = {
        "namespace": backdating,
        "timeSeriesId": tsid,
        "timeInterval": {"start": now_iso(-12 * 3600), "end": now_iso(60)},
        "pageSize": 100,
    }
    until(
        "every event stored",
        lambda: (
            [
                e["eventId"]
                for e in requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=whole, timeout=30).json()["events"]
            ]
            == expected
        ),
        timeout=90,
        every=1,
    )
    ref, url = second_gateway(settings, stack, tmp_path, TALLY_GATEWAY_READ_DEADLINE_MS="1")
    try:
        body = {
            "namespace": backdating,
            "timeSeriesId": tsid,
            "timeInterval": {"start": now_iso(-12 * 3600), "end": now_iso(60)},
            "pageSize": 100,
        }
        got, pages = [], 0
        while True:
            r = requests.post(f"{url}/v1/timeseries/ReadEventRecords", json=body, timeout=30)
            assert r.status_code == 200, r.text
            pages += 1
            got += [e["eventId"] for e in r.json()["events"]]
            token = r.json().get("nextPageToken")
            if not token:
                break
            body["pageToken"] = token
            assert pages < 200, "the pages do not progress"
        assert got == expected
        assert pages > 1, "the deadline should have cut the read into pages"
    finally:
        process.stop(ref, timeout=20)


def test_event_buckets_by_time_hold_consecutive_ranges_and_read_newest_first(stack, cql, writer_running):
    """A namespace whose event buckets are by time (time_partition.event_buckets_by: event_time):
    the writer puts each event in the quarter of its hour its time falls in, a retried write is an
    identical upsert in the same partition, and ReadEventRecords, which asks the newest quarter
    first, gives every event once, newest first and ids ascending at one time, in pages of any size."""
    name = f"it_by_time_{uuid.uuid4().hex[:6]}"
    gw = stack.component("gateway").url()
    admin = admin_headers()
    config = timeseries_config(accept="7200s", partition=(86400, 3600, 4))
    config["time_partition"]["event_buckets_by"] = "event_time"
    made = requests.put(f"{gw}/v1/namespaces/{name}", json=config, headers=admin, timeout=10)
    assert made.status_code == 201, made.text
    try:
        got = requests.get(f"{gw}/v1/namespaces/{name}", headers=admin, timeout=10).json()
        assert got["config"]["time_partition"]["event_buckets_by"] == "event_time"
        until(
            "the namespace's first slices",
            lambda: list(cql.execute("SELECT table_name FROM tally_meta.slices WHERE namespace = %s", (name,))),
            180,
            0.5,
        )
        tsid, now_us = f"bytime-{uuid.uuid4().hex[:8]}", micros(now_iso())
        written = {}  # (time, id) -> items
        events = []
        for n in range(240):  # one every 20 s over the last 80 minutes: two or three hours, every quarter
            t = now_us - 5_000_000 - n * 20_000_000
            items = [{"eventItemKey": "deviceType", "eventItemValue": b64("tv")}]
            if n % 5 == 0:
                items.append({"eventItemKey": "n", "eventItemValue": b64(str(n))})
            events.append({"timeSeriesId": tsid, "eventTime": iso_us(t), "eventId": f"e{n:03d}", "items": items})
        tie = now_us - 600_000_000  # three events at one instant: one partition, ids ascending
        for eid in ("t-b", "t-a", "t-c"):
            items = [{"eventItemKey": "deviceType", "eventItemValue": b64("ios")}]
            events.append({"timeSeriesId": tsid, "eventTime": iso_us(tie), "eventId": eid, "items": items})
        for e in events:
            e["eventItems"] = e.pop("items")
            written[(micros(e["eventTime"]), e["eventId"])] = len(e["eventItems"])
        for start in range(0, len(events), 100):
            batch = events[start : start + 100]
            for _ in range(2):  # the retry of an acknowledged write stores nothing twice
                r = requests.post(
                    f"{gw}/v1/timeseries/WriteEventRecordsSync", json={"namespace": name, "events": batch}, timeout=30
                )
                assert r.status_code == 200, r.text
        keyspace = "ns_" + name

        def rows() -> list:
            # a run in the first 80 minutes of a UTC day writes into yesterday's slice too
            return [r for h in sorted({t - t % HOUR_US for t, _ in written}) for r in stored(cql, tsid, h, keyspace)]

        total = sum(written.values())
        held = until("every row stored", lambda: (lambda r: r if len(r) >= total else None)(rows()), 120, 0.5)
        assert len(held) == total, "a retried write is an identical upsert"
        for r in held:  # each row in the quarter of its hour its time falls in
            assert r.time_bucket == (r.event_time % DAY_US) // HOUR_US
            assert r.event_bucket == (r.event_time % HOUR_US) // (HOUR_US // 4), (r.event_time, r.event_bucket)
        assert len({r.event_bucket for r in held}) == 4
        expected = [eid for (t, eid) in sorted(written, key=lambda k: (-k[0], k[1]))]
        interval = {"start": iso_us(now_us - 2 * HOUR_US), "end": iso_us(now_us + 60_000_000)}
        for size in (7, 50, 100, 1000):
            got = read_in_pages(gw, name, tsid, interval, size)
            assert [i for i, _ in got] == expected, f"pages of {size}"
            items = {eid: n for (_, eid), n in written.items()}
            assert all(n == items[i] for i, n in got), f"pages of {size}: every event with all its items"
        ios = {"matchEventItemKey": "deviceType", "matchEventItemValue": b64("ios")}
        body = {"namespace": name, "timeSeriesId": tsid, "timeInterval": interval, "eventFilters": [ios]}
        r = requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=body, timeout=30)
        assert r.status_code == 200, r.text
        assert [e["eventId"] for e in r.json()["events"]] == ["t-a", "t-b", "t-c"], "a filtered read, in order"
    finally:
        requests.delete(f"{gw}/v1/namespaces/{name}", headers=admin, timeout=10)


def iso_us(micros_: int) -> str:
    return datetime.fromtimestamp(micros_ / 1e6, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
