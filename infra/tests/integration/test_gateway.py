"""The ingestion gateway against the real stack: each request's effect is read back from
Kafka and decoded with a third-party Avro client."""

import base64
import os
import signal
import time
import uuid
from datetime import datetime

import pytest
import requests
from kafka_tail import KafkaTail
from support import free_port
from support import now_iso as _now_iso
from tally import process
from tally.components.base import JAVA
from tally.components.gateway import gateway_jar

TOPICS = ["tally.counter.events", "tally.timeseries.events"]


@pytest.fixture
def tail(stack, settings):
    t = KafkaTail(f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}", stack.component("registry").url(), TOPICS)
    yield t
    t.close()


def micros(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1_000_000)


def post(gw, path, body, **kw):
    return requests.post(f"{gw}{path}", json=body, timeout=30, **kw)


def as_micros(v) -> int:
    return v if isinstance(v, int) else int(v.timestamp() * 1_000_000)


# ---- happy paths, checked field by field in Kafka ------------------------------------------


def test_write_event_records_sync_lands_in_kafka_field_by_field(gw, tail):
    tsid, t = f"profile-{uuid.uuid4().hex[:8]}", now_iso()
    body = {
        "namespace": "playback",
        "events": [
            {
                "timeSeriesId": tsid,
                "eventTime": t,
                "eventId": "ev-1",
                "eventItems": [
                    {"eventItemKey": "deviceType", "eventItemValue": base64.b64encode(b"ios").decode()},
                    {"eventItemKey": "deviceMetadata", "eventItemValue": base64.b64encode(bytes(range(256))).decode()},
                ],
            },
            {"timeSeriesId": tsid, "eventTime": t, "eventItems": []},
        ],
    }
    r = post(gw, "/v1/timeseries/WriteEventRecordsSync", body)
    assert r.status_code == 200, r.text
    reply = r.json()
    assert reply["accepted"] == 2 and reply["generatedEventIds"] == [1] and reply["eventIds"][0] == "ev-1"
    records = tail.records(2)
    assert len(records) == 2
    by_id = {v["event_id"]: (topic, key, v) for topic, key, v in records}
    topic, key, v = by_id["ev-1"]
    assert (topic, key) == ("tally.timeseries.events", f"playback/{tsid}")
    assert v["namespace"] == "playback" and v["time_series_id"] == tsid and v["source"] == "gateway"
    assert as_micros(v["event_time"]) == micros(t)
    assert [(i["key"], i["value"]) for i in v["items"]] == [
        ("deviceType", b"ios"),
        ("deviceMetadata", bytes(range(256))),
    ]
    assert reply["eventIds"][1] in by_id and by_id[reply["eventIds"][1]][2]["items"] == []


def test_write_event_records_is_fire_and_forget(gw, tail):
    tsid = f"p-{uuid.uuid4().hex[:8]}"
    r = post(
        gw,
        "/v1/timeseries/WriteEventRecords",
        {
            "namespace": "playback",
            "events": [{"timeSeriesId": tsid, "eventTime": now_iso(), "eventId": "a", "eventItems": []}],
        },
    )
    assert r.status_code == 202 and r.json() == {"accepted": 1}
    [(_, key, v)] = tail.records(1)
    assert key == f"playback/{tsid}" and v["event_id"] == "a"


def test_add_count_and_clear_count(gw, tail):
    counter, t = f"c-{uuid.uuid4().hex[:8]}", now_iso()
    r = post(
        gw,
        "/v1/counter/AddCount",
        {
            "namespace": "video_views",
            "counter_name": counter,
            "delta": 5,
            "idempotency_token": {"token": "tok-1", "generation_time": t},
        },
    )
    assert r.status_code == 200, r.text  # durable type: answered after Kafka's ack
    r = post(
        gw,
        "/v1/counter/ClearCount",
        {
            "namespace": "video_views",
            "counter_name": counter,
            "idempotency_token": {"token": "tok-2", "generation_time": t},
        },
    )
    assert r.status_code == 200, r.text
    r = post(gw, "/v1/counter/AddCount", {"namespace": "page_hits", "counter_name": counter, "delta": 1})
    assert r.status_code == 202 and len(r.json()["eventIds"]) == 1  # BEST_EFFORT: no token, accepted
    got = {(v["namespace"], v["op"]): (topic, key, v) for topic, key, v in tail.records(3)}
    topic, key, add = got[("video_views", "ADD")]
    assert (topic, key) == ("tally.counter.events", f"video_views/{counter}")
    assert (add["counter"], add["delta"], add["event_id"], add["source"]) == (counter, 5, "tok-1", "gateway")
    assert as_micros(add["event_time"]) == micros(t)
    clear = got[("video_views", "CLEAR")][2]
    assert (clear["delta"], clear["event_id"]) == (0, "tok-2")
    assert got[("page_hits", "ADD")][2]["delta"] == 1


def test_a_retry_with_the_same_token_and_payload_is_accepted_again(gw, tail):
    body = {
        "namespace": "ad_clicks",
        "counter_name": f"c-{uuid.uuid4().hex[:6]}",
        "delta": 2,
        "idempotency_token": {"token": "retry-me", "generation_time": now_iso()},
    }
    assert post(gw, "/v1/counter/AddCount", body).status_code == 200
    assert post(gw, "/v1/counter/AddCount", body).status_code == 200
    recs = tail.records(2)
    # Both copies carry the same idempotency key: logically one event (Flink dedups).
    keys = {(v["namespace"], v["counter"], as_micros(v["event_time"]), v["event_id"]) for _, _, v in recs}
    assert len(recs) == 2 and len(keys) == 1


# ---- bad input: status, code, field, and nothing in Kafka --------------------------------------


def test_every_bad_input_is_rejected_and_writes_nothing(gw, tail):
    t = now_iso()
    ok_event = {"timeSeriesId": "x", "eventTime": t, "eventItems": []}
    token = {"token": f"reuse-{uuid.uuid4().hex[:6]}", "generation_time": t}
    assert (
        post(
            gw,
            "/v1/counter/AddCount",
            {"namespace": "video_views", "counter_name": "r", "delta": 1, "idempotency_token": token},
        ).status_code
        == 200
    )
    assert len(tail.records(1)) == 1
    tail.reset()
    big = base64.b64encode(b"x" * 70_000).decode()
    cases = [
        (
            dict(data=b'{"namespace": "playback", "events": [', headers={"Content-Type": "application/json"}),
            400,
            "MALFORMED_JSON",
            None,
        ),
        (dict(json={"namespace": "playback", "events": "nope"}), 400, "INVALID_FIELD", "events"),
        (
            dict(json={"namespace": "video_views", "counter_name": "r", "delta": "2", "idempotency_token": token}),
            400,
            "INVALID_FIELD",
            "delta",
        ),
        (
            dict(data=b"namespace=playback", headers={"Content-Type": "application/x-www-form-urlencoded"}),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            None,
        ),
        (dict(json={"namespace": "nope", "events": [ok_event]}), 404, "UNKNOWN_NAMESPACE", "namespace"),
        (dict(json={"namespace": "ns_x;DROP KEYSPACE", "events": [ok_event]}), 400, "INVALID_NAME", "namespace"),
        (
            dict(json={"namespace": "playback", "events": [dict(ok_event, eventTime="2001-01-01T00:00:00Z")]}),
            400,
            "OUTSIDE_ACCEPT_WINDOW",
            "events[0].eventTime",
        ),
        (
            dict(json={"namespace": "playback", "events": [dict(ok_event, eventTime=now_iso(3600))]}),
            400,
            "OUTSIDE_ACCEPT_WINDOW",
            "events[0].eventTime",
        ),
        (
            dict(
                json={
                    "namespace": "playback",
                    "events": [dict(ok_event, eventItems=[{"eventItemKey": "k", "eventItemValue": "%%%"}])],
                }
            ),
            400,
            "INVALID_BASE64",
            "events[0].eventItems[0].eventItemValue",
        ),
        (
            dict(
                json={
                    "namespace": "playback",
                    "events": [dict(ok_event, eventItems=[{"eventItemKey": "k", "eventItemValue": big}])],
                }
            ),
            413,
            "VALUE_TOO_LARGE",
            "events[0].eventItems[0].eventItemValue",
        ),
        (dict(json={"namespace": "playback", "events": [ok_event] * 1001}), 413, "TOO_MANY_EVENTS", "events"),
        (
            dict(
                json={
                    "namespace": "playback",
                    "events": [
                        dict(ok_event, eventItems=[{"eventItemKey": f"k{i}", "eventItemValue": ""} for i in range(65)])
                    ],
                }
            ),
            413,
            "TOO_MANY_ITEMS",
            "events[0].eventItems",
        ),
        (
            dict(data=b"{" + b" " * (5 * 1024 * 1024) + b"}", headers={"Content-Type": "application/json"}),
            413,
            "BODY_TOO_LARGE",
            None,
        ),
        (
            dict(json={"namespace": "video_views", "counter_name": "r", "delta": 1}),
            400,
            "IDEMPOTENCY_TOKEN_REQUIRED",
            "idempotency_token",
        ),
        (
            dict(json={"namespace": "video_views", "counter_name": "r", "delta": 99, "idempotency_token": token}),
            409,
            "IDEMPOTENCY_KEY_REUSE",
            "idempotency_token.token",
        ),
        (
            dict(
                json={
                    "namespace": "playback",
                    "events": [
                        dict(ok_event, eventId="dup"),
                        dict(ok_event, eventId="dup", eventItems=[{"eventItemKey": "k", "eventItemValue": ""}]),
                    ],
                }
            ),
            409,
            "IDEMPOTENCY_KEY_REUSE",
            "events[1].eventId",
        ),
        (
            dict(json={"namespace": "playback", "events": [{"timeSeriesId": "x", "eventItems": []}]}),
            400,
            "MISSING_FIELD",
            "events[0].eventTime",
        ),
    ]
    for kwargs, status, code, field in cases:
        path = (
            "/v1/counter/AddCount"
            if "counter_name" in kwargs.get("json", {})
            else "/v1/timeseries/WriteEventRecordsSync"
        )
        r = requests.post(f"{gw}{path}", timeout=30, **kwargs)
        assert r.status_code == status, (code, r.text[:300])
        err = r.json()["error"]
        assert err["code"] == code and err["message"], err
        assert err.get("field") == field, err
        assert "Exception" not in r.text and "\tat " not in r.text  # never a stack trace
    time.sleep(1)
    assert tail.new_count() == 0, "a rejected request reached Kafka"


def test_unknown_endpoint_and_method_are_json_errors(gw):
    r = requests.get(f"{gw}/v1/nope", timeout=10)
    assert r.status_code == 404 and r.json()["error"]["code"] == "NOT_FOUND"
    r = requests.get(f"{gw}/v1/counter/AddCount", timeout=10)
    assert r.status_code == 405


def test_metrics_and_health(gw):
    text = requests.get(f"{gw}/metrics", timeout=10).text
    for name in (
        "tally_gateway_requests_total",
        "tally_gateway_request_seconds",
        "tally_produce_seconds",
        "jvm_memory_used_bytes",
    ):
        assert name in text
    assert requests.get(f"{gw}/healthz", timeout=10).json()["status"] == "UP"


# ---- faults: broker down, back-pressure, graceful shutdown --------------------------------------


def second_gateway(settings, stack, tmp_path, **env):
    port = free_port()
    e = {**os.environ, **stack.component("gateway").service_env(), "TALLY_GATEWAY_PORT": str(port), **env}
    ref = process.spawn([JAVA, "-Xmx256m", "-jar", str(gateway_jar())], tmp_path / f"gateway-{port}.log", env=e)
    url = f"http://{settings.host}:{port}"
    process.wait_until(
        "second gateway",
        lambda: requests.get(f"{url}/healthz", timeout=2).status_code == 200,
        60,
        lambda: process.alive(ref),
    )
    return ref, url


def test_a_full_producer_buffer_answers_429_and_memory_stays_bounded(stack, settings, tmp_path):
    import concurrent.futures

    ref, url = second_gateway(settings, stack, tmp_path, TALLY_GATEWAY_PRODUCER_BUFFER_BYTES="262144")
    item = {"eventItemKey": "v", "eventItemValue": base64.b64encode(os.urandom(2000)).decode()}  # lz4 cannot shrink it

    def one(i):
        # bench_ts has a two-day accept window: a request that queues for seconds on this loaded
        # machine is still judged on back-pressure, not on its event time
        r = post(
            url,
            "/v1/timeseries/WriteEventRecords",
            {
                "namespace": "bench_ts",
                "events": [
                    {"timeSeriesId": f"bp-{i}-{j}", "eventTime": now_iso(), "eventItems": [item] * 10}
                    for j in range(10)
                ],
            },
        )
        return r.status_code, r.headers.get("Retry-After"), r.json()

    try:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            results = list(pool.map(one, range(160)))
        codes = [c for c, _, _ in results]
        assert set(codes) <= {202, 429}, [body for c, _, body in results if c not in (202, 429)][:1]
        assert 429 in codes and 202 in codes
        for code, retry_after, body in results:
            if code == 429:
                assert retry_after == "1" and body["error"]["code"] == "BACKPRESSURE"
        assert process.rss_bytes(ref) < 600 * 2**20
    finally:
        process.stop(ref, timeout=20)


@pytest.mark.disruptive
def test_broker_outage_sync_writes_fail_cleanly_and_recover(gw, stack, settings, tail, wait_healthy):
    kafka = stack.component("kafka")
    accepted_async = []
    try:
        stack.stop(kafka)
        deadline = time.monotonic() + 15
        while requests.get(f"{gw}/healthz", timeout=5).status_code != 503 and time.monotonic() < deadline:
            time.sleep(0.5)
        health = requests.get(f"{gw}/healthz", timeout=5)
        assert health.status_code == 503 and health.json()["kafka"] == "DOWN"
        t0 = time.monotonic()
        r = post(
            gw,
            "/v1/timeseries/WriteEventRecordsSync",
            {
                "namespace": "playback",
                "events": [{"timeSeriesId": "outage", "eventTime": now_iso(), "eventId": "o-1", "eventItems": []}],
            },
        )
        assert r.status_code == 503 and r.json()["error"]["code"] == "KAFKA_UNAVAILABLE"
        assert r.headers["Retry-After"] == "1"
        assert time.monotonic() - t0 < 10, "sync writes must fail within a bounded wait"
        counter = post(
            gw,
            "/v1/counter/AddCount",
            {
                "namespace": "video_views",
                "counter_name": "o",
                "delta": 1,
                "idempotency_token": {"token": "o-1", "generation_time": now_iso()},
            },
        )
        assert counter.status_code == 503, "a durable AddCount is never acknowledged without Kafka's ack"
        # Fire-and-forget: either accepted into the bounded buffer (202) or refused (503), never lost silently.
        for i in range(5):
            r = post(
                gw,
                "/v1/timeseries/WriteEventRecords",
                {
                    "namespace": "playback",
                    "events": [
                        {"timeSeriesId": "outage-async", "eventTime": now_iso(), "eventId": f"a{i}", "eventItems": []}
                    ],
                },
            )
            assert r.status_code in (202, 503), r.text
            if r.status_code == 202:
                accepted_async.append(f"a{i}")
    finally:
        if not stack.running(kafka):
            stack.start(kafka)
    deadline = time.monotonic() + 30
    while requests.get(f"{gw}/healthz", timeout=5).status_code != 200 and time.monotonic() < deadline:
        time.sleep(0.5)
    r = post(
        gw,
        "/v1/timeseries/WriteEventRecordsSync",
        {
            "namespace": "playback",
            "events": [{"timeSeriesId": "outage", "eventTime": now_iso(), "eventId": "o-1", "eventItems": []}],
        },
    )
    assert r.status_code == 200, r.text  # the client's retry, with the same id, now lands
    landed = {v["event_id"] for _, key, v in tail.records(len(accepted_async) + 1) if key == "playback/outage-async"}
    assert set(accepted_async) <= landed, "a write answered 202 during the outage was lost"
    wait_healthy()


@pytest.mark.disruptive
def test_sigterm_drains_and_loses_no_accepted_write(stack, settings, tmp_path, tail):
    ref, url = second_gateway(settings, stack, tmp_path)
    tsid = f"drain-{uuid.uuid4().hex[:6]}"
    accepted = 0
    for i in range(200):
        r = post(
            url,
            "/v1/timeseries/WriteEventRecords",
            {
                "namespace": "playback",
                "events": [{"timeSeriesId": tsid, "eventTime": now_iso(), "eventId": f"d{i}", "eventItems": []}],
            },
        )
        assert r.status_code == 202
        accepted += 1
    os.kill(ref.pid, signal.SIGTERM)
    process.wait_until("gateway exit", lambda: not process.alive(ref), 30, lambda: True)
    recs = [v for _, key, v in tail.records(accepted) if key == f"playback/{tsid}"]
    assert sorted(v["event_id"] for v in recs) == sorted(f"d{i}" for i in range(accepted))
    assert "gateway stopped" in (tmp_path / f"gateway-{url.rsplit(':', 1)[1]}.log").read_text()


def now_iso(offset_s: float = 0) -> str:
    return _now_iso(offset_s, "milliseconds")  # the article's examples carry milliseconds
