"""Cassandra 5 single node, started from the cassandra-all jar (no tarball on Maven)."""

from __future__ import annotations

import os
import re
import secrets
import time

from .. import process
from ..fetch import jar
from ..settings import REPO
from ..tls import LocalCa
from .base import JAVA, ClusterNode

# Upstream conf/jvm17-server.options: module access Cassandra needs on Java 17.
JVM17_OPTIONS = """
-Djdk.attach.allowAttachSelf=true
--add-exports java.base/jdk.internal.misc=ALL-UNNAMED
--add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
--add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
--add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
--add-exports java.sql/java.sql=ALL-UNNAMED
--add-exports java.base/java.lang.ref=ALL-UNNAMED
--add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
--add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
--add-exports jdk.attach/sun.tools.attach=ALL-UNNAMED
--add-opens java.base/java.lang.module=ALL-UNNAMED
--add-opens java.base/jdk.internal.loader=ALL-UNNAMED
--add-opens java.base/jdk.internal.ref=ALL-UNNAMED
--add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
--add-opens java.base/jdk.internal.math=ALL-UNNAMED
--add-opens java.base/jdk.internal.module=ALL-UNNAMED
--add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
--add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
--add-opens java.base/sun.nio.ch=ALL-UNNAMED
--add-opens java.base/java.io=ALL-UNNAMED
--add-opens java.base/java.lang.reflect=ALL-UNNAMED
--add-opens jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
--add-opens java.base/java.lang=ALL-UNNAMED
--add-opens java.base/java.util=ALL-UNNAMED
-Dio.netty.tryReflectionSetAccessible=true
-Dio.netty.allocator.useCacheForAllThreads=true
-Dio.netty.allocator.maxOrder=11
"""

META_CQL = REPO / "infra" / "cassandra" / "tally_meta.cql"
ROLE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,47}")


def login_refused(error: Exception) -> bool:
    """Whether connecting failed because the node refused the login (it is up and asks for one)."""
    from cassandra import AuthenticationFailed
    from cassandra.cluster import NoHostAvailable

    if isinstance(error, AuthenticationFailed):
        return True
    return isinstance(error, NoHostAvailable) and any(
        isinstance(e, AuthenticationFailed) for e in (error.errors or {}).values()
    )


def auth_unavailable(error: Exception) -> bool:
    """Whether connecting failed because the node could not read the roles at the consistency
    logins need (Cassandra 5 reads them at LOCAL_QUORUM): a node just started that does not see
    its peers alive yet, which gossip settles within seconds."""
    from cassandra import Unavailable
    from cassandra.cluster import NoHostAvailable

    if isinstance(error, Unavailable):
        return True
    return isinstance(error, NoHostAvailable) and any(isinstance(e, Unavailable) for e in (error.errors or {}).values())


def while_peers_unseen(action, seconds: float = 60.0, sleep=time.sleep, clock=time.monotonic):
    """`action()`, tried again while it fails with `auth_unavailable`: a statement on roles (the
    node reads them at LOCAL_QUORUM) sent to a node that does not see its peers alive yet. CI's
    third node (2026-11-29) refused the role's CREATE a second after it had connected."""
    deadline = clock() + seconds
    while True:
        try:
            return action()
        except Exception as e:
            if not auth_unavailable(e) or clock() > deadline:
                raise
        sleep(1)


ONE_NODE_REPLICATION = "{'class': 'SimpleStrategy', 'replication_factor': 1}"
CONSISTENCY_LEVELS = {"ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM", "EACH_QUORUM"}


def schema_agrees(local_version, peers) -> bool:
    """Whether a node's schema version is that of every peer seen up (`peers`: (version, is_up));
    a peer down or not seen yet (is_up None) is not waited for."""
    return all(version == local_version for version, up in peers if up)


def schema_versions(cluster, session) -> dict:
    """Each node the driver has up, by address: its own schema version (its system.local), asked
    of it directly through one session (a node's system.peers holds its peers' versions of
    before its restart). None for one that does not answer."""
    versions = {}
    for host in cluster.metadata.all_hosts():
        if not host.is_up:
            continue
        try:
            row = session.execute("SELECT schema_version FROM system.local", host=host, timeout=10).one()
            versions[str(host.address)] = row.schema_version if row else None
        except Exception:  # noqa: BLE001 - a node going down between the listing and the ask
            versions[str(host.address)] = None
    return versions


def keyspace_replication(s) -> str:
    """The replication map of Tally's keyspaces from the settings (the jobs' KeyspaceReplication
    makes the same for the namespaces' keyspaces from the same settings)."""
    strategy, factor = s.get("TALLY_CASSANDRA_REPLICATION_STRATEGY"), s.int("TALLY_CASSANDRA_REPLICATION_FACTOR")
    dc = s.get("TALLY_CASSANDRA_DATACENTER")
    if not 1 <= factor <= 9:
        raise ValueError(f"TALLY_CASSANDRA_REPLICATION_FACTOR={factor}: 1 to 9")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", dc):
        raise ValueError(f"TALLY_CASSANDRA_DATACENTER={dc!r} is not a safe datacenter name")
    if s.get("TALLY_CASSANDRA_CONSISTENCY") not in CONSISTENCY_LEVELS:
        raise ValueError(f"TALLY_CASSANDRA_CONSISTENCY: one of {', '.join(sorted(CONSISTENCY_LEVELS))}")
    if strategy == "SimpleStrategy":
        return f"{{'class': 'SimpleStrategy', 'replication_factor': {factor}}}"
    if strategy == "NetworkTopologyStrategy":
        return f"{{'class': 'NetworkTopologyStrategy', '{dc}': {factor}}}"
    raise ValueError(f"TALLY_CASSANDRA_REPLICATION_STRATEGY={strategy!r}: SimpleStrategy or NetworkTopologyStrategy")


def with_replication(statement: str, replication: str) -> str:
    """A statement of tally_meta.cql with the deployment's replication (the file says one node's)."""
    return statement.replace(ONE_NODE_REPLICATION, replication)


def cql_statements(path) -> list[str]:
    """The statements of a .cql file: '--' comments dropped, split on ';'."""
    text = "\n".join(l for l in path.read_text().splitlines() if not l.strip().startswith("--"))
    return [st.strip() for st in text.split(";") if st.strip()]


class Cassandra(ClusterNode):
    """Node `cassandra`, and with TALLY_NODES=3 `cassandra-2` and `cassandra-3` on the next
    loopback aliases with the same ports (as ccm does); the first is every node's seed. The
    local profile's nodes join without streaming (auto_bootstrap false): the ring forms at the
    first `up`, before anything is written."""

    name = "cassandra"
    metrics_job = "cassandra"
    version = "5.0.9"
    dists = ("cassandra", "jmx-exporter")
    relaxed_timers = True
    joins_one_at_a_time = True  # a ring takes one joining node at a time
    # A node restarted after kill -9 replays its commit log and opens every table before it answers:
    # 99 s on this box under the three-node suite's load, past 180 s on a slower CI machine.
    ready_timeout = 420.0
    stop_timeout = 30.0

    def ports(self):
        return {
            "cql": self.s.port("TALLY_CASSANDRA_PORT"),
            "storage": self.s.port("TALLY_CASSANDRA_STORAGE_PORT"),
            "metrics": self.s.port("TALLY_CASSANDRA_METRICS_PORT"),
        }

    def url(self):
        return f"cql://{self.host}:{self.ports()['cql']}"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['metrics']}"

    def configure(self):
        p = self.ports()
        d = self.data_dir
        for sub in ("data", "commitlog", "saved_caches", "hints", "cdc_raw"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        keystore, store_password = LocalCa(self.s).component_keystore(self)
        periodic = self.s.get("TALLY_CASSANDRA_COMMITLOG_SYNC") == "periodic"  # writes wait for no sync
        (
            self.conf_dir / "cassandra.yaml"
        ).write_text(f"""# Written by ./tally up; edit infra/tally/components/cassandra.py instead.
cluster_name: tally-local
num_tokens: 16
allocate_tokens_for_local_replication_factor: {min(self.s.nodes, 3)}
auto_bootstrap: {"true" if self.s.nodes == 1 else "false"}
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
data_file_directories: [{d / "data"}]
commitlog_directory: {d / "commitlog"}
saved_caches_directory: {d / "saved_caches"}
hints_directory: {d / "hints"}
cdc_raw_directory: {d / "cdc_raw"}
{self.commitlog_sync()}
commitlog_segment_size: 32MiB
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "{self.s.node_host(1)}:{p["storage"]}"
listen_address: {self.host}
rpc_address: {self.host}
storage_port: {p["storage"]}
native_transport_port: {p["cql"]}
start_native_transport: true
endpoint_snitch: SimpleSnitch
# every client logs in (the role `up` makes, TALLY_CASSANDRA_USERNAME); what a role may do is not
# restricted (AllowAllAuthorizer): Tally's one role creates the namespaces' keyspaces and tables
authenticator: PasswordAuthenticator
# TLS on the native port: beside plaintext (optional) for clients with TALLY_CASSANDRA_SSL=true,
# or only TLS in the secure profile
client_encryption_options:
  enabled: true
  optional: {"false" if self.s.secure else "true"}
  keystore: {keystore}
  keystore_password: {store_password}
  store_type: PKCS12
authorizer: AllowAllAuthorizer
disk_failure_policy: stop
commit_failure_policy: stop
# Few request and mutation threads for a node on 2 cores: an idle worker of Cassandra's shared pool
# spins in short parks (futex) waiting for work, and 16 of them spun more than they worked
# (./tally profile cassandra addcount_eventual: mutation + native request threads 154 -> 121-132
# us an AddCount, futex 38% -> 5-23% of samples). Unless each write waits for its commit-log
# sync (group, batch): a request thread then waits once for every partition it writes, and 2 and
# 4 of them took 50 writes a second.
concurrent_reads: 4
concurrent_writes: {2 if periodic else 32}
concurrent_counter_writes: 2
native_transport_max_threads: {4 if periodic else 32}
concurrent_materialized_view_writes: 8
# Cassandra 5's trie memtable (its cassandra_latest.yaml default): a sharded trie of the rows
# in off-heap buffers, instead of a skip list of on-heap objects per cell.
memtable:
  configurations:
    skiplist:
      class_name: SkipListMemtable
    trie:
      class_name: TrieMemtable
    default:
      inherits: trie
memtable_allocation_type: offheap_objects
read_request_timeout: 10000ms
range_request_timeout: 20000ms
write_request_timeout: 5000ms
request_timeout: 20000ms
batch_size_warn_threshold: {max(64, -(-int(self.s.get("TALLY_CASSANDRA_BATCH_BYTES")) // 1024))}KiB
batch_size_fail_threshold: 640KiB
unlogged_batch_across_partitions_warn_threshold: {max(10, int(self.s.get("TALLY_CASSANDRA_BATCH_PARTITIONS")))}
dynamic_snitch: false
""")
        os.chmod(self.conf_dir / "cassandra.yaml", 0o600)  # it holds the key store's password
        (self.conf_dir / "logback.xml").write_text("""<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
""")

    def commitlog_sync(self) -> str:
        """The commit log's sync mode (TALLY_CASSANDRA_COMMITLOG_SYNC): group or batch acknowledge a
        write once it is synced; periodic (the default) acknowledges before (a killed node loses its
        last ~100 ms of acknowledged writes, CASSANDRA-13987)."""
        mode = self.s.get("TALLY_CASSANDRA_COMMITLOG_SYNC")
        window = int(self.s.get("TALLY_CASSANDRA_COMMITLOG_WINDOW_MS"))
        if window < 1:
            raise ValueError(f"TALLY_CASSANDRA_COMMITLOG_WINDOW_MS={window}: at least 1")
        if mode == "group":
            return f"commitlog_sync: group\ncommitlog_sync_group_window: {window}ms"
        if mode == "batch":
            return "commitlog_sync: batch"
        if mode == "periodic":
            return f"commitlog_sync: periodic\ncommitlog_sync_period: {window}ms"
        raise ValueError(f"TALLY_CASSANDRA_COMMITLOG_SYNC={mode!r}: group, batch or periodic")

    def command(self):
        heap = self.s.get("TALLY_CASSANDRA_HEAP")
        jamm = jar(self.lib, "jamm")
        argv = [
            JAVA,
            f"-Xms{heap}",
            f"-Xmx{heap}",
            "-XX:+UseG1GC",
            "-XX:MaxGCPauseMillis=300",
            "-Xss256k",
            *JVM17_OPTIONS.split(),
            f"-javaagent:{jamm}",
            self.jmx_agent(
                self.ports()["metrics"],
                "- pattern: 'org.apache.cassandra.metrics<type=(\\\\w+), name=(\\\\w+)><>(Count|Value)'\n"
                "  name: cassandra_$1_$2\n",
                # the rule's MBeans only: a scrape read every table's (thousands with the slice
                # tables) and took 0.66 s of Cassandra's time every 15 s for 104 samples
                include=("org.apache.cassandra.metrics:type=*,name=*",),
            ),
            f"-Dcassandra.config=file://{self.conf_dir}/cassandra.yaml",
            f"-Dlogback.configurationFile={self.conf_dir}/logback.xml",
            f"-Dcassandra.logdir={self.data_dir}/logs",
            f"-Dcassandra.storagedir={self.data_dir}",
            "-Dcassandra-foreground=yes",
            # A single node, or a local ring formed before any data: skip the settling delays
            # made for real clusters.
            "-Dcassandra.ring_delay_ms=1000",
            "-Dcassandra.skip_wait_for_gossip_to_settle=0",
            "-Dcassandra.superuser_setup_delay_ms=0",
            "-cp",
            f"{self.lib}/*",
            "org.apache.cassandra.service.CassandraDaemon",
        ]
        return argv, self.env()

    def session(self, **login):
        """A session on this node with Tally's login and TLS (`login`: another auth_provider). A
        login the node cannot check yet (its peers not seen alive: `auth_unavailable`) is tried
        again for up to a minute."""
        from cassandra.cluster import Cluster

        def connect():
            cluster = Cluster(
                [self.host], port=self.ports()["cql"], connect_timeout=3, **{**self.s.cassandra_connect_args(), **login}
            )
            try:
                return cluster, cluster.connect()
            except Exception:
                cluster.shutdown()
                raise

        return while_peers_unseen(connect)

    def ready(self):
        try:
            cluster, session = self.session()
        except Exception as e:
            # a node that asks for a login answers: the role is after_ready's to make
            return login_refused(e)
        try:
            return session.execute("SELECT release_version FROM system.local").one() is not None
        finally:
            cluster.shutdown()

    def schema_caught_up(self) -> bool:
        """Whether this node has the schema of every other node seen up, each asked for its own
        version: a node back from a kill still holds its peers' versions of before it (in
        system.peers), so its own view agrees before it has pulled what changed while it was down."""
        try:
            cluster, session = self.session()
        except Exception as e:
            if login_refused(e):
                return True  # a new cluster: Tally's role, made once every node is up, and all else to come
            raise
        try:
            versions = schema_versions(cluster, session)
            local = versions.get(self.host)
            others = [(v, True) for host, v in versions.items() if host != self.host]
            return local is not None and schema_agrees(local, others)
        finally:
            cluster.shutdown()

    def after_ready(self):
        if self.s.nodes > 1:
            # A node back from a stop answers CQL before it has pulled what changed while it was
            # down; a read of a table it lacks fails (INCOMPATIBLE_SCHEMA) until it has.
            process.wait_until(f"{self.name}: the schema of its peers", self.schema_caught_up, 120.0, lambda: True)
        if self.node < self.s.nodes:
            return  # the login and tally_meta are the cluster's: made once every node is up
        self.ensure_role()
        cluster, session = self.session()
        try:
            for stmt in cql_statements(META_CQL):
                session.execute(with_replication(stmt, keyspace_replication(self.s)), timeout=30)
        finally:
            cluster.shutdown()

    def ensure_role(self) -> None:
        """Tally's role (TALLY_CASSANDRA_USERNAME) with its password, made through the default
        superuser of a new cluster, which is then disabled (a random password, no login). On
        three nodes the roles are replicated to every node first, so a node down refuses no login.
        Idempotent: a later `up` finds the role logging in and the default superuser disabled."""
        from cassandra.auth import PlainTextAuthProvider

        user = self.s.get("TALLY_CASSANDRA_USERNAME")
        if not user:
            return
        if not ROLE_NAME.fullmatch(user):
            raise ValueError(f"TALLY_CASSANDRA_USERNAME={user!r} is not a plain role name (letters, digits, _)")
        try:
            cluster, session = self.session()
        except Exception as e:
            if not login_refused(e):
                raise
            self._make_role(user, PlainTextAuthProvider("cassandra", "cassandra"))
            cluster, session = self.session()
        try:

            def disable_default():
                default = session.execute("SELECT can_login FROM system_auth.roles WHERE role = 'cassandra'").one()
                if default is None or not default.can_login:
                    return False
                session.execute(
                    "ALTER ROLE cassandra WITH PASSWORD = %s AND LOGIN = false", (secrets.token_urlsafe(32),)
                )
                return True

            if while_peers_unseen(disable_default):
                self.log("   disabled Cassandra's default superuser")
        finally:
            cluster.shutdown()

    def _make_role(self, user: str, default_superuser) -> None:
        deadline = time.monotonic() + 30  # a new node makes its default superuser just after it starts
        while True:
            try:
                cluster, session = self.session(auth_provider=default_superuser)
                break
            except Exception as e:
                if not login_refused(e):
                    raise
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"Cassandra refuses {user}'s password and its default superuser: set"
                        " TALLY_CASSANDRA_PASSWORD (or _FILE) to the role's password"
                    ) from None
                time.sleep(1)

        def make():
            if self.s.nodes > 1:
                session.execute(f"ALTER KEYSPACE system_auth WITH replication = {keyspace_replication(self.s)}")
            # the role name is checked by the caller; the password goes as a value the driver quotes
            exists = session.execute("SELECT role FROM system_auth.roles WHERE role = %s", (user,)).one()
            verb = "ALTER" if exists else "CREATE"  # a role left with another password is given this one
            session.execute(
                f'{verb} ROLE "{user}" WITH PASSWORD = %s AND LOGIN = true AND SUPERUSER = true',
                (self.s.cassandra_password(),),
            )

        try:
            while_peers_unseen(make)
            self.log(f"   made the Cassandra role {user}")
        finally:
            cluster.shutdown()
