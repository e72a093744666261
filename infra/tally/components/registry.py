"""Tally's schema registry (schemas/registry), a Confluent-compatible API on port 8085
whose only store is the compacted _schemas topic."""

from __future__ import annotations

import os
import subprocess

from .base import JAVA
from .java_service import JavaService, shaded_jar


def registry_jar():
    return shaded_jar("schemas/registry", "tally-registry")


class Registry(JavaService):
    name = "registry"
    depends = ("kafka",)
    module, artifact, port_setting = "schemas/registry", "tally-registry", "TALLY_REGISTRY_PORT"
    ready_timeout = 60.0
    stop_timeout = 15.0

    def service_env(self):
        return {
            "TALLY_REGISTRY_HOST": self.host,
            "TALLY_REGISTRY_PORT": str(self.ports()["http"]),
            "TALLY_KAFKA_BOOTSTRAP": self.s.kafka_bootstrap(),
            "TALLY_REGISTRY_ADMIN_TOKEN": self.s.admin_token(),
            **self.s.kafka_client_env(),
        }

    def after_ready(self):
        """Registers the value schema of each of Tally's topics (idempotent)."""
        r = subprocess.run(
            [JAVA, "-cp", str(self.jar()), "io.tally.registry.TallySchemaBootstrap", self.url()],
            capture_output=True,
            text=True,
            env={**os.environ, "TALLY_ADMIN_TOKEN": self.s.admin_token()},
        )
        if r.returncode != 0:
            raise RuntimeError(f"registering Tally's schemas failed: {r.stdout[-2000:]}{r.stderr[-2000:]}")
