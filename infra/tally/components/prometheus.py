"""Prometheus (Debian package) scraping every component, and the two Debian exporters
for the servers that have no Prometheus endpoint of their own and no JVM agent."""

from __future__ import annotations

import json
import shutil
import urllib.request

from ..settings import REPO
from .base import Component


class DebianExporter(Component):
    """A Prometheus exporter from Debian's packages, scraping one server."""

    background_cpu = True
    binary = ""
    port_setting = ""
    ready_timeout = 30.0

    def ports(self):
        return {"metrics": self.s.port(self.port_setting)}

    def url(self):
        return f"http://{self.host}:{self.ports()['metrics']}/metrics"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['metrics']}"

    def fetch(self):
        if not shutil.which(self.binary):
            raise RuntimeError(f"{self.binary} is not installed (apt-get install {self.binary})")

    def command(self):
        return [shutil.which(self.binary), f"--web.listen-address={self.metrics_target()}", *self.args()], self.env(
            **self.extra_env()
        )

    def args(self) -> list[str]:
        return []

    def extra_env(self) -> dict[str, str]:
        return {}


class ElasticsearchExporter(DebianExporter):
    name = "elasticsearch-exporter"
    version = "1.5.0 (Debian)"
    depends = ("elasticsearch",)
    binary = "prometheus-elasticsearch-exporter"
    port_setting = "TALLY_ELASTICSEARCH_EXPORTER_PORT"

    def args(self):
        store = self.s.get("TALLY_ELASTICSEARCH_SSL_TRUSTSTORE")
        return [f"--es.uri={self.s.elasticsearch_url()}", *([f"--es.ca={store}"] if store else [])]

    def extra_env(self):
        # the login from the environment (the exporter reads ES_USERNAME/ES_PASSWORD), not a flag
        user = self.s.get("TALLY_ELASTICSEARCH_USERNAME")
        return {"ES_USERNAME": user, "ES_PASSWORD": self.s.elasticsearch_password()} if user else {}


class PostgresExporter(DebianExporter):
    name = "postgres-exporter"
    version = "0.11.1 (Debian)"
    depends = ("postgres",)
    binary = "prometheus-postgres-exporter"
    port_setting = "TALLY_POSTGRES_EXPORTER_PORT"

    def extra_env(self):
        return {
            "DATA_SOURCE_NAME": f"postgresql://postgres:{self.s.secret('TALLY_POSTGRES_PASSWORD')}@{self.host}:"
            f"{self.s.port('TALLY_POSTGRES_PORT')}/tally_control?sslmode=disable"
        }


class Prometheus(Component):
    name = "prometheus"
    background_cpu = True
    version = "2.42 (Debian)"
    ready_timeout = 30.0
    binary = "prometheus"

    def __init__(self, settings, log=print, targets: dict[str, list[str]] | None = None):
        super().__init__(settings, log)
        self.targets = targets or {}

    def ports(self):
        return {"http": self.s.port("TALLY_PROMETHEUS_PORT")}

    def url(self):
        return f"http://{self.host}:{self.ports()['http']}"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['http']}"

    def fetch(self):
        if not shutil.which(self.binary):
            raise RuntimeError("prometheus is not installed (apt-get install prometheus)")

    def configure(self):
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        rules = self.conf_dir / "rules"
        rules.mkdir(exist_ok=True)
        for name in RULE_FILES:
            shutil.copyfile(RULES / name, rules / name)
        (self.conf_dir / "prometheus.yml").write_text(
            render_config(self.targets, [str(rules / name) for name in RULE_FILES])
        )

    def command(self):
        return [
            shutil.which(self.binary),
            f"--config.file={self.conf_dir / 'prometheus.yml'}",
            f"--storage.tsdb.path={self.data_dir}",
            "--storage.tsdb.retention.time=2d",
            f"--web.listen-address={self.metrics_target()}",
            "--web.enable-lifecycle",
        ], self.env()

    def ready(self):
        with urllib.request.urlopen(f"{self.url()}/-/ready", timeout=3) as r:
            return r.status == 200

    def reload(self) -> None:
        req = urllib.request.Request(f"{self.url()}/-/reload", method="POST")
        with urllib.request.urlopen(req, timeout=10):
            pass

    def query(self, promql: str) -> list[dict]:
        from urllib.parse import urlencode

        with urllib.request.urlopen(f"{self.url()}/api/v1/query?{urlencode({'query': promql})}", timeout=5) as r:
            return json.load(r)["data"]["result"]


RULES = REPO / "infra" / "prometheus" / "rules"
# alerting rules the stack's Prometheus loads (each has a promtool test beside it, *.test.yml)
RULE_FILES = ("noisy-neighbor.yml",)


def render_config(targets: dict[str, list[str]], rule_files: list[str] | None = None) -> str:
    """One scrape job per kind of component, named after it (the 'job' label); instances of one
    kind (gateways, TaskManagers) are targets of its job, told apart by their 'instance' label."""
    lines = [
        "# Written by ./tally up from the components' metrics targets.",
        "global:",
        # Prometheus's default: the TaskManager's ~3,500 series a scrape cost it 6% of its CPU
        # samples (JFR under 2,000 AddCount/s) at every 5 s
        "  scrape_interval: 15s",
        "  evaluation_interval: 15s",
    ]
    if rule_files:
        lines += ["rule_files:", *(f"  - '{f}'" for f in rule_files)]
    lines += ["scrape_configs:"]
    for job, addresses in sorted(targets.items()):
        listed = ", ".join(f"'{a}'" for a in addresses)
        lines += [f"  - job_name: {job}", "    static_configs:", f"      - targets: [{listed}]"]
    return "\n".join(lines) + "\n"
