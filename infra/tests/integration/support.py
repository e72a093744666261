"""Plain helpers the integration tests share (fixtures live in conftest.py)."""

import os
import signal
import socket
import time
from datetime import UTC, datetime, timedelta

import requests


def iso(t: datetime, timespec: str = "microseconds") -> str:
    """An instant as the gateway's JSON takes it (ISO-8601, UTC, Z)."""
    return t.isoformat(timespec=timespec).replace("+00:00", "Z")


def now_iso(offset_s: float = 0, timespec: str = "microseconds") -> str:
    return iso(datetime.now(UTC) + timedelta(seconds=offset_s), timespec)


def metric(url: str, name: str, **labels) -> float:
    """The sum of a Prometheus text exposition's samples of a labelled series (name{...}) whose
    labels include these."""
    total = 0.0
    for line in requests.get(url, timeout=10).text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def kill_9(stack, *names: str) -> None:
    """`kill -9` of the stack's components by their recorded PIDs; returns once each is gone."""
    from tally import process

    refs = [stack.state.ref(name) for name in names]
    for ref in refs:
        os.kill(ref.pid, signal.SIGKILL)
    for name, ref in zip(names, refs, strict=True):
        process.wait_until(f"{name} killed", lambda ref=ref: not process.alive(ref), 10, lambda: True)


def until(what: str, fn, timeout: float = 30.0, every: float = 0.2):
    """fn's first truthy value within timeout, else an AssertionError naming what was awaited."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout}s (last: {last!r})")


def avro_values(registry_url: str, topic: str):
    """Encodes a dict as the topic's registered value schema (Confluent wire format); the schema
    is looked up, never registered, as Tally's producers do."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient({"url": registry_url})
    schema = client.get_latest_version(f"{topic}-value").schema.schema_str
    ser = AvroSerializer(client, schema, conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext(topic, MessageField.VALUE)
    return lambda record: ser(record, ctx)


def write_canary(session, gw: str, canary: str) -> None:
    """One playback event whose deviceType is the canary's name, written durably (200)."""
    import base64

    r = session.post(
        f"{gw}/v1/timeseries/WriteEventRecordsSync",
        json={
            "namespace": "playback",
            "events": [
                {
                    "timeSeriesId": canary,
                    "eventTime": now_iso(),
                    "eventId": "c1",
                    "eventItems": [
                        {"eventItemKey": "deviceType", "eventItemValue": base64.b64encode(canary.encode()).decode()}
                    ],
                }
            ],
        },
        timeout=30,
    )
    assert r.status_code == 200, r.text


def stored_event_ids(gw: str, time_series_id: str, namespace: str = "playback") -> list[str]:
    """The ids of an id's events of the last ten minutes, newest first, read through a gateway
    ([] while the read fails: a caller waits for what it expects)."""
    import requests

    r = requests.post(
        f"{gw}/v1/timeseries/ReadEventRecords",
        json={
            "namespace": namespace,
            "timeSeriesId": time_series_id,
            "timeInterval": {"start": now_iso(-600), "end": now_iso(60)},
        },
        timeout=10,
    )
    return [e["eventId"] for e in r.json()["events"]] if r.ok else []


def add_counts(gw: str, namespace: str, counter: str, tokens: list[str], delta: int = 1) -> None:
    """One durable AddCount of `delta` per token, each acknowledged (200)."""
    import requests

    for token in tokens:
        r = requests.post(
            f"{gw}/v1/counter/AddCount",
            json={
                "namespace": namespace,
                "counter_name": counter,
                "delta": delta,
                "idempotency_token": {"token": token, "generation_time": now_iso()},
            },
            timeout=30,
        )
        assert r.status_code == 200, r.text


def admin_headers() -> dict[str, str]:
    """The admin token's header, as ./tally up made it (the admin API, Recount, registry writes)."""
    from tally.settings import Settings

    return Settings.load().admin_headers()


def timeseries_config(
    accept: str = "5s",
    fields: dict[str, str] | None = None,
    partition: tuple[int, int, int] = (86400, 3600, 2),
    retention: tuple[str, str] = ("86400s", "172800s"),
) -> dict:
    """A timeseries namespace's config as the admin API takes it: `partition` is (seconds per slice,
    seconds per bucket, buckets per id), `retention` (close_after, delete_after)."""
    slice_s, bucket_s, buckets = partition
    return {
        "kind": "timeseries",
        "time_partition": {"seconds_per_slice": slice_s, "seconds_per_bucket": bucket_s, "buckets_per_id": buckets},
        "accept_limit": accept,
        "retention": {"close_after": retention[0], "delete_after": retention[1]},
        "index": {"enabled": True, "field_mapping": fields or {"deviceType": "KEYWORD"}, "refresh_interval": "1s"},
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cause_chain(trace: str) -> str:
    """A Java stack trace's exception line and its "Caused by" lines: the frames between them
    would fill a short assertion message before the cause shows."""
    lines = trace.splitlines()
    return "\n".join(lines[:1] + [line for line in lines[1:] if line.startswith("Caused by")])[:3000]


class JobRestarts:
    """Restarts of Tally's running Flink jobs, and why they failed, so a test that says "no job
    restarted" names the job and the exception when one did. Read from each job's own state
    timestamps and exception history, not its numRestarts metric: the REST API serves metrics
    from a store it refreshes only when asked, so the first ask in a while answered a count from
    an hour before, and restarts of an earlier test then looked like this test's (`./tally test` of
    2026-11-28 morning: "restarted 2 times" with the root exception of a TaskManager killed at 06:12)."""

    def __init__(self, settings):
        from tally.jobs import FlinkRest

        self.rest = FlinkRest(settings)

    def counts(self) -> dict[str, int]:
        """Each running Tally job's last entry into RESTARTING (ms since the epoch; 0: never)."""
        out = {}
        for j in self.rest.jobs():
            if j["state"] == "RUNNING" and j["name"].startswith("tally-"):
                details = self.rest.call("GET", f"/jobs/{j['jid']}") or {}
                out[j["jid"]] = int((details.get("timestamps") or {}).get("RESTARTING") or 0)
        return out

    def since(self, before: dict[str, int]) -> str:
        """'' when no job restarted since `before`, else each restarted job's name, its failures
        since then and the first one's cause."""
        now = self.counts()
        names = {j["jid"]: j["name"] for j in self.rest.jobs()}
        out = []
        for jid, last in now.items():
            if last > before.get(jid, last):
                got = self.rest.call("GET", f"/jobs/{jid}/exceptions") or {}
                entries = (got.get("exceptionHistory") or {}).get("entries") or []
                failures = [e for e in entries if int(e.get("timestamp") or 0) > before[jid]]
                root = failures[-1].get("stacktrace", "") if failures else got.get("root-exception") or ""
                out.append(
                    f"{names.get(jid, jid)} failed {len(failures) or 'at least 1'} times since: {cause_chain(root)}"
                )
        return "\n".join(out)


def topics_seen(conf: dict, errors: list | None = None) -> set[str]:
    """The topics a librdkafka client sees with this configuration (raises when it cannot); the
    errors it reports on the way (authentication, TLS) go to `errors`."""
    from confluent_kafka.admin import AdminClient

    hook = {"error_cb": errors.append} if errors is not None else {}
    admin = AdminClient({**conf, **hook, "log_level": 0, "socket.timeout.ms": 5000})
    try:
        return set(admin.list_topics(timeout=8).topics)
    finally:
        admin.poll(1)  # serves the error callbacks


def kafka_refused(conf: dict) -> str:
    """Why a Kafka client that must not get in did not: the errors it reported, then its failure
    (fails the test when it got in)."""
    import pytest
    from confluent_kafka import KafkaException

    errors = []
    with pytest.raises(KafkaException) as e:
        topics_seen(conf, errors)
    return " ".join(str(x) for x in errors) + " " + str(e.value)
