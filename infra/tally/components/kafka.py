"""Kafka 4 brokers in KRaft combined mode (each node is both broker and controller): one, or
three on loopback aliases (TALLY_NODES=3) with every topic replicated three times."""

from __future__ import annotations

import os
import subprocess
import time
import uuid

from ..model import tally_topics
from ..process import tcp_open
from ..settings import KAFKA_BROKER_USER
from ..tls import LocalCa
from .base import JAVA, ClusterNode

#: the MBeans the broker's exporter reads. Every MBean was read at each scrape before: 93 request
#: types x 8 timing histograms x 11 attributes of RequestMetrics alone (8,500 of 13,250 samples),
#: 16% of an idle broker's CPU (./tally profile kafka idle). Request rates and errors are kept for
#: every request, timings for the data path (produce, consumer and follower fetch), every other
#: domain whole.
JMX_INCLUDE = (
    "kafka.server:*",
    "kafka.controller:*",
    "kafka.cluster:*",
    "kafka.log:*",
    "kafka.coordinator.*:*",
    "kafka.utils:*",
    "kafka.network:type=RequestMetrics,name=RequestsPerSec,*",
    "kafka.network:type=RequestMetrics,name=ErrorsPerSec,*",
    *(
        f"kafka.network:type=RequestMetrics,name={m},request={r},*"
        for m in ("TotalTimeMs", "RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs")
        for r in ("Produce", "FetchConsumer", "FetchFollower")
    ),
    "kafka.network:type=RequestChannel,*",
    "kafka.network:type=SocketServer,*",
    "kafka.network:type=Processor,*",
    "java.lang:*",
    "java.nio:*",
)


class Kafka(ClusterNode):
    """Broker `kafka` (node 1), and with TALLY_NODES=3 `kafka-2` and `kafka-3` on the next
    loopback aliases, the same ports. Three nodes are three controller voters: a quorum needs
    two, so the first two report ready once their ports listen, and the last once all three are
    brokers of one cluster."""

    name = "kafka"
    metrics_job = "kafka"
    version = "4.3.1"
    dists = ("kafka", "jmx-exporter")
    relaxed_timers = True
    ready_timeout = 90.0

    @property
    def nodes(self) -> int:
        return self.s.nodes

    def ports(self):
        return {
            "broker": self.s.port("TALLY_KAFKA_PORT"),
            "controller": self.s.port("TALLY_KAFKA_CONTROLLER_PORT"),
            "secure": self.s.port("TALLY_KAFKA_SECURE_PORT"),
            "metrics": self.s.port("TALLY_KAFKA_METRICS_PORT"),
        }

    @property
    def bootstrap(self) -> str:
        """Where the launcher administers the brokers (topics, SCRAM users; Settings.kafka_admin_config says how)."""
        return self.s.kafka_admin_config()["bootstrap.servers"]

    def url(self):
        return f"kafka://{self.host}:{self.ports()['secure' if self.s.secure else 'broker']}"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['metrics']}"

    def configure(self):
        p = self.ports()
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        props = self.conf_dir / "server.properties"
        n = self.nodes
        replicas, min_isr = min(n, 3), (2 if n >= 3 else 1)
        if n == 1:
            quorum = f"controller.quorum.bootstrap.servers={self.host}:{p['controller']}"
        else:  # a static quorum of every node
            quorum = "controller.quorum.voters=" + ",".join(
                f"{i}@{self.s.node_host(i)}:{p['controller']}" for i in range(1, n + 1)
            )
        ca = LocalCa(self.s)
        keystore, store_password = ca.component_keystore(self)
        listeners = self.secure_listeners(ca.ensure()) if self.s.secure else self.listeners()
        props.write_text(f"""# Written by ./tally up; edit infra/tally/components/kafka.py instead.
process.roles=broker,controller
node.id={self.node}
{quorum}
{listeners}
ssl.keystore.type=PKCS12
ssl.keystore.location={keystore}
ssl.keystore.password={store_password}
ssl.key.password={store_password}
log.dirs={self.data_dir}
num.partitions={self.s.int("TALLY_TOPIC_PARTITIONS")}
default.replication.factor={replicas}
min.insync.replicas={min_isr}
offsets.topic.replication.factor={replicas}
transaction.state.log.replication.factor={replicas}
transaction.state.log.min.isr={min_isr}
share.coordinator.state.topic.replication.factor={replicas}
share.coordinator.state.topic.min.isr={min_isr}
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
log.retention.hours=168
""")
        os.chmod(props, 0o600)  # it holds the key store's password, and the broker's own in the secure profile
        self.write_console_log4j2({"kafka.log": "WARN", "org.apache.kafka.storage": "WARN"})
        if not (self.data_dir / "meta.properties").exists():
            self.log("formatting Kafka storage (KRaft)")
            cluster_id = self.cluster_id()
            r = subprocess.run(
                [
                    JAVA,
                    "-cp",
                    f"{self.lib}/*",
                    f"-Dlog4j2.configurationFile={self.conf_dir}/log4j2.yaml",
                    "kafka.tools.StorageTool",
                    "format",
                    *(["--standalone"] if n == 1 else []),
                    f"--cluster-id={cluster_id}",
                    "-c",
                    str(props),
                ],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0:
                raise RuntimeError(f"Kafka storage format failed: {r.stdout}{r.stderr}")

    def listeners(self) -> str:
        """PLAINTEXT for the brokers' own links and the launcher, SASL_SSL beside it for clients."""
        p = self.ports()
        return f"""listeners=PLAINTEXT://{self.host}:{p["broker"]},SASL_SSL://{self.host}:{p["secure"]},CONTROLLER://{self.host}:{p["controller"]}
advertised.listeners=PLAINTEXT://{self.host}:{p["broker"]},SASL_SSL://{self.host}:{p["secure"]}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT
# SASL_SSL: SCRAM-SHA-512 users (made by `up` through the Admin API) over TLS
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"""

    def secure_listeners(self, ca_pem) -> str:
        """The secure profile: no plaintext listener. Clients log in with SCRAM-SHA-512 over TLS;
        the broker's own links (to itself as broker and controller) and the launcher's first
        connection, before any SCRAM user exists, use PLAIN over TLS as the broker's identity,
        whose password is only in this file (mode 600) and the stack's secrets."""
        p = self.ports()
        user, pw = KAFKA_BROKER_USER, self.s.kafka_broker_password()
        plain = (
            f'org.apache.kafka.common.security.plain.PlainLoginModule required username="{user}" '
            f'password="{pw}" user_{user}="{pw}";'
        )
        return f"""listeners=SASL_SSL://{self.host}:{p["secure"]},CONTROLLER://{self.host}:{p["controller"]}
advertised.listeners=SASL_SSL://{self.host}:{p["secure"]}
controller.listener.names=CONTROLLER
inter.broker.listener.name=SASL_SSL
listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
sasl.mechanism.controller.protocol=PLAIN
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.plain.sasl.jaas.config={plain}
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config={plain}
ssl.truststore.type=PEM
ssl.truststore.location={ca_pem}"""

    def command(self):
        heap = self.s.get("TALLY_KAFKA_HEAP")
        argv = [
            JAVA,
            f"-Xms{heap}",
            f"-Xmx{heap}",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.conf_dir}/log4j2.yaml",
            self.jmx_agent(
                self.ports()["metrics"],
                "- pattern: 'kafka.server<type=(.+), name=(.+)PerSec\\\\w*><>Count'\n"
                "  name: kafka_server_$1_$2_total\n"
                "- pattern: '.*'\n",
                JMX_INCLUDE,
            ),
            "-cp",
            f"{self.lib}/*",
            "kafka.Kafka",
            str(self.conf_dir / "server.properties"),
        ]
        return argv, self.env()

    def cluster_id(self) -> str:
        """One id for every node of the cluster (kept beside the nodes' data), made by whichever
        node formats first: `up` starts the brokers side by side, so node 1 is not always first."""
        path = self.s.data("kafka-cluster-id")
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            draft = path.with_name(f".{path.name}.{os.getpid()}.{self.node}")
            draft.write_text(_kafka_uuid())
            try:
                os.link(draft, path)  # atomic, and refused if another node made it meanwhile
            except FileExistsError:
                pass
            finally:
                draft.unlink()
        return path.read_text().strip()

    def ready(self):
        from confluent_kafka.admin import AdminClient

        if self.node < self.nodes:  # a quorum of voters needs the next node up first
            return tcp_open(self.host, self.ports()["controller"])
        if not tcp_open(self.host, self.ports()["secure" if self.s.secure else "broker"]):
            return False
        admin = AdminClient(self.s.kafka_admin_config())
        md = admin.list_topics(timeout=2)
        return len(md.brokers) >= self.nodes

    def after_ready(self):
        if self.node == self.nodes:  # the last node: every broker is there
            retrying_admin(
                lambda: create_topics(
                    self.bootstrap,
                    tally_topics(self.s.int("TALLY_TOPIC_PARTITIONS")),
                    replicas=min(self.nodes, 3),
                    client=self.s.kafka_admin_config(),
                )
            )
            retrying_admin(
                lambda: ensure_scram_user(
                    self.bootstrap,
                    self.s.get("TALLY_KAFKA_SCRAM_USER"),
                    self.s.kafka_scram_password(),
                    client=self.s.kafka_admin_config(),
                )
            )


def transient_admin_error(e: Exception) -> bool:
    """An Admin API failure worth the same call again: retriable by Kafka's own flag, or the
    client losing its connection under it (a cluster that restarts elects leaders for a while;
    librdkafka fails a request whose broker handle it replaced: _DESTROY_BROKER)."""
    from confluent_kafka import KafkaError, KafkaException

    if not isinstance(e, KafkaException) or not e.args or not isinstance(e.args[0], KafkaError):
        return False
    err = e.args[0]
    return err.retriable() or err.code() in (
        KafkaError._DESTROY_BROKER,
        KafkaError._TRANSPORT,
        KafkaError._TIMED_OUT,
        KafkaError._ALL_BROKERS_DOWN,
    )


def retrying_admin(call, attempts: int = 5, pause_s: float = 3.0):
    """call() (idempotent: topics made if missing, a credential set), again on a transient error."""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except Exception as e:
            if attempt == attempts or not transient_admin_error(e):
                raise
            time.sleep(pause_s)


def _kafka_uuid() -> str:
    """A Kafka cluster id: 16 random bytes, URL-safe base64 without padding, never starting with
    '-' (as Kafka's own Uuid.randomUuid: a command line would read it as an option)."""
    import base64

    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


SCRAM_ITERATIONS = 8192  # Kafka's kafka-configs default for SCRAM-SHA-512


def ensure_scram_user(bootstrap: str, user: str, password: str, client: dict | None = None) -> None:
    """Sets the SCRAM-SHA-512 credential of `user` (made or replaced: idempotent) through the
    Admin API (the PLAINTEXT listener, or `client`'s), so the password is on no command line."""
    from confluent_kafka.admin import (
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient(client or {"bootstrap.servers": bootstrap, "log_level": 0})
    upsert = UserScramCredentialUpsertion(
        user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS), password.encode()
    )
    for fut in admin.alter_user_scram_credentials([upsert]).values():
        fut.result(timeout=30)


def align_configs(admin, configs: dict[str, dict[str, str]]) -> None:
    """Sets the declared configs on topics that exist already (a stack made by an older version)."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    if not configs:
        return
    resources = [
        ConfigResource(
            "topic",
            t,
            incremental_configs=[
                ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in cfg.items()
            ],
        )
        for t, cfg in configs.items()
    ]
    for fut in admin.incremental_alter_configs(resources).values():
        fut.result()


def create_topics(
    bootstrap: str, topics: dict[str, tuple[int, dict[str, str]]], replicas: int = 1, client: dict | None = None
) -> list[str]:
    """Creates the topics that do not exist yet (with `replicas` copies of each partition); returns
    their names. `client`: the admin client's configuration (security) when not the local broker's."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(client or {"bootstrap.servers": bootstrap, "log_level": 0})
    existing = set(admin.list_topics(timeout=10).topics)
    new = [
        NewTopic(t, num_partitions=n, replication_factor=replicas, config=cfg)
        for t, (n, cfg) in topics.items()
        if t not in existing
    ]
    align_configs(admin, {t: cfg for t, (_, cfg) in topics.items() if t in existing and cfg})
    if not new:
        return []
    for _topic, fut in admin.create_topics(new, request_timeout=30).items():
        try:
            fut.result()
        except Exception as e:
            if "TOPIC_ALREADY_EXISTS" not in str(e):
                raise
    return [t.topic for t in new]
