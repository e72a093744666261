"""Tally's schema registry against real Confluent clients: Python confluent-kafka's
SchemaRegistryClient / AvroSerializer / AvroDeserializer, and Tally's Java serde."""

import json
import os
import subprocess
import threading
import time
import uuid

import pytest
import requests
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext
from support import admin_headers, free_port
from tally import process
from tally.components.base import JAVA
from tally.components.registry import registry_jar

ADMIN = admin_headers()  # registry writes and deletes need the admin token; reads do not
CT = {"Content-Type": "application/vnd.schemaregistry.v1+json", **ADMIN}
V1 = {
    "type": "record",
    "name": "Reading",
    "namespace": "it.v1",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "value", "type": "long"},
        {"name": "raw", "type": "bytes"},
    ],
}
V2 = {**V1, "fields": V1["fields"] + [{"name": "unit", "type": "string", "default": "C"}]}
V2_BREAKING = {**V1, "fields": V1["fields"] + [{"name": "unit", "type": "string"}]}


@pytest.fixture(scope="module")
def url(stack, settings):
    return f"http://{settings.host}:{settings.port('TALLY_REGISTRY_PORT')}"


@pytest.fixture(scope="module")
def client(url):
    return SchemaRegistryClient({"url": url, "basic.auth.user.info": "admin:" + ADMIN["Authorization"][7:]})


@pytest.fixture(scope="module")
def bootstrap(settings):
    return f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}"


def subject():
    return f"it-{uuid.uuid4().hex[:10]}-value"


def schemas_end_offset(bootstrap):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "it-offsets", "log_level": 0})
    try:
        return c.get_watermark_offsets(TopicPartition("_schemas", 0), timeout=10)[1]
    finally:
        c.close()


def avro_console(*args, stdin=None, settings=None, bootstrap=None, url=None):
    cmd = [
        JAVA,
        "-cp",
        str(registry_jar()),
        "io.tally.registry.AvroConsole",
        *args,
        "--bootstrap",
        bootstrap,
        "--registry",
        url,
    ]
    env = {**os.environ, "TALLY_ADMIN_TOKEN": ADMIN["Authorization"][7:]}  # the console registers writer schemas
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


# ---- the client's own calls ---------------------------------------------------------------


def test_python_client_register_get_latest_compatibility_config_delete(client):
    s = subject()
    sid = client.register_schema(s, Schema(json.dumps(V1), "AVRO"))
    assert client.register_schema(s, Schema(json.dumps(V1), "AVRO")) == sid, "idempotent"
    latest = client.get_latest_version(s)
    assert (latest.schema_id, latest.version, latest.subject) == (sid, 1, s)
    assert json.loads(latest.schema.schema_str)["name"] == "Reading"
    assert client.test_compatibility(s, Schema(json.dumps(V2), "AVRO")) is True
    assert client.test_compatibility(s, Schema(json.dumps(V2_BREAKING), "AVRO")) is False
    assert client.set_compatibility(s, "NONE") == {"compatibility": "NONE"}
    assert client.get_compatibility(s) == "NONE"
    sid2 = client.register_schema(s, Schema(json.dumps(V2_BREAKING), "AVRO"))
    assert sid2 != sid
    assert client.get_versions(s) == [1, 2]
    assert client.lookup_schema(s, Schema(json.dumps(V1), "AVRO")).version == 1
    assert json.loads(client.get_schema(sid).schema_str) == json.loads(
        client.lookup_schema(s, Schema(json.dumps(V1), "AVRO")).schema.schema_str
    )
    assert s in client.get_subjects()
    assert client.delete_subject(s) == [1, 2]
    assert s not in client.get_subjects()
    assert client.delete_subject(s, permanent=True) == [1, 2]
    with pytest.raises(SchemaRegistryError) as e:
        SchemaRegistryClient({"url": client._rest_client.base_urls[0]}).get_latest_version(s)  # uncached
    assert e.value.error_code == 40401


# ---- interop: Python serializer <-> Tally's Java serde -------------------------------------


def test_python_avro_serializer_to_java_serde_and_back(client, bootstrap, url, tmp_path, settings):
    topic = f"it.serde.{uuid.uuid4().hex[:8]}"
    ser = AvroSerializer(client, json.dumps(V1))
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0})
    sent = [{"sensor": f"s{i}", "value": i * 1000, "raw": bytes([i, 255 - i])} for i in range(5)]
    for rec in sent:
        producer.produce(topic, value=ser(rec, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(30) == 0
    # Tally's Java serde decodes what the Python client wrote
    out = avro_console("consume", "--topic", topic, "--max", "5", bootstrap=bootstrap, url=url)
    decoded = [json.loads(l) for l in out.splitlines() if l.strip()]
    # (the auto-created topic has several partitions: order across them is not defined)
    assert sorted((d["sensor"], d["value"]) for d in decoded) == sorted((r["sensor"], r["value"]) for r in sent)
    # and the reverse: Tally's Java serde writes with the evolved schema (V2), Python reads
    schema_file = tmp_path / "v2.avsc"
    schema_file.write_text(json.dumps(V2))
    lines = "\n".join(
        json.dumps({"sensor": f"j{i}", "value": -i, "raw": "\u0001\u0002", "unit": "K"}) for i in range(3)
    )
    back = f"{topic}.back"
    avro_console(
        "produce", "--topic", back, "--schema-file", str(schema_file), stdin=lines, bootstrap=bootstrap, url=url
    )
    deser_v2 = AvroDeserializer(client)
    deser_as_v1 = AvroDeserializer(client, json.dumps(V1))  # an old reader
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"it-{uuid.uuid4()}",
            "auto.offset.reset": "earliest",
            "log_level": 0,
        }
    )
    consumer.subscribe([back])
    got, deadline = [], time.monotonic() + 60
    while len(got) < 3 and time.monotonic() < deadline:
        m = consumer.poll(1.0)
        if m is None or m.error():
            continue
        ctx = SerializationContext(back, MessageField.VALUE)
        got.append((deser_v2(m.value(), ctx), deser_as_v1(m.value(), ctx)))
    consumer.close()
    assert sorted(g[0]["sensor"] for g in got) == ["j0", "j1", "j2"]
    assert all(g[0]["unit"] == "K" and g[0]["raw"] == b"\x01\x02" for g in got)
    assert all("unit" not in g[1] and g[1]["value"] == g[0]["value"] for g in got), "old reader resolves new writer"


def test_tally_topic_schemas_are_registered(client):
    for topic in ("tally.counter.events", "tally.timeseries.events", "tally.deadletter", "tally.alerts"):
        latest = client.get_latest_version(f"{topic}-value")
        assert json.loads(latest.schema.schema_str)["namespace"] == "tally.v1"


# ---- bad input: a clear code, and nothing stored ----------------------------------------


def test_bad_requests_get_confluent_codes_and_store_nothing(url, bootstrap):
    s = subject()
    assert requests.post(f"{url}/subjects/{s}/versions", json={"schema": json.dumps(V1)}, headers=CT).status_code == 200
    before_subjects = requests.get(f"{url}/subjects").json()
    before_offset = schemas_end_offset(bootstrap)

    def post(path, body=None, data=None, headers=CT):
        return requests.post(f"{url}{path}", json=body, data=data, headers=headers, timeout=30)

    cases = [
        (post(f"/subjects/{s}/versions", {"schema": '{"type": "recrod", "name": "x"}'}), 422, 42201),
        (post(f"/subjects/{s}/versions", {"schema": "not json at all"}), 422, 42201),
        (post(f"/subjects/{s}/versions", {"schema": "syntax = 'proto3';", "schemaType": "PROTOBUF"}), 422, 42201),
        (post(f"/subjects/{s}/versions", {"schema": json.dumps(V2_BREAKING)}), 409, 409),
        (post(f"/subjects/{s}/versions", data=b"{not json"), 400, 400),
        (post(f"/subjects/{s}/versions", data=b"x" * (2 * 1024 * 1024)), 413, 413),
        (
            post(f"/subjects/{s}/versions", data=b"<schema/>", headers={**ADMIN, "Content-Type": "application/xml"}),
            415,
            415,
        ),
        (requests.get(f"{url}/subjects/no-such-subject/versions/1"), 404, 40401),
        (requests.get(f"{url}/subjects/{s}/versions/9"), 404, 40402),
        (requests.get(f"{url}/subjects/{s}/versions/abc"), 422, 42202),
        (requests.get(f"{url}/schemas/ids/987654"), 404, 40403),
        (post(f"/subjects/{s}", {"schema": json.dumps(V2)}), 404, 40403),
        (requests.put(f"{url}/config/{s}", json={"compatibility": "SIDEWAYS"}, headers=CT), 422, 42203),
        (requests.delete(f"{url}/subjects/{s}?permanent=true", headers=ADMIN), 409, 40405),
    ]
    for resp, status, code in cases:
        assert resp.status_code == status, (resp.request.method, resp.request.url, resp.text)
        assert resp.headers["Content-Type"].startswith("application/vnd.schemaregistry.v1+json")
        body = resp.json()
        assert body["error_code"] == code and body["message"], body
    incompatible = cases[3][0].json()["message"]
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in incompatible and "unit" in incompatible
    assert requests.get(f"{url}/subjects").json() == before_subjects
    assert schemas_end_offset(bootstrap) == before_offset, "a rejected request appended to _schemas"


def test_compatibility_endpoint_is_verbose_on_request(url):
    s = subject()
    requests.post(f"{url}/subjects/{s}/versions", json={"schema": json.dumps(V1)}, headers=CT)
    r = requests.post(
        f"{url}/compatibility/subjects/{s}/versions/latest?verbose=true",
        json={"schema": json.dumps(V2_BREAKING)},
        headers=CT,
    ).json()
    assert r["is_compatible"] is False and any("unit" in m for m in r["messages"])
    for level in (
        "NONE",
        "BACKWARD",
        "BACKWARD_TRANSITIVE",
        "FORWARD",
        "FORWARD_TRANSITIVE",
        "FULL",
        "FULL_TRANSITIVE",
    ):
        assert requests.put(f"{url}/config/{s}", json={"compatibility": level}, headers=CT).json() == {
            "compatibility": level
        }
    assert requests.get(f"{url}/schemas/types").json() == ["AVRO"]


# ---- durability: restarts and two instances -------------------------------------------------


def test_ids_survive_a_registry_restart(stack, client):
    s = subject()
    sid = client.register_schema(s, Schema(json.dumps(V1), "AVRO"))
    reg = stack.component("registry")
    stack.stop(reg)
    stack.start(reg)
    fresh = SchemaRegistryClient({"url": reg.url(), "basic.auth.user.info": "admin:" + ADMIN["Authorization"][7:]})
    assert json.loads(fresh.get_schema(sid).schema_str)["name"] == "Reading"
    assert fresh.register_schema(s, Schema(json.dumps(V1), "AVRO")) == sid
    assert fresh.get_latest_version(s).version == 1


def test_a_registry_started_without_a_token_refuses_every_write(settings, tmp_path, url):
    """A jar started by hand (or a container whose secret was forgotten) must not be open."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("TALLY_REGISTRY_ADMIN_TOKEN", "TALLY_REGISTRY_ADMIN_OPEN")}
    env |= {
        "TALLY_REGISTRY_PORT": str(port),
        "TALLY_REGISTRY_HOST": settings.host,
        "TALLY_KAFKA_BOOTSTRAP": f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}",
    }
    ref = process.spawn([JAVA, "-Xmx256m", "-jar", str(registry_jar())], tmp_path / "registry-open.log", env=env)
    bare = f"http://{settings.host}:{port}"
    try:
        process.wait_until(
            "tokenless registry", lambda: requests.get(f"{bare}/healthz", timeout=2).ok, 60, lambda: process.alive(ref)
        )
        subject = f"tokenless-{uuid.uuid4().hex[:8]}"
        schema = {"schema": json.dumps({"type": "record", "name": "T", "fields": [{"name": "f", "type": "int"}]})}
        for headers in ({"Content-Type": "application/vnd.schemaregistry.v1+json"}, CT):  # without and with a token
            r = requests.post(f"{bare}/subjects/{subject}/versions", json=schema, headers=headers, timeout=30)
            assert r.status_code == 401 and r.json()["error_code"] == 40101, r.text
            assert "TALLY_REGISTRY_ADMIN_TOKEN" in r.json()["message"], r.text
        assert requests.delete(f"{bare}/subjects/{subject}", headers=CT, timeout=30).status_code == 401
        assert requests.get(f"{bare}/subjects", timeout=30).status_code == 200  # reads stay open
        assert requests.get(f"{url}/subjects/{subject}/versions", timeout=30).status_code == 404  # nothing written
    finally:
        process.stop(ref)


def test_two_instances_register_concurrently_without_conflicts(stack, settings, tmp_path, url):
    port = free_port()
    env = {
        **os.environ,
        "TALLY_REGISTRY_PORT": str(port),
        "TALLY_REGISTRY_HOST": settings.host,
        "TALLY_KAFKA_BOOTSTRAP": f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}",
        "TALLY_REGISTRY_ADMIN_TOKEN": settings.admin_token(),
    }
    ref = process.spawn([JAVA, "-Xmx256m", "-jar", str(registry_jar())], tmp_path / "registry2.log", env=env)
    second = f"http://{settings.host}:{port}"
    try:
        process.wait_until(
            "second registry", lambda: requests.get(f"{second}/healthz", timeout=2).ok, 60, lambda: process.alive(ref)
        )
        prefix = uuid.uuid4().hex[:8]
        results, errors = {}, []

        def register(i, base):
            schema = {
                "type": "record",
                "name": f"R{i}",
                "namespace": f"race.n{prefix}",
                "fields": [{"name": "f", "type": "int"}],
            }
            try:
                r = requests.post(
                    f"{base}/subjects/race-{prefix}-{i % 4}/versions",
                    json={"schema": json.dumps(schema)},
                    headers=CT,
                    timeout=60,
                )
                if r.status_code == 409:
                    return  # different record names in one subject: an honest incompatibility
                r.raise_for_status()
                results[i] = (r.json()["id"], json.dumps(schema))
            except Exception as e:  # collected and asserted below
                errors.append(repr(e))

        # NONE everywhere so every registration in a shared subject is accepted
        for k in range(4):
            requests.put(f"{url}/config/race-{prefix}-{k}", json={"compatibility": "NONE"}, headers=CT)
        threads = [threading.Thread(target=register, args=(i, url if i % 2 else second)) for i in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(results) == 40
        ids = [v[0] for v in results.values()]
        assert len(set(ids)) == 40, "two different schemas got the same id"
        for sid, schema in results.values():
            for base in (url, second):
                got = requests.get(f"{base}/schemas/ids/{sid}", timeout=10).json()["schema"]
                assert json.loads(got)["name"] == json.loads(schema)["name"], (base, sid)
        for k in range(4):
            s = f"race-{prefix}-{k}"
            assert (
                requests.get(f"{url}/subjects/{s}/versions").json()
                == requests.get(f"{second}/subjects/{s}/versions").json()
            )
    finally:
        process.stop(ref, timeout=10)


def test_registry_exposes_prometheus_metrics(url):
    text = requests.get(f"{url}/metrics", timeout=10).text
    assert "tally_registry_requests_total" in text
    assert "tally_registry_schemas" in text
    assert "jvm_memory_used_bytes" in text
