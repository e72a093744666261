"""Kafka with its security on: the local broker's SASL_SSL listener (SCRAM-SHA-512 over TLS,
a certificate signed by the stack's own CA) refuses every client that cannot authenticate or
does not trust it, and Tally's registry and gateway, started from their jars with the Kafka
security settings, serve the whole pipeline through it."""

import os
import uuid

import pytest
import requests
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from support import add_counts, free_port, kafka_refused, stored_event_ids, topics_seen, until, write_canary
from tally import process
from tally.components.base import JAVA
from tally.components.gateway import gateway_jar
from tally.components.registry import registry_jar
from tally.tls import LocalCa

TOPIC = "tally.timeseries.events"

# what a partition answers while its new topic has no leader yet (not a failure: not there yet)
NOT_READY = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART)


@pytest.fixture(scope="module")
def secure(stack, settings):
    """The secure listener's bootstrap, the SCRAM user and password, and the CA's certificate."""
    return {
        "bootstrap": settings.kafka_secure_bootstrap(),
        "user": settings.get("TALLY_KAFKA_SCRAM_USER"),
        "password": settings.kafka_scram_password(),
        "ca": str(LocalCa(settings).cert),
    }


def test_the_secure_listener_refuses_every_client_that_cannot_authenticate(secure):
    base = {"bootstrap.servers": secure["bootstrap"]}
    sasl = {
        **base,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": secure["user"],
        "ssl.ca.location": secure["ca"],
    }
    kafka_refused({**base, "security.protocol": "PLAINTEXT"})  # no TLS: the broker speaks none to it
    kafka_refused({**base, "security.protocol": "SSL", "ssl.ca.location": secure["ca"]})  # TLS, no SASL
    wrong = kafka_refused({**sasl, "sasl.password": "not-" + secure["password"]})
    assert "_AUTHENTICATION" in wrong and "Authentication failed" in wrong, wrong
    other = kafka_refused({**sasl, "sasl.username": "nobody", "sasl.password": secure["password"]})
    assert "_AUTHENTICATION" in other, other
    untrusted = kafka_refused(
        {**sasl, "sasl.password": secure["password"], "ssl.ca.location": "/etc/ssl/certs/ca-certificates.crt"}
    )
    assert "SSL" in untrusted or "certificate" in untrusted, untrusted
    assert TOPIC in topics_seen({**sasl, "sasl.password": secure["password"]})


def secure_env(secure, tmp_path, password_in_file: bool) -> dict[str, str]:
    env = {
        "TALLY_KAFKA_BOOTSTRAP": secure["bootstrap"],
        "TALLY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
        "TALLY_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
        "TALLY_KAFKA_SASL_USERNAME": secure["user"],
        "TALLY_KAFKA_SSL_TRUSTSTORE": secure["ca"],
        "TALLY_KAFKA_SSL_VERIFY_HOSTNAME": "true",
        "TALLY_KAFKA_SASL_PASSWORD": "",
        "TALLY_KAFKA_SASL_PASSWORD_FILE": "",
    }
    if password_in_file:
        f = tmp_path / "kafka.password"
        fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secure["password"] + "\n")
        env["TALLY_KAFKA_SASL_PASSWORD_FILE"] = str(f)
    else:
        env["TALLY_KAFKA_SASL_PASSWORD"] = secure["password"]
    return env


def secured_settings(settings, secure, tmp_path):
    """The stack's settings with its clients' Kafka security on (they then dial the SASL_SSL listener)."""
    from tally.settings import Settings

    env = {
        k: v for k, v in secure_env(secure, tmp_path, password_in_file=False).items() if k != "TALLY_KAFKA_BOOTSTRAP"
    }
    return Settings.load({**os.environ, "TALLY_HOME": str(settings.home), **env})


def started(argv, log, env, what, url):
    ref = process.spawn(argv, log, env=env)
    try:
        process.wait_until(
            what,
            lambda: requests.get(f"{url}/healthz", timeout=2).status_code == 200,
            90,
            lambda: process.alive(ref),
        )
    except Exception:
        process.stop(ref)
        raise AssertionError(f"{what} did not start: {log.read_text()[-3000:]}") from None
    return ref


def test_a_registry_and_a_gateway_over_sasl_ssl_serve_the_whole_pipeline(stack, settings, secure, gw, tmp_path):
    host = settings.host
    reg_port, gw_port = free_port(), free_port()
    registry_url, gateway_url = f"http://{host}:{reg_port}", f"http://{host}:{gw_port}"
    reg_env = {
        **os.environ,
        **stack.component("registry").service_env(),
        **secure_env(secure, tmp_path, password_in_file=False),
        "TALLY_REGISTRY_PORT": str(reg_port),
    }
    registry = started(
        [JAVA, "-Xmx256m", "-jar", str(registry_jar())],
        tmp_path / "registry.log",
        reg_env,
        "SASL_SSL registry",
        registry_url,
    )
    gateway = None
    try:
        # its schemas came back from _schemas over SASL_SSL: the ids the stack's registry gave them
        for subject in ("tally.counter.events-value", f"{TOPIC}-value"):
            ours = requests.get(f"{registry_url}/subjects/{subject}/versions/latest", timeout=10).json()
            theirs = requests.get(f"{stack.component('registry').url()}/subjects/{subject}/versions/latest", timeout=10)
            assert ours["id"] == theirs.json()["id"], ours
        gw_env = {
            **os.environ,
            **stack.component("gateway").service_env(),
            **secure_env(secure, tmp_path, password_in_file=True),
            "TALLY_GATEWAY_PORT": str(gw_port),
            "TALLY_REGISTRY_URL": registry_url,
        }
        gateway = started(
            [JAVA, "-Xmx256m", "-jar", str(gateway_jar())],
            tmp_path / "gateway.log",
            gw_env,
            "SASL_SSL gateway",
            gateway_url,
        )
        run = uuid.uuid4().hex[:10]
        counter = f"sasl-{run}"
        add_counts(gateway_url, "ad_clicks", counter, [f"{run}-{i}" for i in range(3)], delta=2)
        write_canary(requests, gateway_url, f"sasl-{run}")

        def count(url):
            r = requests.post(
                f"{url}/v1/counter/GetCount", json={"namespace": "ad_clicks", "counter_name": counter}, timeout=10
            )
            return r.ok and r.json()["count"] == 6

        # the jobs stored and rolled up what came in over SASL_SSL; the stack's gateway reads it,
        # and so does this one, whose counter view follows tally.counter.rollups over SASL_SSL
        until("the stack's gateway counts 6", lambda: count(gw), 90, 1)
        until("the SASL_SSL gateway counts 6", lambda: count(gateway_url), 90, 1)

        until("the event stored", lambda: stored_event_ids(gw, f"sasl-{run}") == ["c1"], 90, 1)
        logs = (tmp_path / "gateway.log").read_text() + (tmp_path / "registry.log").read_text()
        assert "SASL_SSL SCRAM-SHA-512 as " + secure["user"] in logs  # what it connected with, said once
        assert secure["password"] not in logs
    finally:
        if gateway is not None:
            process.stop(gateway, timeout=20)
        process.stop(registry, timeout=15)


def test_the_runq_exporter_produces_over_sasl_ssl(stack, settings, secure, tmp_path):
    """The exporter (Go, franz-go) with the same settings: its procfs source sees the stack's own
    containers, and their samples reach tally.timeseries.events through the SASL_SSL listener."""
    from kafka_tail import KafkaTail
    from tally.components.runq_exporter import build

    binary = build(settings.home, lambda *_: None)
    host = f"sasl-{uuid.uuid4().hex[:8]}"
    tail = KafkaTail(settings.kafka_bootstrap(), stack.component("registry").url(), [TOPIC], ignore_keys=())
    port = free_port()
    env = {**os.environ, **secure_env(secure, tmp_path, password_in_file=True)}
    argv = [
        str(binary),
        "--source",
        "procfs",
        "--host",
        host,
        "--metrics-addr",
        f"127.0.0.1:{port}",
        "--kafka",
        secure["bootstrap"],
        "--registry",
        stack.component("registry").url(),
        "--interval",
        "500ms",
        "--container-root",
        settings.get("TALLY_RUNQ_CONTAINER_ROOT"),
    ]
    ref = process.spawn(argv, tmp_path / "exporter.log", env=env)
    try:
        seen = tail.records_until(lambda recs: any(k.startswith(f"sched.runq/{host}/") for _, k, _ in recs), 60)
        mine = [v for _, k, v in seen if k.startswith(f"sched.runq/{host}/")]
        assert mine and mine[0]["source"] == "runq-exporter", (tmp_path / "exporter.log").read_text()[-2000:]
        out = (tmp_path / "exporter.log").read_text()
        assert f"SASL_SSL SCRAM-SHA-512 as {secure['user']}" in out and secure["password"] not in out
    finally:
        tail.close()
        process.stop(ref, timeout=20)


def test_a_connect_worker_over_sasl_ssl_streams_the_control_plane(stack, settings, secure, tmp_path):
    """A Kafka Connect worker configured by the launcher's own code for SASL_SSL (its password a
    reference to its environment, never in the file) runs a Debezium connector of its own (its own
    slot) and the snapshot of the namespaces table reaches Kafka through the secure listener."""
    import json

    from tally.components.connect import CONNECTOR_CONFIG, Connect
    from tally.components.postgres import Postgres

    run = uuid.uuid4().hex[:8]
    secured = secured_settings(settings, secure, tmp_path)
    connect = Connect(secured)
    assert secured.kafka_bootstrap() == secure["bootstrap"]
    port = free_port()
    worker = tmp_path / "worker.properties"
    worker.write_text(
        f"bootstrap.servers={secured.kafka_bootstrap()}\nlisteners=http://{settings.host}:{port}\n"
        "key.converter=org.apache.kafka.connect.json.JsonConverter\nkey.converter.schemas.enable=false\n"
        "value.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter.schemas.enable=false\n"
        f"offset.storage.file.filename={tmp_path / 'offsets'}\nplugin.discovery=only_scan\n"
        "config.providers=env\n"
        "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n"
        + connect.kafka_security()
    )
    assert secure["password"] not in worker.read_text()
    assert 'password="${env:TALLY_KAFKA_SASL_PASSWORD}"' in worker.read_text()
    cfg = json.loads(CONNECTOR_CONFIG.read_text())
    slot, prefix = f"tally_it_{run}", f"it.sasl{run}"
    cfg["name"] = f"it-sasl-{run}"
    cfg["config"] = {
        k: v
        for k, v in cfg["config"].items()
        if not k.startswith(("transforms", "predicates")) and k != "table.include.list"
    } | {"slot.name": slot, "topic.prefix": prefix, "table.include.list": "public.namespaces"}
    connector = tmp_path / "connector.json"
    connector.write_text(json.dumps(cfg))
    env = {
        **os.environ,
        "TALLY_PG_HOST": settings.host,
        "TALLY_PG_PORT": str(settings.port("TALLY_POSTGRES_PORT")),
        "TALLY_CDC_USER": settings.get("TALLY_CDC_USER"),
        "TALLY_CDC_PASSWORD": settings.secret("TALLY_CDC_PASSWORD"),
        **secured.kafka_client_env(),
    }
    argv = [
        JAVA,
        "-Xmx256m",
        "-cp",
        f"{connect.lib}/*",
        "org.apache.kafka.connect.cli.ConnectStandalone",
        str(worker),
        str(connector),
    ]
    ref = process.spawn(argv, tmp_path / "connect.log", env=env)
    topic = f"{prefix}.public.namespaces"
    consumer = Consumer(
        {"bootstrap.servers": settings.kafka_plaintext_bootstrap(), "group.id": f"it-{run}", "log_level": 0}
    )
    try:

        def snapshot():
            assert process.alive(ref), (tmp_path / "connect.log").read_text()[-3000:]
            md = consumer.list_topics(topic, timeout=5).topics.get(topic)
            if md is None or md.error is not None:
                return 0
            try:
                return sum(
                    consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=5)[1] for p in md.partitions
                )
            except KafkaException as e:
                if e.args[0].code() in NOT_READY:  # Connect has just made the topic: no leader yet
                    return 0
                raise

        assert until("the namespaces' snapshot in Kafka over SASL_SSL", snapshot, 120, 1) >= 1
        assert secure["password"] not in (tmp_path / "connect.log").read_text()
    finally:
        consumer.close()
        process.stop(ref, timeout=30)
        Postgres(settings).psql(
            f"SELECT pg_drop_replication_slot('{slot}') FROM pg_replication_slots WHERE slot_name = '{slot}'",
            check=False,
        )
        AdminClient({"bootstrap.servers": settings.kafka_plaintext_bootstrap()}).delete_topics([topic])


def test_the_sql_catalog_reads_through_sasl_ssl_and_shows_no_password(stack, settings, secure, gw, tmp_path):
    """A tally catalog with the launcher's own options for SASL_SSL (the password a FileConfigProvider
    reference to a file the TaskManagers read) counts what the gateway wrote, in a job of the
    session cluster; SHOW CREATE TABLE shows the reference, not the password."""
    from sql_rest import SqlSession, bounded_since, minutes_ago
    from tally.components.sql_gateway import catalog_kafka_options

    run = uuid.uuid4().hex[:8]
    counter = f"sql-sasl-{run}"
    since = minutes_ago(1)
    add_counts(gw, "ad_clicks", counter, [f"{run}-{i}" for i in range(4)])
    secured = secured_settings(settings, secure, tmp_path)
    options = {
        "type": "tally",
        "registry-url": stack.component("registry").url(),
        **catalog_kafka_options(secured),
    }
    assert options["bootstrap-servers"] == secure["bootstrap"]
    catalog = f"sasl_{run}"
    with_ = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    sql = SqlSession(
        stack.component("sql-gateway").url(),
        {"execution.runtime-mode": "batch"},
        stack.component("flink-jobmanager").url(),
    )
    try:
        sql.query(f"CREATE CATALOG {catalog} WITH ({with_})")
        rows = sql.query(
            f"SELECT COUNT(*) FROM {catalog}.default_database.counter_events "
            f"{bounded_since(since)} WHERE namespace = 'ad_clicks' AND counter = '{counter}'",
            timeout=180,
        )
        assert rows == [[4]], rows
        ddl = sql.query(f"SHOW CREATE TABLE {catalog}.default_database.counter_events")
        assert 'password="${file:' in str(ddl) and secure["password"] not in str(ddl), ddl
    finally:
        sql.query(f"DROP CATALOG IF EXISTS {catalog}")
        sql.close()
