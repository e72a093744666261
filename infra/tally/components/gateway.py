"""Tally's ingestion gateway (gateway/): HTTP/JSON in, idempotent Avro events to Kafka."""
from __future__ import annotations

from ..settings import REPO
from .java_service import JavaService, shaded_jar


def gateway_jar():
    return shaded_jar("gateway", "tally-gateway")


class Gateway(JavaService):
    name = "gateway"
    depends = ("kafka", "registry")
    module, artifact, port_setting = "gateway", "tally-gateway", "TALLY_GATEWAY_PORT"
    heap = "512m"
    ready_timeout = 90.0
    stop_timeout = 20.0

    def service_env(self):
        return {"TALLY_GATEWAY_HOST": self.host, "TALLY_GATEWAY_PORT": str(self.ports()["http"]),
                "TALLY_KAFKA_BOOTSTRAP": f"{self.host}:{self.s.port('TALLY_KAFKA_PORT')}",
                "TALLY_REGISTRY_URL": f"http://{self.host}:{self.s.port('TALLY_REGISTRY_PORT')}",
                "TALLY_GATEWAY_NAMESPACES_DIR": str(REPO / "infra" / "namespaces"),
                "TALLY_CASSANDRA_CONTACT": f"{self.host}:{self.s.port('TALLY_CASSANDRA_PORT')}",
                "TALLY_ELASTICSEARCH_URL": f"http://{self.host}:{self.s.port('TALLY_ELASTICSEARCH_PORT')}"}
