"""`./tally deploy [--env FILE] [--check]`: what `./tally up` does to make Tally work, done against
clusters someone else runs (Kafka, Cassandra, PostgreSQL, Kafka Connect, the schema registry,
Flink). Idempotent: each step says what it found and what it changed. `--check` changes nothing
and names every difference. A difference that cannot be repaired without losing what the cluster
holds (a topic's partition count or replication) is named and refused, never accepted.

Without --env the targets are the local stack's own servers, so `./tally deploy --check` also
tells whether a local stack is whole."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .components.cassandra import META_CQL, cql_statements, keyspace_replication, with_replication
from .components.connect import CONNECTOR, CONNECTOR_CONFIG
from .components.kafka import align_configs, create_topics
from .components.postgres import Psql, control_plane_differences, provision_control_plane
from .model import tally_topics
from .settings import Settings


class DeployError(RuntimeError):
    """A difference deploy will not repair by itself (it names what to do)."""


@dataclass(frozen=True)
class Targets:
    """Where each server is: the deployment's settings, else the local stack's address."""

    kafka: str
    registry: str
    cassandra: tuple[tuple[str, int], ...]
    elasticsearch: str
    connect: str
    flink: str
    postgres: tuple[str, int]
    replication: int

    @classmethod
    def of(cls, s: Settings) -> Targets:
        h = s.host

        def given(key: str, local: str) -> str:
            return s.get(key).strip() or local

        cassandra = []
        for part in given("TALLY_CASSANDRA_CONTACT", ",".join(s.cassandra_hosts())).split(","):
            host, _, port = part.strip().rpartition(":") if ":" in part else (part.strip(), "", "")
            cassandra.append((host, int(port) if port else s.port("TALLY_CASSANDRA_PORT")))
        pg_host, _, pg_port = given("TALLY_POSTGRES_ADDRESS", f"{h}:{s.port('TALLY_POSTGRES_PORT')}").rpartition(":")
        replication = s.get("TALLY_TOPIC_REPLICATION").strip()
        return cls(
            kafka=given("TALLY_KAFKA_BOOTSTRAP", s.kafka_bootstrap()),
            registry=given("TALLY_REGISTRY_URL", f"http://{h}:{s.port('TALLY_REGISTRY_PORT')}").rstrip("/"),
            cassandra=tuple(cassandra),
            elasticsearch=s.elasticsearch_url(),
            connect=given("TALLY_CONNECT_URL", f"http://{h}:{s.port('TALLY_CONNECT_PORT')}").rstrip("/"),
            flink=given("TALLY_FLINK_URL", f"http://{h}:{s.port('TALLY_FLINK_PORT')}").rstrip("/"),
            postgres=(pg_host, int(pg_port)),
            replication=int(replication) if replication else min(s.nodes, 3),
        )


class Step:
    """One concern of the deployment: what differs from what Tally needs, and the repair."""

    name = ""

    def differences(self, t: Targets, s: Settings) -> list[str]:
        raise NotImplementedError

    def apply(self, t: Targets, s: Settings) -> list[str]:
        raise NotImplementedError


class Topics(Step):
    """Tally's topics with their partitions, replication and configs."""

    name = "kafka topics"

    def _admin(self, t: Targets, s: Settings):
        from confluent_kafka.admin import AdminClient

        return AdminClient(self._client(t, s))

    @staticmethod
    def _client(t: Targets, s: Settings) -> dict[str, str]:
        """The deployment's brokers with Kafka's client security settings."""
        return {**s.kafka_client_config(), "bootstrap.servers": t.kafka, "log_level": 0}

    def _found(self, t: Targets, s: Settings):
        """(missing topics, refused differences, config differences by topic)."""
        from confluent_kafka.admin import ConfigResource

        admin = self._admin(t, s)
        present = admin.list_topics(timeout=15).topics
        want = tally_topics(s.int("TALLY_TOPIC_PARTITIONS"))
        missing, refused, configs = {}, [], {}
        existing = [name for name in want if name in present]
        described = admin.describe_configs([ConfigResource("topic", name) for name in existing]) if existing else {}
        for name, (partitions, cfg) in want.items():
            if name not in present:
                missing[name] = (partitions, cfg)
                continue
            parts = present[name].partitions
            if len(parts) != partitions:
                refused.append(f"topic {name} has {len(parts)} partitions, Tally's layout needs {partitions}")
            copies = len(next(iter(parts.values())).replicas) if parts else 0
            if copies != t.replication:
                refused.append(
                    f"topic {name} keeps {copies} copies of each partition, the deployment asks {t.replication}"
                )
            have = next(f for r, f in described.items() if r.name == name).result()
            wrong = {k: v for k, v in cfg.items() if k not in have or have[k].value != v}
            if wrong:
                configs[name] = wrong
        return missing, refused, configs

    def differences(self, t: Targets, s: Settings) -> list[str]:
        missing, refused, configs = self._found(t, s)
        out = [f"topic {name} is missing" for name in missing] + refused
        out += [f"topic {name}: {k} should be {v}" for name, cfg in configs.items() for k, v in cfg.items()]
        return out

    def apply(self, t: Targets, s: Settings) -> list[str]:
        missing, refused, configs = self._found(t, s)
        if refused:
            raise DeployError(
                "; ".join(refused) + " (not changed: partitions and copies move data; change them by hand or point"
                " TALLY_TOPIC_PARTITIONS / TALLY_TOPIC_REPLICATION at what the cluster has)"
            )
        made = create_topics(t.kafka, missing, replicas=t.replication, client=self._client(t, s)) if missing else []
        if configs:
            align_configs(self._admin(t, s), configs)
        return [f"created topic {name}" for name in made] + [
            f"set {k}={v} on topic {name}" for name, cfg in configs.items() for k, v in cfg.items()
        ]


class MetaKeyspace(Step):
    """Cassandra's tally_meta keyspace (the slice catalogue) at the configured replication; the
    namespaces' keyspaces are made by the jobs as namespaces appear."""

    name = "cassandra tally_meta"

    def _session(self, t: Targets, s: Settings):
        from cassandra.cluster import Cluster

        cluster = Cluster(
            [h for h, _ in t.cassandra], port=t.cassandra[0][1], connect_timeout=10, **s.cassandra_connect_args()
        )
        return cluster, cluster.connect()

    def differences(self, t: Targets, s: Settings) -> list[str]:
        cluster, session = self._session(t, s)
        try:
            return self._differences(session, s)
        finally:
            cluster.shutdown()

    @staticmethod
    def _differences(session, s: Settings) -> list[str]:
        ks = session.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'tally_meta'").one()
        if ks is None:
            return ["keyspace tally_meta is missing"]
        tables = {
            r.table_name
            for r in session.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'tally_meta'")
        }
        want = {st.split("tally_meta.", 1)[1].split()[0] for st in cql_statements(META_CQL) if "CREATE TABLE" in st}
        out = [f"table tally_meta.{name} is missing" for name in sorted(want - tables)]
        asked = keyspace_replication(s)
        if not _same_replication(dict(ks.replication), asked):
            out.append(f"keyspace tally_meta has replication {dict(ks.replication)}, the deployment asks {asked}")
        return out

    def apply(self, t: Targets, s: Settings) -> list[str]:
        cluster, session = self._session(t, s)  # one session to look and to repair
        try:
            before = self._differences(session, s)
            if any("replication" in d for d in before):
                raise DeployError(
                    "; ".join(d for d in before if "replication" in d)
                    + " (not changed: ALTER KEYSPACE and a repair are an operator's decision)"
                )
            if before:
                for stmt in cql_statements(META_CQL):
                    session.execute(with_replication(stmt, keyspace_replication(s)), timeout=30)
            return [d.replace("is missing", "created") for d in before]
        finally:
            cluster.shutdown()


def _same_replication(have: dict, asked: str) -> bool:
    """Whether a keyspace's replication map is the one a CQL map literal asks."""
    import ast

    want = ast.literal_eval(asked)
    norm = {k: str(v).split(".")[-1] if k == "class" else str(v) for k, v in want.items()}
    have = {k: v.split(".")[-1] if k == "class" else v for k, v in have.items()}
    return have == norm


class ControlPlane(Step):
    """PostgreSQL: the tally_control database, its migrations, the tally_admin and tally_cdc
    roles, the seed namespaces and Debezium's replication slot."""

    name = "postgres control plane"

    def _psql(self, t: Targets, s: Settings) -> Psql:
        host, port = t.postgres
        return Psql(host, port, s.get("TALLY_POSTGRES_USER"), s.secret("TALLY_POSTGRES_PASSWORD"))

    def differences(self, t: Targets, s: Settings) -> list[str]:
        return control_plane_differences(self._psql(t, s), s)

    def apply(self, t: Targets, s: Settings) -> list[str]:
        return provision_control_plane(self._psql(t, s), s, log=lambda *a: None)


class Connector(Step):
    """The Debezium connector of the control plane, through Connect's REST API."""

    name = "debezium connector"

    @staticmethod
    def _refs(t: Targets, s: Settings) -> dict[str, str]:
        """The connector file's references (the local worker resolves them from its environment)
        and what they stand for on the targets; the password stays a reference the workers resolve."""
        host, port = t.postgres
        return {
            "${env:TALLY_PG_HOST}": host,
            "${env:TALLY_PG_PORT}": str(port),
            "${env:TALLY_CDC_USER}": s.get("TALLY_CDC_USER"),
            "${env:TALLY_CDC_PASSWORD}": s.get("TALLY_CONNECT_CDC_PASSWORD_REF"),
        }

    def wanted(self, t: Targets, s: Settings) -> dict:
        refs = self._refs(t, s)
        return {k: refs.get(v, v) for k, v in json.loads(CONNECTOR_CONFIG.read_text())["config"].items()}

    def current(self, t: Targets, s: Settings) -> dict | None:
        """The connector's config as Connect holds it, its references read as the targets' values."""
        try:
            have = _http_json("GET", f"{t.connect}/connectors/{CONNECTOR}/config")
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return None
            raise
        refs = self._refs(t, s)
        return {k: refs.get(v, v) for k, v in have.items()}

    def differences(self, t: Targets, s: Settings) -> list[str]:
        have, want = self.current(t, s), self.wanted(t, s)
        if have is None:
            return [f"connector {CONNECTOR} is missing"]
        return [
            f"connector {CONNECTOR}: {k} is {have.get(k)!r}, should be {v!r}"
            for k, v in sorted(want.items())
            if have.get(k) != v
        ]

    def apply(self, t: Targets, s: Settings) -> list[str]:
        found = self.differences(t, s)
        if found:
            _http_json("PUT", f"{t.connect}/connectors/{CONNECTOR}/config", self.wanted(t, s))
        return [f"connector {CONNECTOR} created" if d.endswith("is missing") else f"{d}: set" for d in found]


class Schemas(Step):
    """The value schema of each of Tally's topics in the registry (Tally's producers look them up)."""

    name = "registry schemas"

    def _run(self, t: Targets, s: Settings, *flags: str) -> list[str]:
        from .components.base import JAVA
        from .components.registry import registry_jar

        r = subprocess.run(
            [JAVA, "-cp", str(registry_jar()), "io.tally.registry.TallySchemaBootstrap", t.registry, *flags],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "TALLY_ADMIN_TOKEN": s.admin_token()},
        )
        if r.returncode != 0:
            raise DeployError(f"schema registration at {t.registry} failed: {r.stderr.strip()[-500:]}")
        return [line for line in r.stdout.splitlines() if line.strip()]

    def differences(self, t: Targets, s: Settings) -> list[str]:
        return [line for line in self._run(t, s, "--check") if "not registered" in line]

    def apply(self, t: Targets, s: Settings) -> list[str]:
        missing = self.differences(t, s)
        if missing:
            self._run(t, s)
        return [line.replace("is not registered", "registered") for line in missing]


class Elasticsearch(Step):
    """Elasticsearch answers Tally's login (over TLS when the URL is https) with a usable cluster.
    Nothing is made here: the TimeSeries writer puts each indexed namespace's template and slice
    indices when it provisions the namespace (at its start, and on every change)."""

    name = "elasticsearch"

    def differences(self, t: Targets, s: Settings) -> list[str]:
        import requests

        r = requests.get(f"{t.elasticsearch}/_cluster/health", timeout=30, **s.elasticsearch_requests_args())
        if r.status_code in (401, 403):
            raise DeployError(
                f"{t.elasticsearch} refused Tally's login (HTTP {r.status_code}): check TALLY_ELASTICSEARCH_*"
            )
        r.raise_for_status()
        status = r.json()["status"]
        return [] if status in ("green", "yellow") else [f"cluster health is {status}"]

    def apply(self, t: Targets, s: Settings) -> list[str]:
        return self.differences(t, s)


class FlinkJobs(Step):
    """Tally's three jobs on the Flink cluster, through its REST API: uploaded and run when not
    running (from the savepoint deploy took last, if any), upgraded through a savepoint when the
    build or arguments changed, as `up` does."""

    name = "flink jobs"

    def _jobs(self, t: Targets, s: Settings):
        from .jobs import Jobs

        local = t.flink == f"http://{s.host}:{s.port('TALLY_FLINK_PORT')}"
        return Jobs(s, lambda *a: None) if local else Jobs(s, lambda *a: None, targets=t)

    def differences(self, t: Targets, s: Settings) -> list[str]:
        from .jobs import JOBS

        jobs, out = self._jobs(t, s), []
        for spec in JOBS:
            if jobs.running(spec.name) is None:
                out.append(f"job {spec.name} is not running")
            elif jobs.deployed_builds().get(spec.name) != jobs.build_of(spec):
                out.append(f"job {spec.name} runs another build or other arguments than this release's")
        return out

    def apply(self, t: Targets, s: Settings) -> list[str]:
        return [f"job {name} deployed" for name in self._jobs(t, s).ensure_deployed()]


def _http_json(method: str, url: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read()
        return json.loads(text) if text else {}


STEPS: tuple[Step, ...] = (
    Topics(),
    MetaKeyspace(),
    ControlPlane(),
    Connector(),
    Schemas(),
    Elasticsearch(),
    FlinkJobs(),
)


def deploy(s: Settings, check: bool, say=print) -> int:
    """Runs every step (or, with check, finds what differs); 0 when nothing is left to do."""
    t = Targets.of(s)
    say(
        f"deploy{' --check' if check else ''}: kafka {t.kafka}, cassandra "
        f"{','.join(f'{h}:{p}' for h, p in t.cassandra)}, postgres {t.postgres[0]}:{t.postgres[1]}, "
        f"connect {t.connect}, registry {t.registry}, elasticsearch {t.elasticsearch}, flink {t.flink}"
    )
    left = 0
    for step in STEPS:
        try:
            found = step.differences(t, s) if check else step.apply(t, s)
        except DeployError as e:
            say(f"  {step.name}: REFUSED: {e}")
            left += 1
            continue
        except Exception as e:  # a server that cannot be reached: named, the other steps still run
            say(f"  {step.name}: FAILED: {e}")
            left += 1
            continue
        if not found:
            say(f"  {step.name}: as Tally needs it")
        for line in found:
            say(f"  {step.name}: {line}")
        left += len(found) if check else 0
    return 0 if left == 0 else 1


def load(env_file: Path | None) -> Settings:
    return Settings.load(overlay=env_file)
