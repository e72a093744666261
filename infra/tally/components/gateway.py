"""Tally's ingestion gateway (gateway/): HTTP/JSON in, idempotent Avro events to Kafka."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

from ..settings import REPO
from .base import JAVA, Component

JAR_DIR = REPO / "gateway" / "target"


def gateway_jar():
    jars = [j for j in JAR_DIR.glob("tally-gateway-*.jar") if not j.name.startswith("original-")]
    if not jars:
        raise RuntimeError(f"no gateway jar in {JAR_DIR}: run ./tally build")
    return jars[0]


class Gateway(Component):
    name = "gateway"
    version = "tally 0.1.0"
    depends = ("kafka", "registry")
    ready_timeout = 90.0
    stop_timeout = 20.0

    def ports(self):
        return {"http": self.s.port("TALLY_GATEWAY_PORT")}

    def url(self):
        return f"http://{self.host}:{self.ports()['http']}"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['http']}"

    def fetch(self):
        gateway_jar()

    def command(self):
        argv = [JAVA, "-Xms256m", "-Xmx512m", "-XX:+UseG1GC", "-jar", str(gateway_jar())]
        return argv, self.env(
            TALLY_GATEWAY_HOST=self.host, TALLY_GATEWAY_PORT=str(self.ports()["http"]),
            TALLY_KAFKA_BOOTSTRAP=f"{self.host}:{self.s.port('TALLY_KAFKA_PORT')}",
            TALLY_REGISTRY_URL=f"http://{self.host}:{self.s.port('TALLY_REGISTRY_PORT')}",
            TALLY_GATEWAY_NAMESPACES_DIR=str(REPO / "infra" / "namespaces"))

    def ready(self):
        try:
            with urllib.request.urlopen(f"{self.url()}/healthz", timeout=3) as r:
                return json.load(r)["status"] == "UP"
        except urllib.error.HTTPError:
            return False
