"""Kafka Connect standalone running the Debezium Postgres connector for the control plane.

Debezium's Kafka libraries are excluded in infra/dist/connect, so one Kafka version is
on the classpath. Offsets live in a file (standalone mode), so a restart resumes."""

from __future__ import annotations

import json
import urllib.request

from ..model import topic
from ..settings import REPO
from .base import JAVA, Component

CONNECTOR = "tally-control-plane"
CONTROL_TOPIC = topic("control_namespaces")
CONNECTOR_CONFIG = REPO / "infra" / "connect" / f"{CONNECTOR}.json"


class Connect(Component):
    name = "connect"
    version = "4.3.1 + debezium 3.6.1.Final"
    depends = ("kafka", "postgres")
    dists = ("connect", "jmx-exporter")
    relaxed_timers = True
    background_cpu = True
    restart_on_change = True
    ready_timeout = 120.0
    stop_timeout = 30.0

    def ports(self):
        return {"rest": self.s.port("TALLY_CONNECT_PORT"), "metrics": self.s.port("TALLY_CONNECT_METRICS_PORT")}

    def url(self):
        return f"http://{self.host}:{self.ports()['rest']}"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['metrics']}"

    def configure(self):
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        kafka = self.s.kafka_bootstrap()
        (
            self.conf_dir / "worker.properties"
        ).write_text(f"""# Written by ./tally up; edit infra/tally/components/connect.py instead.
bootstrap.servers={kafka}
listeners=http://{self.host}:{self.ports()["rest"]}
rest.advertised.host.name={self.host}
key.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter=org.apache.kafka.connect.json.JsonConverter
value.converter.schemas.enable=false
offset.storage.file.filename={self.data_dir / "connect.offsets"}
offset.flush.interval.ms=1000
plugin.discovery=only_scan
# The connector config (infra/connect/tally-control-plane.json, shared with docker-compose)
# takes addresses and credentials from the environment.
config.providers=env
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
{self.kafka_security()}""")
        self.write_console_log4j2(None)

    def kafka_security(self) -> str:
        """Kafka's client security for the worker and the clients it makes for connectors
        (producer., consumer., admin.): the password a reference to the worker's environment."""
        props = self.s.kafka_java_properties("${env:TALLY_KAFKA_SASL_PASSWORD}")
        if not props:
            return ""
        lines = ["# Kafka's client security (TALLY_KAFKA_SECURITY_PROTOCOL, ...)"]
        for prefix in ("", "producer.", "consumer.", "admin."):
            lines += [f"{prefix}{k}={v}" for k, v in props.items()]
        return "\n".join(lines) + "\n"

    def command(self):
        heap = self.s.get("TALLY_CONNECT_HEAP")
        argv = [
            JAVA,
            f"-Xms{heap}",
            f"-Xmx{heap}",
            "-XX:+UseG1GC",
            f"-Dlog4j2.configurationFile={self.conf_dir}/log4j2.yaml",
            self.jmx_agent(self.ports()["metrics"]),
            "-cp",
            f"{self.lib}/*",
            "org.apache.kafka.connect.cli.ConnectStandalone",
            str(self.conf_dir / "worker.properties"),
            str(CONNECTOR_CONFIG),
        ]
        return argv, self.env(
            TALLY_PG_HOST=self.host,
            TALLY_PG_PORT=str(self.s.port("TALLY_POSTGRES_PORT")),
            TALLY_CDC_USER=self.s.get("TALLY_CDC_USER"),
            TALLY_CDC_PASSWORD=self.s.secret("TALLY_CDC_PASSWORD"),
            **self.s.kafka_client_env(),
        )

    def status(self) -> dict:
        with urllib.request.urlopen(f"{self.url()}/connectors/{CONNECTOR}/status", timeout=3) as r:
            return json.load(r)

    def after_ready(self):
        """The connector snapshots the namespaces table when it first runs; the gateway and the
        jobs replay the control topic at start, so up waits for the snapshot to be in Kafka."""
        import time

        from confluent_kafka import Consumer, TopicPartition

        from .postgres import Postgres

        if Postgres(self.s).psql("SELECT count(*) FROM namespaces", db="tally_control") == "0":
            return
        c = Consumer(
            {
                **self.s.kafka_client_config(),
                "group.id": "tally-up",
                "enable.auto.commit": False,
                "log_level": 0,
            }
        )
        try:
            deadline = time.monotonic() + 60
            while c.get_watermark_offsets(TopicPartition(CONTROL_TOPIC, 0), timeout=5)[1] <= 0:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the control-plane snapshot did not reach {CONTROL_TOPIC} within 60 s; see ./tally logs connect"
                    )
                time.sleep(0.5)
        finally:
            c.close()

    def ready(self):
        st = self.status()
        tasks = st.get("tasks", [])
        return st["connector"]["state"] == "RUNNING" and bool(tasks) and all(t["state"] == "RUNNING" for t in tasks)
