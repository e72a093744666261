"""A Tally service of this repo that runs as a shaded jar (registry, gateway, ...)."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

from ..settings import REPO
from .base import JAVA, Component


def shaded_jar(module: str, artifact: str) -> Path:
    target = REPO / module / "target"
    jars = [j for j in target.glob(f"{artifact}-*.jar") if not j.name.startswith("original-")]
    if not jars:
        raise RuntimeError(f"no {artifact} jar in {target}: run ./tally build")
    return jars[0]


class JavaService(Component):
    """Runs `java -jar <module>/target/<artifact>-*.jar`, healthy when /healthz says UP."""

    version = "tally 0.1.0"
    restart_on_change = True  # a new password or address restarts it, as a new build does
    module = ""
    artifact = ""
    port_setting = ""
    heap = "256m"

    def max_heap(self) -> str:
        return self.heap

    def initial_heap(self) -> str:
        return "128m"

    def ports(self):
        return {"http": self.s.port(self.port_setting)}

    def url(self):
        return f"http://{self.host}:{self.ports()['http']}"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['http']}"

    def jar(self) -> Path:
        return shaded_jar(self.module, self.artifact)

    def fetch(self):
        self.jar()

    def service_env(self) -> dict[str, str]:
        return {}

    def running_jar(self) -> Path:
        """The private copy the process runs: a rebuild replaces the build's jar, and a JVM
        whose jar changes under it fails on its next class load."""
        return self.s.home / "run" / f"{self.name}.jar"

    def stale(self) -> bool:
        """Whether the build's jar differs from the copy the running process was started from (a
        changed setting restarts it too: restart_on_change)."""
        copy = self.running_jar()
        return not copy.exists() or copy.read_bytes() != self.jar().read_bytes()

    def before_start(self):
        copy = self.running_jar()
        copy.parent.mkdir(parents=True, exist_ok=True)
        tmp = copy.with_suffix(".tmp")
        shutil.copyfile(self.jar(), tmp)
        tmp.replace(copy)

    def command(self):
        argv = [JAVA, f"-Xms{self.initial_heap()}", f"-Xmx{self.max_heap()}", "-XX:+UseG1GC", "-jar"]
        return [*argv, str(self.running_jar())], self.env(**self.service_env())

    def ready(self):
        try:
            with urllib.request.urlopen(f"{self.url()}/healthz", timeout=3) as r:
                # DEGRADED: the data plane serves, the control plane cannot take changes right now
                return json.load(r)["status"] in ("UP", "DEGRADED")
        except urllib.error.HTTPError:
            return False
