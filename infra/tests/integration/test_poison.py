"""Poison records never stall a job (issue: a bad record never stalls the pipeline).

A value Elasticsearch refuses for its mapped type is refused at the gateway (400 naming the item),
and the same value produced straight to Kafka is stored in Cassandra, dead-lettered as
INDEX_REJECTED with the original bytes, and indexing goes on: a canary written after it is
searchable within 15 s while the writer job keeps running without a restart. A key Cassandra would
refuse (over 65,535 bytes) is dead-lettered ROW_REJECTED the same way."""

import base64
import time
import uuid

import pytest
import requests
from confluent_kafka import Producer
from kafka_tail import KafkaTail
from support import JobRestarts, avro_values, now_iso, until, write_canary
from tally.jobs import FlinkRest, Jobs

TOPIC = "tally.timeseries.events"
WRITER = "tally-timeseries-writer"
# playback maps deviceType as KEYWORD and duration as INTEGER
POISON = {
    "integer-out-of-range": ("duration", b"3000000000"),
    "integer-not-whole": ("duration", b"1.5"),
    "keyword-over-lucene-term-limit": ("deviceType", b"k" * 40_000),
}


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.fixture(scope="module")
def writer(stack, settings):
    Jobs(settings, log=lambda *_: None).ensure_deployed()
    return JobRestarts(settings)


@pytest.mark.parametrize("kind", sorted(POISON))
def test_the_gateway_refuses_a_value_the_index_would_refuse(gw, kind):
    key, raw = POISON[kind]
    for endpoint in ("WriteEventRecordsSync", "WriteEventRecords"):
        event = {
            "timeSeriesId": f"poison-{kind}",
            "eventTime": now_iso(),
            "eventItems": [{"eventItemKey": key, "eventItemValue": b64(raw)}],
        }
        r = requests.post(
            f"{gw}/v1/timeseries/{endpoint}", json={"namespace": "playback", "events": [event]}, timeout=10
        )
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert err["code"] == "INVALID_FIELD_VALUE"
        assert err["field"] == "events[0].eventItems[0].eventItemValue"
        assert key in err["message"]


def test_poison_straight_to_kafka_is_dead_lettered_and_indexing_goes_on(stack, settings, gw, writer):
    restarts_before = writer.counts()
    bootstrap = f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"
    registry = stack.component("registry").url()
    encode = avro_values(registry, TOPIC)
    tail = KafkaTail(bootstrap, registry, ["tally.deadletter"])
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0, "message.max.bytes": 2_000_000})
    run = uuid.uuid4().hex[:8]
    sent = {}
    for kind, (key, raw) in sorted(POISON.items()):
        tsid = f"poison-{run}-{kind}"
        value = encode(
            {
                "namespace": "playback",
                "time_series_id": tsid,
                "event_time": int(time.time() * 1_000_000),
                "event_id": f"p-{kind}",
                "items": [{"key": key, "value": raw}],
                "source": "python",
            },
        )
        sent[tsid] = (kind, value)
        producer.produce(TOPIC, key=f"playback/{tsid}", value=value)
    # ids that make a document id over Elasticsearch's 512 bytes and ids holding '/' are no poison
    long_tsid = f"long-{run}-" + "é" * 240
    for tsid, eid in ((long_tsid, "e" * 200), (f"slash/{run}", "a/b")):
        producer.produce(
            TOPIC,
            key=f"playback/{tsid}",
            value=encode(
                {
                    "namespace": "playback",
                    "time_series_id": tsid,
                    "event_time": int(time.time() * 1_000_000),
                    "event_id": eid,
                    "items": [{"key": "deviceType", "value": f"odd-{run}".encode()}],
                    "source": "python",
                },
            ),
        )
    # a key part over Cassandra's 65,535 bytes: its rows would be refused on every retry
    huge_tsid = f"huge-{run}-" + "x" * 70_000
    huge = encode(
        {
            "namespace": "playback",
            "time_series_id": huge_tsid,
            "event_time": int(time.time() * 1_000_000),
            "event_id": "h1",
            "items": [{"key": "deviceType", "value": b"tv"}],
            "source": "python",
        },
    )
    producer.produce(TOPIC, key=f"playback/huge-{run}", value=huge)
    assert producer.flush(30) == 0

    canary = f"canary-{run}"
    write_canary(requests, gw, canary)
    acked = time.monotonic()

    def search(device: str) -> list:
        r = requests.post(
            f"{gw}/v1/timeseries/SearchEventRecords",
            json={
                "namespace": "playback",
                "timeInterval": {"start": now_iso(-600), "end": now_iso(60)},
                "searchQuery": {"equals": {"eventItemKey": "deviceType", "eventItemValue": b64(device.encode())}},
            },
            timeout=10,
        )
        assert r.status_code == 200, r.text
        return r.json()["events"]

    found = []
    while not found and time.monotonic() - acked < 15:
        found = search(canary)
        time.sleep(0.25)
    assert [e["eventId"] for e in found] == ["c1"], "the canary was not searchable within 15 s of its ack"

    wanted = {value for _, value in sent.values()}

    def rejected() -> dict:
        got = {
            v["original_value"]: v
            for _, _, v in tail.records(1, timeout=5)
            if v["reason"] in ("INDEX_REJECTED", "ROW_REJECTED")
        }
        return got if wanted | {huge} <= set(got) else None

    by_value = until("a dead letter for each poison record", rejected, timeout=60, every=1)
    tail.close()
    assert by_value[huge]["reason"] == "ROW_REJECTED"
    assert "65535" in by_value[huge]["message"] and "time_series_id" in by_value[huge]["message"]
    for tsid, (kind, value) in sent.items():
        assert by_value[value]["reason"] == "INDEX_REJECTED", f"no INDEX_REJECTED dead letter for {tsid}"
        assert by_value[value]["stage"] == "timeseries-writer"
        assert "indexed without" in by_value[value]["message"]
        stored = requests.post(
            f"{gw}/v1/timeseries/ReadEventRecords",
            json={
                "namespace": "playback",
                "timeSeriesId": tsid,
                "timeInterval": {"start": now_iso(-600), "end": now_iso(60)},
            },
            timeout=30,
        )
        assert stored.status_code == 200, stored.text
        assert [e["eventId"] for e in stored.json()["events"]] == [f"p-{kind}"]
    odd = until(
        "the documents with long and slashed ids",
        lambda: len(search(f"odd-{run}")) == 2 and search(f"odd-{run}"),
        timeout=30,
    )
    assert sorted(e["timeSeriesId"] for e in odd) == sorted([long_tsid, f"slash/{run}"])
    restarted = writer.since(restarts_before)
    assert not restarted, restarted
    assert any(j["name"] == WRITER and j["state"] == "RUNNING" for j in FlinkRest(settings).jobs())


def test_an_event_over_kafkas_message_limit_is_413_never_202(gw):
    # 20 items of 60 KB: each item within max.value.bytes, the body within max.body.bytes, the
    # event over Kafka's 1 MiB; answered 202 before, and then lost when the producer refused it
    items = [{"eventItemKey": f"k{i}", "eventItemValue": b64(bytes(60_000))} for i in range(20)]
    for endpoint in ("WriteEventRecords", "WriteEventRecordsSync"):
        r = requests.post(
            f"{gw}/v1/timeseries/{endpoint}",
            json={
                "namespace": "playback",
                "events": [{"timeSeriesId": "big", "eventTime": now_iso(), "eventItems": items}],
            },
            timeout=30,
        )
        assert r.status_code == 413, r.text
        assert r.json()["error"]["code"] == "EVENT_TOO_LARGE"
        assert r.json()["error"]["field"] == "events[0]"
