"""Proves every server of the local stack is the real thing: each test does real work
through the server's own protocol and reads the result back."""

import json
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import requests
from cassandra.cluster import Cluster
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, ConfigResource
from tally.model import tally_topics
from tally.settings import REPO


def kafka_conf(settings):
    return {"bootstrap.servers": f"{settings.host}:{settings.port('TALLY_KAFKA_PORT')}", "log_level": 0}


def consume_until(settings, topic, match, timeout=60.0):
    """Reads topic from the beginning until match(msg) is true; returns that message."""
    consumer = Consumer(
        {
            **kafka_conf(settings),
            "group.id": f"smoke-{uuid.uuid4()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is None or msg.error():
                continue
            if match(msg):
                return msg
        pytest.fail(f"no matching record on {topic} within {timeout}s")
    finally:
        consumer.close()


def test_kafka_record_is_produced_and_consumed(stack, settings):
    topic = f"smoke.kafka.{uuid.uuid4().hex[:8]}"
    payload = uuid.uuid4().hex.encode()
    producer = Producer({**kafka_conf(settings), "acks": "all", "enable.idempotence": True})
    producer.produce(topic, key=b"k", value=payload)
    assert producer.flush(30) == 0
    msg = consume_until(settings, topic, lambda m: m.value() == payload)
    assert msg.key() == b"k"
    AdminClient(kafka_conf(settings)).delete_topics([topic])


def test_tally_topics_exist_with_their_configs(stack, settings):
    admin = AdminClient(kafka_conf(settings))
    md = admin.list_topics(timeout=10)
    expected = tally_topics(settings.int("TALLY_TOPIC_PARTITIONS"))
    for topic, (partitions, _) in expected.items():
        assert topic in md.topics, f"{topic} missing"
        assert len(md.topics[topic].partitions) == partitions, topic
    resources = [ConfigResource("topic", t) for t in ("tally.control.namespaces", "_schemas")]
    for res, fut in admin.describe_configs(resources).items():
        assert fut.result()["cleanup.policy"].value == "compact", res


def test_cql_row_is_written_and_read(stack, settings):
    cluster = Cluster([settings.host], port=settings.port("TALLY_CASSANDRA_PORT"), **settings.cassandra_connect_args())
    session = cluster.connect()
    try:
        session.execute(
            "CREATE KEYSPACE IF NOT EXISTS tally_smoke WITH replication = "
            "{'class': 'SimpleStrategy', 'replication_factor': 1}"
        )
        session.execute("CREATE TABLE IF NOT EXISTS tally_smoke.probe (id uuid PRIMARY KEY, note text)")
        row_id, note = uuid.uuid4(), f"smoke {time.time()}"
        session.execute("INSERT INTO tally_smoke.probe (id, note) VALUES (%s, %s)", (row_id, note))
        row = session.execute("SELECT note FROM tally_smoke.probe WHERE id = %s", (row_id,)).one()
        assert row.note == note
        # the launcher's own keyspace
        cols = session.execute(
            "SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'tally_meta' AND table_name = 'slices'"
        )
        assert {"namespace", "table_name", "start_time", "end_time", "status", "config"} <= {
            c.column_name for c in cols
        }
    finally:
        cluster.shutdown()


def test_elasticsearch_document_is_indexed_and_found(stack, settings):
    es = f"http://{settings.host}:{settings.port('TALLY_ELASTICSEARCH_PORT')}"
    index = f"tally-smoke-{uuid.uuid4().hex[:8]}"
    word = uuid.uuid4().hex
    r = requests.put(f"{es}/{index}/_doc/1?refresh=true", json={"note": word, "n": 7}, timeout=30)
    assert r.status_code == 201, r.text
    hits = requests.post(f"{es}/{index}/_search", json={"query": {"match": {"note": word}}}, timeout=30).json()
    assert hits["hits"]["total"]["value"] == 1
    assert hits["hits"]["hits"][0]["_source"]["n"] == 7
    requests.delete(f"{es}/{index}", timeout=30)


def test_production_jars_hold_no_benchmark_or_probe_classes():
    # ./tally bench and the probe job live in bench/ so the jars that run in production stay lean
    import zipfile

    for module, artifact in (
        ("gateway", "tally-gateway"),
        ("jobs", "tally-jobs"),
        ("schemas/registry", "tally-registry"),
    ):
        jar = next(
            j for j in (REPO / module / "target").glob(f"{artifact}-*.jar") if not j.name.startswith("original-")
        )
        names = zipfile.ZipFile(jar).namelist()
        leaked = [n for n in names if n.startswith("io/tally/") and ("/bench/" in n or "/probe/" in n)]
        assert not leaked, f"{jar.name} ships {leaked[:5]}"
        assert any(n.startswith("io/tally/") for n in names), f"{jar.name} holds none of Tally's classes"


def test_flink_job_jar_runs_to_completion_on_the_session_cluster(stack, settings):
    rest = f"http://{settings.host}:{settings.port('TALLY_FLINK_PORT')}"
    jar = next((REPO / "bench" / "target").glob("tally-bench-*.jar"))
    with open(jar, "rb") as f:
        up = requests.post(
            f"{rest}/jars/upload", files={"jarfile": (jar.name, f, "application/x-java-archive")}, timeout=60
        ).json()
    jar_id = Path(up["filename"]).name
    try:
        n = 2000
        run = requests.post(
            f"{rest}/jars/{jar_id}/run",
            json={"entryClass": "io.tally.bench.probe.StackProbeJob", "programArgsList": ["--n", str(n)]},
            timeout=120,
        )
        assert run.status_code == 200, run.text
        job_id = run.json()["jobid"]
        deadline = time.monotonic() + 120
        state = None
        while time.monotonic() < deadline:
            state = requests.get(f"{rest}/jobs/{job_id}", timeout=10).json()["state"]
            if state in ("FINISHED", "FAILED", "CANCELED"):
                break
            time.sleep(0.5)
        assert state == "FINISHED"
        acc = requests.get(f"{rest}/jobs/{job_id}/accumulators", timeout=10).json()["user-task-accumulators"]
        values = {a["name"]: a["value"] for a in acc}
        assert int(values["sumOfSquares"]) == n * (n + 1) * (2 * n + 1) // 6
    finally:
        requests.delete(f"{rest}/jars/{jar_id}", timeout=10)


def test_postgres_insert_arrives_in_kafka_as_a_debezium_change_event(stack, settings):
    pg = stack.component("postgres")
    note = f"smoke-{uuid.uuid4()}"
    pg.psql(f"INSERT INTO stack_probe (note) VALUES ('{note}')", db="tally_control")
    msg = consume_until(
        settings, "tally.control.stack_probe", lambda m: m.value() is not None and note.encode() in m.value()
    )
    event = json.loads(msg.value())
    assert event["op"] == "c"
    assert event["after"]["note"] == note
    assert event["source"]["connector"] == "postgresql"
    assert event["source"]["table"] == "stack_probe"


def test_postgres_refuses_a_client_without_the_password(stack, settings):
    """Passwords (SCRAM) on every connection, the local socket's too; none is trusted."""
    pg = stack.component("postgres")
    tcp = ["psql", "-h", pg.host, "-p", str(pg.ports()["sql"]), "-d", "tally_control", "-X", "-c", "SELECT 1"]
    socket = ["psql", "-h", str(pg.data_dir / "run"), "-p", str(pg.ports()["sql"]), "-d", "tally_control", "-X"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("PG")} | {"PGCONNECT_TIMEOUT": "5"}
    for user, password in (
        ("postgres", None),
        ("postgres", "wrong"),
        (settings.get("TALLY_CONTROL_ADMIN_USER"), "wrong"),
        (settings.get("TALLY_CDC_USER"), None),
    ):
        env = base | ({"PGPASSWORD": password} if password else {})
        for argv in (tcp, [*socket, "-c", "SELECT 1"]):
            r = subprocess.run([*argv, "-U", user, "-w"], capture_output=True, text=True, env=env, timeout=30)
            assert r.returncode != 0, (user, argv, r.stdout)
            assert "password" in r.stderr, r.stderr  # refused for its password, not for anything else
    assert pg.psql("SELECT 1", db="tally_control") == "1"  # with it, in


def test_prometheus_reports_every_target_up(stack, settings):
    prom = stack.component("prometheus")
    expected = set(prom.targets)
    deadline = time.monotonic() + 60
    up = {}
    while time.monotonic() < deadline:
        up = {r["metric"]["job"]: r["value"][1] for r in prom.query("up")}
        if set(up) >= expected and all(up[j] == "1" for j in expected):
            break
        time.sleep(2)
    assert {j: up.get(j) for j in expected} == {j: "1" for j in expected}


def test_no_server_runs_as_root_and_the_exporter_keeps_only_the_bpf_capabilities(stack, settings):
    """./tally up runs as root here, yet every server runs as the service user (Postgres as
    postgres), with no capability; the eBPF exporter keeps CAP_BPF and CAP_PERFMON only."""
    import os
    import pwd

    from tally import privileges

    if os.geteuid() != 0:
        pytest.skip("the launcher is not root: there is no privilege to drop")
    service = pwd.getpwnam(settings.get("TALLY_SERVICE_USER")).pw_uid
    bpf_caps = (1 << 38) | (1 << 39)  # CAP_PERFMON, CAP_BPF
    seen = {}
    for c in stack.components:
        ref = stack.state.ref(c.name)
        if ref is None or not stack.running(c):
            continue
        uid, caps = privileges.uid_of(ref.pid), privileges.effective_caps(ref.pid)
        seen[c.name] = (uid, caps)
        assert uid != 0, f"{c.name} (pid {ref.pid}) runs as root"
        if c.name == "postgres":
            assert uid == pwd.getpwnam("postgres").pw_uid
            continue
        assert uid == service, f"{c.name} runs as uid {uid}, not {settings.get('TALLY_SERVICE_USER')}"
        assert caps == (bpf_caps if c.name == "runq-exporter" else 0), f"{c.name}: CapEff {caps:#x}"
        for p in c.owned_paths():
            if p.exists():
                assert p.stat().st_uid == service, f"{p} of {c.name} is not the service user's"
    assert len(seen) >= 12, seen


def test_background_servers_run_with_the_timer_slack_and_user_facing_ones_without(stack, settings):
    """TALLY_SERVER_TIMER_SLACK_US reaches every thread of Kafka, Cassandra, Flink, Elasticsearch,
    Connect and the SQL gateway (the JVM's threads inherit it from the process that exec'd it);
    the gateway and registry keep Linux's default."""
    from tally import process

    want = settings.int("TALLY_SERVER_TIMER_SLACK_US") * 1000
    checked = []
    for c in stack.components:
        ref = stack.state.ref(c.name)
        if ref is None or not stack.running(c):
            continue
        threads = [int(t) for t in os.listdir(f"/proc/{ref.pid}/task")]
        slacks = {process.timer_slack_ns(t) for t in threads} - {None}
        if c.relaxed_timers and want > 0:
            assert slacks == {want}, f"{c.name}: thread slacks {slacks}, want {want}"
            checked.append(c.name)
        elif c.name in ("gateway", "registry"):
            assert slacks == {50_000}, f"{c.name}: thread slacks {slacks}"
    if want > 0:
        assert {"kafka", "cassandra", "flink-taskmanager", "elasticsearch"} <= set(checked), checked


def _nice(tid: int) -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, tid)
    except ProcessLookupError:  # a thread that ended since the listing
        return None


def test_the_pipeline_runs_at_the_background_nice_and_the_request_path_at_0(stack, settings):
    """TALLY_BACKGROUND_CPU_NICE reaches every thread of both Flink processes, Connect, the SQL
    gateway, Prometheus and its exporters, and their scheduler autogroups (what weighs against
    the other servers); the gateway, Kafka, Cassandra, Elasticsearch and the registry stay at 0."""
    from tally import process

    want = settings.int("TALLY_BACKGROUND_CPU_NICE")
    checked = []
    for c in stack.components:
        ref = stack.state.ref(c.name)
        if ref is None or not stack.running(c) or c.name == "postgres":  # Postgres runs as it likes
            continue
        threads = [int(t) for t in os.listdir(f"/proc/{ref.pid}/task")]
        nices = {_nice(t) for t in threads} - {None}
        expected = want if c.background_cpu else 0
        assert nices == {expected}, f"{c.name}: thread nices {nices}, want {expected}"
        _, group = process.nice_of(ref.pid)
        if group is not None:
            assert group == expected, f"{c.name}: autogroup nice {group}, want {expected}"
        checked.append((c.name, c.background_cpu))
    names = {name for name, background in checked if background}
    assert {"flink-jobmanager", "flink-taskmanager", "connect", "prometheus"} <= names, checked
    assert {"gateway", "kafka", "cassandra", "elasticsearch"} <= {n for n, b in checked if not b}, checked
