"""Tally's schema registry (schemas/registry), a Confluent-compatible API on port 8085
whose only store is the compacted _schemas topic."""
from __future__ import annotations

import json
import subprocess
import urllib.request

from ..settings import REPO
from .base import JAVA, Component

JAR_DIR = REPO / "schemas" / "registry" / "target"


def registry_jar():
    jars = [j for j in JAR_DIR.glob("tally-registry-*.jar") if not j.name.startswith("original-")]
    if not jars:
        raise RuntimeError(f"no registry jar in {JAR_DIR}: run ./tally build")
    return jars[0]


class Registry(Component):
    name = "registry"
    version = "tally 0.1.0"
    depends = ("kafka",)
    ready_timeout = 60.0
    stop_timeout = 15.0

    def ports(self):
        return {"http": self.s.port("TALLY_REGISTRY_PORT")}

    def url(self):
        return f"http://{self.host}:{self.ports()['http']}"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['http']}"

    def fetch(self):
        registry_jar()

    def command(self):
        argv = [JAVA, "-Xms128m", "-Xmx256m", "-XX:+UseSerialGC", "-jar", str(registry_jar())]
        return argv, self.env(TALLY_REGISTRY_HOST=self.host, TALLY_REGISTRY_PORT=str(self.ports()["http"]),
                              TALLY_KAFKA_BOOTSTRAP=f"{self.host}:{self.s.port('TALLY_KAFKA_PORT')}")

    def ready(self):
        with urllib.request.urlopen(f"{self.url()}/healthz", timeout=3) as r:
            return json.load(r)["status"] == "UP"

    def after_ready(self):
        """Registers the value schema of each of Tally's topics (idempotent)."""
        r = subprocess.run([JAVA, "-cp", str(registry_jar()), "io.tally.registry.TallySchemaBootstrap", self.url()],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"registering Tally's schemas failed: {r.stdout[-2000:]}{r.stderr[-2000:]}")
