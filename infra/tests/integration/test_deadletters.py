"""./tally deadletters on the real stack: an event for a namespace that does not exist yet is
dead-lettered; once the namespace is created, `replay` stores it (once, even replayed twice)."""

import subprocess
import time
import uuid

import requests
from confluent_kafka import Producer
from support import admin_headers, avro_values, now_iso, until
from tally.settings import REPO

TOPIC = "tally.timeseries.events"


def tally(*args: str) -> str:
    r = subprocess.run([str(REPO / "tally"), *args], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_replay_after_the_cause_is_fixed_stores_the_event_once(stack, settings, gw):
    name = f"it_dl_{uuid.uuid4().hex[:6]}"
    tsid, event_time = f"dl-{uuid.uuid4().hex[:6]}", int(time.time() * 1_000_000)
    bootstrap = f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"
    encode = avro_values(stack.component("registry").url(), TOPIC)
    value = encode(
        {
            "namespace": name,
            "time_series_id": tsid,
            "event_time": event_time,
            "event_id": "e1",
            "items": [{"key": "k", "value": b"v"}],
            "source": "python",
        }
    )
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    producer.produce(TOPIC, key=f"{name}/{tsid}", value=value)
    assert producer.flush(30) == 0

    listed = until(
        "the event's dead letter",
        lambda: (out := tally("deadletters", "list", "--namespace", name)) and "UNKNOWN_NAMESPACE" in out and out,
        timeout=120,
        every=2,
    )
    ref = next(line.split()[0] for line in listed.splitlines() if "UNKNOWN_NAMESPACE" in line)
    shown = tally("deadletters", "show", ref)
    assert tsid in shown and '"reason": "UNKNOWN_NAMESPACE"' in shown

    config = {"kind": "timeseries", "accept_limit": "600s"}
    r = requests.put(f"{gw}/v1/namespaces/{name}", json=config, headers=admin_headers(), timeout=10)
    assert r.status_code == 201, r.text
    try:

        def read() -> list:
            r = requests.post(
                f"{gw}/v1/timeseries/ReadEventRecords",
                json={
                    "namespace": name,
                    "timeSeriesId": tsid,
                    "timeInterval": {"start": now_iso(-900), "end": now_iso(60)},
                },
                timeout=30,
            )
            return r.json().get("events", []) if r.status_code == 200 else []

        assert "would replay" in tally("deadletters", "replay", "--namespace", name, "--dry-run")
        assert read() == [], "a dry run replays nothing"
        for _ in range(2):  # a second replay of the same record stores nothing new
            assert "replayed 1 records" in tally("deadletters", "replay", "--namespace", name, "--ref", ref)
        events = until("the replayed event stored", read, timeout=120, every=1)
        assert [(e["eventId"], e["eventItems"]) for e in events] == [
            ("e1", [{"eventItemKey": "k", "eventItemValue": "dg=="}])
        ]
    finally:
        requests.delete(f"{gw}/v1/namespaces/{name}", headers=admin_headers(), timeout=10)
