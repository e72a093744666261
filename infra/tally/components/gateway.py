"""Tally's ingestion gateway (gateway/): HTTP/JSON in, idempotent Avro events to Kafka."""

from __future__ import annotations

from .java_service import JavaService, shaded_jar


def gateway_jar():
    return shaded_jar("gateway", "tally-gateway")


class Gateway(JavaService):
    """One gateway instance. Instance 1 is `gateway` on TALLY_GATEWAY_PORT; instances 2..N
    (TALLY_GATEWAY_INSTANCES) are `gateway-<i>` on consecutive ports from
    TALLY_GATEWAY_MORE_PORTS. Each holds its own counter view and control-plane feed; none
    shares state with another, so any of them can take any request."""

    name = "gateway"
    depends = ("kafka", "registry", "connect", "cassandra", "elasticsearch")
    module, artifact, port_setting = "gateway", "tally-gateway", "TALLY_GATEWAY_PORT"
    ready_timeout = 90.0
    stop_timeout = 20.0

    def __init__(self, settings, log=print, instance: int = 1):
        super().__init__(settings, log)
        self.instance = instance
        if instance > 1:
            self.name = f"gateway-{instance}"

    metrics_job = "gateway"

    def ports(self):
        if self.instance == 1:
            return super().ports()
        return {"http": self.s.port("TALLY_GATEWAY_MORE_PORTS") + self.instance - 2}

    def max_heap(self) -> str:
        return self.s.get("TALLY_GATEWAY_HEAP")

    def initial_heap(self) -> str:
        # all of it from the start: the counter view fills it at start, and no pause is spent growing it
        return self.max_heap()

    def service_env(self):
        return {
            "TALLY_GATEWAY_HOST": self.host,
            "TALLY_GATEWAY_PORT": str(self.ports()["http"]),
            "TALLY_KAFKA_BOOTSTRAP": self.s.kafka_bootstrap(),
            "TALLY_REGISTRY_URL": f"http://{self.host}:{self.s.port('TALLY_REGISTRY_PORT')}",
            "TALLY_CONTROL_POSTGRES_URL": f"jdbc:postgresql://{self.host}:{self.s.port('TALLY_POSTGRES_PORT')}/tally_control",
            "TALLY_CONTROL_POSTGRES_USER": self.s.get("TALLY_CONTROL_ADMIN_USER"),
            "TALLY_CONTROL_POSTGRES_PASSWORD": self.s.secret("TALLY_CONTROL_ADMIN_PASSWORD"),
            "TALLY_CONNECT_URL": f"http://{self.host}:{self.s.port('TALLY_CONNECT_PORT')}",
            "TALLY_GATEWAY_ADMIN_TOKEN": self.s.admin_token(),
            "TALLY_GATEWAY_PRODUCER_COMPRESSION": self.s.get("TALLY_GATEWAY_PRODUCER_COMPRESSION"),
            "TALLY_GATEWAY_EVENT_LOOPS": self.s.get("TALLY_GATEWAY_EVENT_LOOPS"),
            "TALLY_CASSANDRA_CONTACT": ",".join(
                f"{h}:{self.s.port('TALLY_CASSANDRA_PORT')}" for h in self.s.cassandra_hosts()
            ),
            "TALLY_CASSANDRA_DATACENTER": self.s.get("TALLY_CASSANDRA_DATACENTER"),
            "TALLY_CASSANDRA_CONSISTENCY": self.s.get("TALLY_CASSANDRA_CONSISTENCY"),
            "TALLY_ELASTICSEARCH_URL": self.s.elasticsearch_url(),
            **self.s.kafka_client_env(),
            **self.s.cassandra_client_env(),
            **self.s.elasticsearch_client_env(),
        }
