"""Flink's SQL gateway (REST endpoint) against the session cluster, with Tally's catalog as every
session's default: `tally`, its tables defined from the model (sql/catalog). Statements run as
jobs of the session cluster, whose lib holds the tally-sql jar (the tally-avro format, the
catalog and a relocated Kafka connector; see FlinkJobManager.sql_lib_jar)."""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from pathlib import Path

from .base import JAVA, Component, emptied
from .flink import JAVA17_OPTS, sql_jar

CATALOG = "tally"


def catalog_kafka_options(s) -> dict[str, str]:
    """The tally catalog's Kafka options: the brokers and, when the clients' security is on, the
    tables' `properties.*` with the password a FileConfigProvider reference (SHOW CREATE TABLE
    shows the reference; the TaskManagers read the file)."""
    options = {"bootstrap-servers": s.kafka_bootstrap()}
    if s.get("TALLY_KAFKA_SECURITY_PROTOCOL").upper() == "PLAINTEXT":
        return options
    ref = f"${{file:{s.kafka_password_properties()}:password}}"
    options |= {f"properties.{k}": v for k, v in s.kafka_java_properties(ref).items()}
    options["properties.config.providers"] = "file"
    options["properties.config.providers.file.class"] = "org.apache.kafka.common.config.provider.FileConfigProvider"
    return options


class SqlGateway(Component):
    name = "sql-gateway"
    version = "1.20.3"
    depends = ("flink-jobmanager", "registry", "kafka")
    dists = ("flink-sql", "jmx-exporter")
    relaxed_timers = True
    background_cpu = True
    restart_on_change = True
    ready_timeout = 90.0
    stop_timeout = 20.0

    def ports(self):
        return {"rest": self.s.port("TALLY_SQL_GATEWAY_PORT"), "metrics": self.s.port("TALLY_SQL_GATEWAY_METRICS_PORT")}

    def url(self):
        return f"http://{self.host}:{self.ports()['rest']}"

    def metrics_target(self):
        # the gateway has no Flink metric reporter of its own: its JVM through the JMX exporter
        return f"{self.host}:{self.ports()['metrics']}"

    def fetch(self):
        super().fetch()
        sql_jar()

    def stale(self) -> bool:
        # it loads Tally's SQL jar from the cluster's lib, which the JobManager's start renews
        lib_copy = self.s.dist("flink") / "home" / "lib" / "tally-sql.jar"
        return not lib_copy.exists() or lib_copy.read_bytes() != sql_jar().read_bytes()

    def classpath(self) -> str:
        # the cluster's lib (with tally-sql.jar), then the gateway's and client's own jars
        return f"{self.s.dist('flink') / 'home' / 'lib'}/*:{self.lib}/*"

    def configure(self):
        conf = self.conf_dir
        catalogs = conf / "catalogs"
        catalogs.mkdir(parents=True, exist_ok=True)
        flink_conf = (self.s.conf("flink") / "config.yaml").read_text()
        kept = [
            line
            for line in flink_conf.splitlines()
            if not line.startswith(("metrics.reporter.", "io.tmp.dirs:"))  # its own tmp, below
        ]
        h, rest = self.host, self.ports()["rest"]
        settings = {
            "sql-gateway.endpoint.rest.address": h,
            "sql-gateway.endpoint.rest.bind-address": h,
            "sql-gateway.endpoint.rest.port": rest,
            "execution.target": "remote",
            # every session's default catalog is Tally's, found in the file catalog store
            "table.builtin-catalog-name": CATALOG,
            "table.catalog-store.kind": "file",
            "table.catalog-store.file.path": str(catalogs),
            # event times are UTC wall clocks (TIMESTAMP(6)): CURRENT_TIMESTAMP should be too
            "table.local-time-zone": "UTC",
            # its own, emptied at each start (command): a killed gateway's temporary files stay
            "io.tmp.dirs": str(self.data_dir / "tmp"),
        }
        text = "\n".join(kept) + "\n# The SQL gateway's own (infra/tally/components/sql_gateway.py)\n"
        text += "".join(f"{k}: {json.dumps(v) if isinstance(v, str) else v}\n" for k, v in settings.items())
        (conf / "config.yaml").write_text(text)
        shutil.copyfile(self.s.conf("flink") / "log4j.properties", conf / "log4j.properties")
        registry = f"http://{h}:{self.s.port('TALLY_REGISTRY_PORT')}"
        options = {"type": CATALOG, "registry-url": registry, **catalog_kafka_options(self.s)}
        (catalogs / f"{CATALOG}.yaml").write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in options.items()))

    def launch_files(self):
        # not the SQL client's log config, nor catalogs a user made with CREATE CATALOG
        return [self.conf_dir / n for n in ("config.yaml", "log4j.properties", f"catalogs/{CATALOG}.yaml")]

    def before_start(self):
        emptied(self.data_dir / "tmp")

    def command(self):
        argv = [
            JAVA,
            f"-Xmx{self.s.get('TALLY_SQL_GATEWAY_HEAP')}",
            *JAVA17_OPTS.split(),
            self.jmx_agent(self.ports()["metrics"]),
            f"-Dlog.file={self.log_file}",
            f"-Dlog4j.configurationFile=file:{self.conf_dir}/log4j.properties",
            "-cp",
            self.classpath(),
            "org.apache.flink.table.gateway.SqlGateway",
        ]
        return argv, self.env(FLINK_CONF_DIR=str(self.conf_dir))

    def ready(self):
        with urllib.request.urlopen(f"{self.url()}/v1/info", timeout=3) as r:
            return json.load(r).get("productName") == "Apache Flink"

    def client(
        self, statements: str | None = None, file: str | None = None, streaming: bool = False
    ) -> tuple[list[str], dict[str, str]]:
        """Flink's SQL client in gateway mode against this gateway: interactive, or the
        statements of a string or a file, printed as tables: in batch mode unless `streaming`
        (a final table rather than a changelog; a Kafka table then needs the bounded hint)."""
        prelude = RESULTS_AS_TABLES + ("" if streaming else "SET 'execution.runtime-mode' = 'batch';\n")
        argv = [
            JAVA,
            *JAVA17_OPTS.split(),
            "-Dlog4j.configurationFile=file:" + str(self._client_log4j()),
            "-cp",
            self.classpath(),
            "org.apache.flink.table.client.SqlClient",
            "gateway",
            "--endpoint",
            self.url(),
        ]
        if statements is not None or file is not None:
            body = (
                "".join(f"{st};\n" for st in split_statements(statements))
                if statements is not None
                else Path(file).read_text()
            )
            script = self.script_path()
            script.write_text(prelude + body)
            argv += ["-f", str(script)]
        return argv, self.env(FLINK_CONF_DIR=str(self.conf_dir))

    def script_path(self) -> Path:
        """Where client() puts a run's statements (this process's own; the caller removes it)."""
        return self.conf_dir / f"script-{os.getpid()}.sql"

    def _client_log4j(self) -> Path:
        path = self.conf_dir / "log4j-cli.properties"
        path.write_text(
            "rootLogger.level = ERROR\nrootLogger.appenderRef.console.ref = Console\n"
            "appender.console.name = Console\nappender.console.type = Console\n"
            "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %-5p %c{1} - %m%n\n"
        )
        return path


# A script's results as printed tables (the client's default is an interactive view).
RESULTS_AS_TABLES = "SET 'sql-client.execution.result-mode' = 'tableau';\n"


def split_statements(text: str) -> list[str]:
    """The statements of `text`, split at each ';' outside quotes and comments (the SQL client
    takes one statement per ';' at the end of a line)."""
    out, cur, quote, i = [], [], "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif text.startswith("/*", i) and not text.startswith("/*+", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
            continue
        elif ch in "'`\"":
            quote = ch
            cur.append(ch)
        elif ch == ";":
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur).strip())
    return [st for st in out if st]
