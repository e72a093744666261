"""The three-node profile (`./tally test --nodes 3`): three Kafka brokers (replication 3,
min.insync.replicas 2) and three Cassandra nodes (NetworkTopologyStrategy 3, LOCAL_QUORUM). One
broker and one Cassandra node are killed mid-stream while counters and TimeSeries events flow:
no acknowledged event is lost or doubled, and reads keep answering while they are down."""

import json
import re
import time
from datetime import UTC, datetime

import pytest
import requests
from cassandra import ReadFailure
from counter_load import fault_run
from support import kill_9, now_iso
from tally.components.cassandra import schema_versions
from tally.jobs import Jobs
from tally.provenance import stamp
from tally.settings import REPO
from test_scale_out import TimeSeriesLoad

#: After a node is killed, reads may time out until the coordinators' failure detector convicts
#: it (phi_convict_threshold 8 on gossip every second; 16-19 s on this loaded 2-core box): a
#: LOCAL_QUORUM read whose replicas include it waits past the gateway's 2 s. The test waits for
#: the reads to answer CLEAN_S in a row, at most CONVICTED_WITHIN_S after the kill.
CLEAN_S, CONVICTED_WITHIN_S = 15, 120

#: How long after the nodes agree on one schema version a replica may still refuse a read for
#: its schema (its migration stage applying what it pulled); longer is a table split under two ids.
SCHEMA_SERVED_WITHIN_S = 120


@pytest.fixture(scope="module", autouse=True)
def three_nodes(settings):
    if settings.nodes != 3:
        pytest.skip("the three-node profile only: ./tally test --nodes 3")


@pytest.fixture(scope="module")
def jobs(stack, settings):
    j = Jobs(settings, log=lambda *_: None)
    j.ensure_deployed()
    return j


def test_the_stack_runs_on_three_brokers_and_three_cassandra_nodes(stack, settings, cql):
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": settings.kafka_bootstrap(), "log_level": 0}).list_topics(timeout=10)
    assert sorted(md.brokers) == [1, 2, 3]
    for name in ("tally.counter.events", "tally.timeseries.events", "_schemas"):
        for p in md.topics[name].partitions.values():
            assert len(p.replicas) == 3, f"{name}/{p.id}: replicas {p.replicas}"
    peers = {r.peer for r in cql.execute("SELECT peer FROM system.peers")}
    assert len(peers) == 2, peers
    meta = cql.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'tally_meta'").one()
    assert meta.replication["datacenter1"] == "3" and meta.replication["class"].endswith("NetworkTopologyStrategy")


@pytest.mark.disruptive
def test_a_broker_and_a_cassandra_node_killed_mid_stream_lose_and_double_nothing(
    stack, settings, gw, cql, jobs, wait_healthy
):
    started = datetime.now(UTC)
    timeseries = TimeSeriesLoad(gw).start()
    outage: dict = {"reads": 0, "failed_reads": []}
    counters: list[str] = []

    def kill_a_broker_and_a_node():
        kill_9(stack, "kafka-2", "cassandra-2")
        t0 = time.monotonic()
        # while they are down, the reads: GetCount of one of the generator's counters (from the
        # gateways' view once its first rollup is there, from Cassandra before) and
        # ReadEventRecords, from Cassandra at LOCAL_QUORUM (two of three replicas). Until the
        # coordinators convict the dead node (gossip's failure detector, seconds), a read that
        # picked it as a replica times out; after that every read must answer.
        clean_since = time.monotonic()
        while time.monotonic() - clean_since < CLEAN_S and time.monotonic() - t0 < CONVICTED_WITHIN_S:
            for path, body in (
                ("/v1/counter/GetCount", {"namespace": "it_counters", "counter_name": counters[0]}),
                (
                    "/v1/timeseries/ReadEventRecords",
                    {
                        "namespace": "playback",
                        "timeSeriesId": timeseries.tsid,
                        "timeInterval": {"start": now_iso(-600), "end": now_iso(60)},
                        "pageSize": 100,
                    },
                ),
            ):
                r = requests.post(gw + path, json=body, timeout=15)
                outage["reads"] += 1
                if r.status_code != 200:
                    outage["failed_reads"].append((round(time.monotonic() - t0, 1), path, r.status_code, r.text[:120]))
                    clean_since = time.monotonic()
            time.sleep(0.2)
        outage["answering_again_s"] = round(clean_since - t0, 1)
        stack.up()  # restarts the two
        wait_healthy(240)
        outage["down_s"] = round(time.monotonic() - t0, 1)
        # a node back from kill -9 serves CQL before it has pulled the schema it missed: the
        # checks after read through any coordinator, so they start once the nodes agree (checked below)
        outage["schema_after_up"] = schema_agreement(settings, timeout=120)
        outage["checks_from_s"] = round(time.monotonic() - t0, 1)

    t0 = time.monotonic()
    try:
        gen = fault_run(gw, cql, kill_a_broker_and_a_node, rounds=80, pause_s=0.15, on_counters=counters.extend)
    except AssertionError as e:  # what a CI run keeps: where the counts stand, what the jobs said
        raise AssertionError(f"{e}\n{counter_diagnosis(settings, jobs, gw, counters, started, outage)}") from None
    timeseries.finish()
    assert outage["answering_again_s"] < CONVICTED_WITHIN_S - CLEAN_S, (
        f"reads still failing {CONVICTED_WITHIN_S} s after the kill: {outage['failed_reads'][-5:]}"
    )

    # a node back from kill -9 pulls what changed while it was down; after that every node must be on
    # one schema: a table made twice under two ids would keep them apart, and its reads and writes
    # refused (INCOMPATIBLE_SCHEMA), for good
    versions = schema_agreement(settings, timeout=120)
    assert len(set(versions.values())) == 1, f"the nodes disagree on the schema: {versions}\n{split_tables(settings)}"
    # One version on disk is not yet the schema every node serves: a replica refuses a read of a
    # table its memory does not hold as the coordinator's (INCOMPATIBLE_SCHEMA) while its
    # migration stage applies what it pulled (seconds on this box). Refused for good would be a
    # table split under two ids: the test waits SCHEMA_SERVED_WITHIN_S, then fails naming it.
    agreed, refused = time.monotonic(), []
    while True:
        try:
            stored = timeseries.check_stored(cql, timeout=240)
            break
        except AssertionError as e:  # what a CI run keeps: where the missing rows are, what the writer said
            raise AssertionError(f"{e}\n{diagnosis(settings, timeseries, started)}") from None
        except ReadFailure as e:
            waited = round(time.monotonic() - agreed, 1)
            if "INCOMPATIBLE_SCHEMA" not in str(e) or waited > SCHEMA_SERVED_WITHIN_S:
                raise AssertionError(
                    f"reads refused {waited} s after the nodes agreed on the schema: {e}\n"
                    f"{schema_diagnosis(stack, settings, 'ns_playback')}"
                ) from None
            refused.append(waited)
            time.sleep(2)
    report = {
        "test": "a broker (kafka-2) and a Cassandra node (cassandra-2) kill -9'd mid-stream, restarted by up",
        "seconds": round(time.monotonic() - t0, 1),
        "counters": len(gen.truth),
        "counter_total_acknowledged": sum(gen.truth.values()),
        "timeseries": stored,
        "client_retries": gen.retries,
        "reads_while_down": outage["reads"],
        "failed_reads_while_down": len(outage["failed_reads"]),
        "failed_reads_by_endpoint": {
            path: sum(1 for f in outage["failed_reads"] if f[1] == path)
            for path in {f[1] for f in outage["failed_reads"]}
        },
        "last_failed_read_s_after_kill": max((f[0] for f in outage["failed_reads"]), default=None),
        "reads_answering_again_s_after_kill": outage["answering_again_s"],
        "reads_refused_for_the_schema_after_agreement": len(refused),
        "last_refused_s_after_agreement": max(refused, default=None),
        "down_and_back_s": outage["down_s"],
    }
    # kept in the repository (docs/deploying.md's table is generated from it by ./tally bench table)
    (REPO / "bench" / "out" / "three-nodes.json").write_text(json.dumps(stamp(report), indent=2))
    print(json.dumps(report))


def _each_node(settings):
    """A session on each Cassandra node alone (its own system tables, at ONE), shut down after."""
    for host, session in _each_node_sessions(settings):
        try:
            yield host, session
        finally:
            session.cluster.shutdown()


def schema_agreement(settings, timeout: float) -> dict:
    """Each node's own schema version (schema_versions, as up's wait asks it), polled until they
    are one or the timeout; None for a node the driver has not reached yet."""
    from cassandra.cluster import Cluster

    cluster = Cluster(
        settings.cassandra_hosts(), port=settings.port("TALLY_CASSANDRA_PORT"), **settings.cassandra_connect_args()
    )
    session = cluster.connect()
    deadline = time.monotonic() + timeout
    try:
        while True:
            versions = {**dict.fromkeys(settings.cassandra_hosts()), **schema_versions(cluster, session)}
            if (None not in versions.values() and len(set(versions.values())) == 1) or time.monotonic() > deadline:
                return versions
            time.sleep(2)
    finally:
        cluster.shutdown()


def split_tables(settings) -> str:
    """The tables of the namespaces' keyspaces whose id is not the same on every node."""
    ids: dict = {}
    for host, session in _each_node(settings):
        for r in session.execute("SELECT keyspace_name, table_name, id FROM system_schema.tables"):
            if r.keyspace_name.startswith("ns_"):
                ids.setdefault(f"{r.keyspace_name}.{r.table_name}", {})[host] = str(r.id)
    split = {
        t: by_host
        for t, by_host in ids.items()
        if len(set(by_host.values())) > 1 or len(by_host) < len(settings.cassandra_hosts())
    }
    return f"tables with more than one id, or missing on a node: {split}"


#: What a node logs when it refuses a message for its schema, or fails to apply one it pulled.
SCHEMA_LOG = re.compile(r"incompatible schema encountered|Couldn't find table|Unknown column|mismatch \(found")


def schema_diagnosis(stack, settings, keyspace: str) -> str:
    """Per node: each table of the keyspace as its system_schema holds it (the id) against the
    table directories its data holds (a directory is made under the id the node serves), and its
    log's last lines about refused messages and schema it could not apply."""
    lines = []
    names = {c.host: c.name for c in stack.components if c.metrics_job == "cassandra"}
    for host, session in _each_node(settings):
        name = names[host]
        try:
            ids = {
                r.table_name: r.id.hex
                for r in session.execute(
                    "SELECT table_name, id FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,)
                )
            }
            on_disk = settings.data(name) / "data" / keyspace
            dirs = sorted(d.name for d in on_disk.iterdir()) if on_disk.is_dir() else []
            served = {t: [d for d in dirs if d.rsplit("-", 1)[0] == t] for t in ids}
            odd = {t: (ids[t], served[t]) for t in ids if f"{t}-{ids[t]}" not in served[t]}
            lines.append(f"{name} ({host}): {len(ids)} tables; id not among its directories: {odd}")
        except Exception as e:  # noqa: BLE001 - a diagnosis never hides the failure it explains
            lines.append(f"{name} ({host}): {type(e).__name__}: {e}")
        try:
            said = [ln for ln in settings.log(name).read_text(errors="replace").splitlines() if SCHEMA_LOG.search(ln)]
            lines += [f"  {name}: {ln[:300]}" for ln in said[-6:]]
        except OSError as e:
            lines.append(f"  (no {name} log: {e})")
    return "\n".join(lines)


def test_a_table_made_on_every_node_at_once_under_one_id_is_one_table(stack, settings):
    """What the jobs' DDL rests on (TableIds): a CREATE TABLE ... IF NOT EXISTS that each of the
    three nodes takes at once, before any has the others', makes one table when all carry the
    same id (the jobs derive it from the namespace, the table and the namespace's creation)."""
    import threading
    import uuid

    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement

    table_id = uuid.uuid4()
    keyspace = f"tally_it_ids_{table_id.hex[:8]}"
    nodes = dict(_each_node_sessions(settings))
    try:
        first = next(iter(nodes.values()))
        first.execute(
            f"CREATE KEYSPACE {keyspace} WITH replication = {{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}}"
        )
        assert len(set(schema_agreement(settings, timeout=60).values())) == 1
        ddl = f"CREATE TABLE IF NOT EXISTS {keyspace}.events (k text PRIMARY KEY, v int) WITH ID = {table_id}"
        start, errors = threading.Barrier(len(nodes)), []

        def create(session):
            start.wait()
            try:
                session.execute(ddl, timeout=60)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=create, args=(s,)) for s in nodes.values()]
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
        assert errors == []
        versions = schema_agreement(settings, timeout=60)
        assert len(set(versions.values())) == 1, versions
        for host, session in nodes.items():
            row = session.execute(
                "SELECT id FROM system_schema.tables WHERE keyspace_name = %s AND table_name = 'events'", (keyspace,)
            ).one()
            assert row.id == table_id, f"{host}: {row.id}"
            # ALL: every replica takes each node's row (one that served the table under another id
            # would refuse it), and the read after sees all three, not just the replicas that
            # happened to have caught up (ONE raced the other coordinators' mutations)
            session.execute(
                SimpleStatement(
                    f"INSERT INTO {keyspace}.events (k, v) VALUES (%s, 1)", consistency_level=ConsistencyLevel.ALL
                ),
                (f"on {host}",),
            )
        rows = (
            next(iter(nodes.values()))
            .execute(SimpleStatement(f"SELECT k FROM {keyspace}.events", consistency_level=ConsistencyLevel.ALL))
            .all()
        )
        assert len(rows) == len(nodes), rows
    finally:
        next(iter(nodes.values())).execute(f"DROP KEYSPACE IF EXISTS {keyspace}", timeout=60)
        for c in nodes.values():
            c.cluster.shutdown()


def _each_node_sessions(settings):
    """Like _each_node, but the sessions stay open (the caller shuts their clusters down)."""
    from cassandra import ConsistencyLevel
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import WhiteListRoundRobinPolicy

    for host in settings.cassandra_hosts():
        profile = ExecutionProfile(
            load_balancing_policy=WhiteListRoundRobinPolicy([host]), consistency_level=ConsistencyLevel.ONE
        )
        cluster = Cluster(
            [host],
            port=settings.port("TALLY_CASSANDRA_PORT"),
            execution_profiles={EXEC_PROFILE_DEFAULT: profile},
            **settings.cassandra_connect_args(),
        )
        yield host, cluster.connect()


#: What the Flink logs say of Cassandra writes that were dropped or failed, and of job restarts.
WRITER_LOG = re.compile(
    r"dropping writes into|a Cassandra write failed|disagree on the schema|missing from the driver's view"
    r"|Job tally-\S+ \(\w+\) switched from state \w+ to (FAILING|RESTARTING|FAILED)"
)


def diagnosis(settings, timeseries: TimeSeriesLoad, since: datetime) -> str:
    """For a loss: which nodes hold each missing event's partition rows (each node asked alone at
    ONE, so it answers from its own copy where the snitch lets it), and the TaskManager's lines
    about the writers and the JobManager's job restarts since the test began."""
    from test_timeseries import HOUR_US, stored

    lost = timeseries.lost[:20]
    lines = [f"missing: {lost}"]
    try:
        for host, session in _each_node(settings):
            buckets = {t - t % HOUR_US for t in timeseries.times}
            held = {r.event_id for b in buckets for r in stored(session, timeseries.tsid, b)}
            lines.append(f"node {host} holds {sorted(set(lost) & held)}")
    except Exception as e:  # a diagnosis never hides the failure it explains
        lines.append(f"{type(e).__name__}: {e}")
    return "\n".join(lines + logged(settings, ("flink-jobmanager", "flink-taskmanager"), since, WRITER_LOG))


def logged(settings, names: tuple[str, ...], since: datetime, pattern: re.Pattern, keep: int = 40) -> list[str]:
    """The components' log lines since `since` that match `pattern` (the last `keep`), after a count."""
    stamp_since = since.strftime("%Y-%m-%d %H:%M:%S")
    said = []
    for name in names:
        try:
            log = settings.log(name).read_text(errors="replace").splitlines()
            said += [
                f"{name}: {line[:400]}"
                for line in log
                if line[:19].replace("T", " ") >= stamp_since and pattern.search(line) and not NOISE.search(line)
            ]
        except OSError as e:
            said.append(f"(no {name} log: {e})")
    return [f"{', '.join(names)} since {stamp_since}: {len(said)} lines"] + said[-keep:]


#: What the logs say of failures: Flink's job restarts and task failures, the gateway's warnings.
FAILURE_LOG = re.compile(r"\b(WARN|ERROR)\b|switched from \w+ to (FAILED|FAILING|RESTARTING)")
#: Warnings of every run: Cassandra's on batch sizes (the writers' batches are large by design).
#: and every client's on a connection refused by the server the test killed.
NOISE = re.compile(
    r"generated server side warning|BEGIN UNLOGGED BATCH|could not be established|Error while opening new channel"
)


def counter_diagnosis(settings, jobs: Jobs, gw: str, counters: list[str], since: datetime, outage: dict) -> str:
    """For a count that did not arrive: the fault's course (seconds after the kill; each node's
    schema version once up was done), each job's state and its last exceptions, the rollup row of
    each counter on each node (asked alone at ONE), the gateway's view of the rollups, and the
    failures Flink and the gateway logged since the test began."""
    lines = [f"the fault: { ({k: v for k, v in outage.items() if k != 'failed_reads'}) }"]
    try:
        for j in jobs.rest.jobs():
            lines.append(f"job {j['name']} {j['jid']}: {j['state']} since {j.get('start-time')}")
            history = jobs.rest.call("GET", f"/jobs/{j['jid']}/exceptions?maxExceptions=5").get("exceptionHistory", {})
            for x in history.get("entries", [])[:5]:
                first = (x.get("stacktrace") or "").splitlines()[:1]
                lines.append(f"  {x.get('timestamp')} {x.get('taskName')}: {first}")
    except Exception as e:  # a diagnosis never hides the failure it explains
        lines.append(f"(Flink's REST API: {type(e).__name__}: {e})")
    try:
        for host, session in _each_node(settings):
            for c in counters:
                row = session.execute(
                    "SELECT last_rollup_count, last_rollup_ts FROM ns_it_counters.counter_rollups WHERE counter = %s",
                    (c,),
                ).one()
                lines.append(f"node {host} {c}: {row}")
    except Exception as e:
        lines.append(f"(the rollup rows: {type(e).__name__}: {e})")
    try:
        view = requests.get(gw + "/metrics", timeout=10).text.splitlines()
        lines += [line for line in view if line.startswith("tally_gateway_counter_view")]
    except requests.RequestException as e:
        lines.append(f"(the gateway's metrics: {e})")
    lines += logged(settings, ("flink-jobmanager", "flink-taskmanager"), since, FAILURE_LOG)
    return "\n".join(lines + logged(settings, ("gateway",), since, FAILURE_LOG, keep=20))
