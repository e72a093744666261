"""Flink 1.20 session cluster (a JobManager and a TaskManager) assembled from module jars.

flink-dist is not on Maven, so the cluster classpath is the module jars of
infra/dist/flink; the Prometheus reporter goes to plugins/ as Flink expects."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request

from ..fetch import layout_stamp
from ..jobs import default_parallelism
from ..tls import LocalCa
from .base import JAVA, Component, emptied
from .java_service import shaded_jar

# Flink's own Java 17 list (flink-dist config.yaml, env.java.opts.all): without it job
# submission fails with InaccessibleObjectException.
JAVA17_OPTS = (
    "--add-exports=java.base/sun.net.util=ALL-UNNAMED --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED "
    "--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED "
    "--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED --add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED "
    "--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED "
    "--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED "
    "--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED "
    "--add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED "
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED "
    "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED"
)

REPORTER_JAR_PREFIX = "flink-metrics-prometheus-"


def sql_jar():
    """The build's tally-sql jar (sql/catalog): the tally catalog, the tally-avro format and a
    relocated Kafka connector, which the cluster's lib holds for SQL statements' jobs."""
    return shaded_jar("sql/catalog", "tally-sql")


#: Flink's metric filters (scope:names) of what the Prometheus reporter leaves out
PROMETHEUS_EXCLUDED_METRICS = (
    "*.KafkaSourceReader.KafkaConsumer:*",
    "*.KafkaProducer:*",
    "*.task.Shuffle.*:*",
)


class _FlinkProcess(Component):
    version = "1.20.3"
    dists = ("flink",)
    relaxed_timers = True
    background_cpu = True
    stop_timeout = 30.0
    entrypoint = ""
    resource_query = ""

    @property
    def flink_home(self):
        return self.s.dist("flink") / "home"

    @property
    def flink_conf(self):
        return self.s.conf("flink")

    def owned_paths(self):
        # the JobManager and TaskManager share Flink's data (checkpoints, savepoints, tmp, uploads)
        return [self.s.data("flink"), self.flink_conf, self.log_file]

    @property
    def rest(self) -> str:
        return f"http://{self.host}:{self.s.port('TALLY_FLINK_PORT')}"

    def fetch(self):
        super().fetch()
        home = self.flink_home
        stamp = home / ".built"
        wanted = layout_stamp(self.s, self.dists[0], "flink-home-1")
        if stamp.exists() and stamp.read_text() == wanted:
            return
        if home.exists():
            shutil.rmtree(home)
        (home / "lib").mkdir(parents=True)
        plugin = home / "plugins" / "metrics-prometheus"
        plugin.mkdir(parents=True)
        for j in sorted(self.lib.glob("*.jar")):
            shutil.copy2(j, (plugin if j.name.startswith(REPORTER_JAR_PREFIX) else home / "lib") / j.name)
        stamp.write_text(wanted)

    @property
    def sql_lib_jar(self):
        """Tally's SQL jar (format, catalog, relocated Kafka connector) in the cluster's lib: the
        SQL gateway ships a statement's job no jars, so the cluster must have it, as it has a
        connector jar put in a Flink distribution's lib."""
        return self.flink_home / "lib" / "tally-sql.jar"

    def stale(self) -> bool:
        return not self.sql_lib_jar.exists() or self.sql_lib_jar.read_bytes() != sql_jar().read_bytes()

    def _install_sql_jar(self) -> None:
        tmp = self.sql_lib_jar.with_suffix(".tmp")
        shutil.copyfile(sql_jar(), tmp)
        tmp.replace(self.sql_lib_jar)  # a JVM still running the old one keeps its open file

    def cli(self, args: list[str]) -> tuple[list[str], dict[str, str]]:
        """Flink's own command line (bin/flink's CliFrontend) against the session cluster, with
        the stack's configuration: `flink list`, `flink stop`, `flink run -s ... -p N`..."""
        argv = [
            JAVA,
            *JAVA17_OPTS.split(),
            "-cp",
            f"{self.flink_home}/lib/*",
            "org.apache.flink.client.cli.CliFrontend",
        ]
        return argv + args, self.env(FLINK_CONF_DIR=str(self.flink_conf))

    def configure(self):
        data = self.s.data("flink")
        for d in ("checkpoints", "savepoints", "tmp", "web-upload"):
            (data / d).mkdir(parents=True, exist_ok=True)
        conf = self.flink_conf
        conf.mkdir(parents=True, exist_ok=True)
        h = self.host
        slots, parallelism = self.s.int("TALLY_FLINK_TASK_SLOTS"), default_parallelism(self.s)
        settings = {
            "env.java.opts.all": JAVA17_OPTS,
            "jobmanager.rpc.address": h,
            "jobmanager.rpc.port": self.s.port("TALLY_FLINK_RPC_PORT"),
            "jobmanager.bind-host": h,
            "jobmanager.memory.process.size": self.s.get("TALLY_FLINK_JM_MEMORY"),
            "jobmanager.execution.failover-strategy": "region",
            "taskmanager.bind-host": h,
            "taskmanager.host": h,
            "taskmanager.memory.process.size": self.s.get("TALLY_FLINK_TM_MEMORY"),
            "taskmanager.memory.jvm-metaspace.size": self.s.get("TALLY_FLINK_TM_METASPACE"),
            "taskmanager.numberOfTaskSlots": slots,
            "parallelism.default": parallelism,
            "rest.address": h,
            "rest.bind-address": h,
            "rest.port": self.s.port("TALLY_FLINK_PORT"),
            # A job whose sink's store is down retries soon after it returns (at most every 10 s).
            "restart-strategy.type": "exponential-delay",
            "restart-strategy.exponential-delay.initial-backoff": "1 s",
            "restart-strategy.exponential-delay.max-backoff": "10 s",
            "restart-strategy.exponential-delay.backoff-multiplier": 2.0,
            "restart-strategy.exponential-delay.reset-backoff-threshold": "1 min",
            "restart-strategy.exponential-delay.attempts-before-reset-backoff": 1000000,
            # the jobs say theirs (--state.backend); this is the SQL gateway's statements'
            "state.backend.type": self.s.get("TALLY_FLINK_STATE_BACKEND"),
            "taskmanager.memory.managed.fraction": float(self.s.get("TALLY_FLINK_MANAGED_FRACTION")),
            # Flink 1.20's names (the state.* ones are deprecated: a warning at every job submission)
            "execution.checkpointing.incremental": "true",
            "execution.checkpointing.dir": f"file://{data / 'checkpoints'}",
            "execution.checkpointing.savepoint-dir": f"file://{data / 'savepoints'}",
            "io.tmp.dirs": str(data / "tmp"),
            "web.upload.dir": str(data / "web-upload"),
            "metrics.reporter.prom.factory.class": "org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
            "metrics.reporter.prom.port": self.s.port("TALLY_FLINK_JM_METRICS_PORT"),
            # Prometheus gets Flink's own metrics and the jobs'; the Kafka clients' internals (about
            # 750 series) and the network stack's buffers (320) stay in the dashboard's metric view
            # only. Each scrape read them all: 2,900 series, 1.4 MB every 15 s. The attempt's id, new
            # at every restart, would make every series a new one after a failover.
            "metrics.reporter.prom.filter.excludes": ";".join(PROMETHEUS_EXCLUDED_METRICS),
            "metrics.reporter.prom.scope.variables.excludes": "task_attempt_id;task_attempt_num",
        }
        text = "# Written by ./tally up; edit infra/tally/components/flink.py instead.\n"
        text += "".join(f"{k}: {json.dumps(v) if isinstance(v, str) else v}\n" for k, v in settings.items())
        (conf / "config.yaml").write_text(text)
        # Rolled at 100 MB, five kept, as Flink's own default does. Flink 1.20's sink committers
        # register their pendingCommittables gauge again at every checkpoint and each time warn of
        # the name collision: three lines a second here (60,000 in a day's run), nothing to act on.
        (conf / "log4j.properties").write_text("""monitorInterval = 30
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = RollingFile
appender.main.append = true
appender.main.fileName = ${sys:log.file}
appender.main.filePattern = ${sys:log.file}.%i
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
appender.main.policies.type = Policies
appender.main.policies.size.type = SizeBasedTriggeringPolicy
appender.main.policies.size.size = 100MB
appender.main.strategy.type = DefaultRolloverStrategy
appender.main.strategy.max = 5
logger.akka.name = org.apache.pekko
logger.akka.level = INFO
logger.kafka.name = org.apache.kafka
logger.kafka.level = INFO
logger.metricgroup.name = org.apache.flink.metrics.MetricGroup
logger.metricgroup.filter.pending.type = RegexFilter
logger.metricgroup.filter.pending.regex = .*'pendingCommittables'.*
logger.metricgroup.filter.pending.onMatch = DENY
logger.metricgroup.filter.pending.onMismatch = NEUTRAL
""")

    def _resource_params(self) -> tuple[list[str], list[str]]:
        """JVM memory flags and derived -D options, computed by Flink as its scripts do."""
        r = subprocess.run(
            [
                JAVA,
                "-cp",
                f"{self.flink_home}/lib/*",
                "org.apache.flink.runtime.util.bash.BashJavaUtils",
                self.resource_query,
                "--configDir",
                str(self.flink_conf),
            ],
            capture_output=True,
            text=True,
        )
        lines = [l.split(":", 1)[1] for l in r.stdout.splitlines() if l.startswith("BASH_JAVA_UTILS_EXEC_RESULT:")]
        if r.returncode != 0 or len(lines) < 2:
            raise RuntimeError(
                f"Flink BashJavaUtils {self.resource_query} failed: {r.stdout[-2000:]}{r.stderr[-2000:]}"
            )
        return lines[0].split(), lines[1].split()

    def extra_dynamic(self) -> list[str]:
        return []

    def java_opts(self) -> list[str]:
        """JVM options of this process beyond Flink's own (env.java.opts.<process> of a cluster)."""
        return []

    @property
    def tmp_dir(self):
        """This process's own temporary directory (its io.tmp.dirs)."""
        return self.s.data("flink") / "proc" / self.name

    def fresh_tmp(self):
        """tmp_dir, emptied: Flink removes its temporary files (blob caches of every job's jar,
        RocksDB working copies, network buffers' spill files) only when it exits cleanly, so a
        killed JobManager or TaskManager left them behind, and the shared directory grew by
        gigabytes a day (a 67 MB jar per job ever run, per TaskManager). Nothing in it outlives
        the process: state comes back from checkpoints."""
        return emptied(self.tmp_dir)

    def command(self):
        self._install_sql_jar()
        jvm, dynamic = self._resource_params()
        tmp = self.fresh_tmp()
        argv = [
            JAVA,
            *jvm,
            *JAVA17_OPTS.split(),
            *self.java_opts(),
            f"-Dlog.file={self.log_file}",
            f"-Dlog4j.configurationFile=file:{self.flink_conf}/log4j.properties",
            "-cp",
            f"{self.flink_home}/lib/*",
            self.entrypoint,
            "--configDir",
            str(self.flink_conf),
            *dynamic,
            "-D",
            f"io.tmp.dirs={tmp}",
            *self.extra_dynamic(),
        ]
        env = self.env(
            FLINK_CONF_DIR=str(self.flink_conf),
            FLINK_LIB_DIR=str(self.flink_home / "lib"),
            FLINK_PLUGINS_DIR=str(self.flink_home / "plugins"),
        )
        return argv, env

    def overview(self) -> dict:
        with urllib.request.urlopen(f"{self.rest}/overview", timeout=3) as r:
            return json.load(r)


class FlinkJobManager(_FlinkProcess):
    name = "flink-jobmanager"
    entrypoint = "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint"
    resource_query = "GET_JM_RESOURCE_PARAMS"
    ready_timeout = 120.0

    def ports(self):
        return {
            "rest": self.s.port("TALLY_FLINK_PORT"),
            "rpc": self.s.port("TALLY_FLINK_RPC_PORT"),
            "metrics": self.s.port("TALLY_FLINK_JM_METRICS_PORT"),
        }

    def url(self):
        return self.rest

    def metrics_target(self):
        return f"{self.host}:{self.ports()['metrics']}"

    def ready(self):
        return "flink-version" in self.overview()

    def fresh_tmp(self):
        # jars uploaded through the REST API (Jobs.deploy deletes its own once submitted), and
        # the shared temporary directory, which only short-lived clients use now (each server
        # has its own): before that, what killed servers left there
        data = self.s.data("flink")
        shutil.rmtree(data / "web-upload", ignore_errors=True)
        emptied(data / "tmp")
        return super().fresh_tmp()


class FlinkTaskManager(_FlinkProcess):
    """One TaskManager of the session cluster: `flink-taskmanager`, and with
    TALLY_FLINK_TASKMANAGERS > 1 also `flink-taskmanager-2`, ... (metrics on consecutive ports).
    Its resource id is its name, so the JobManager and the dashboard name it as `status` does and
    a restarted one takes its place."""

    name = "flink-taskmanager"
    metrics_job = "flink-taskmanager"
    depends = ("flink-jobmanager",)
    entrypoint = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner"
    resource_query = "GET_TM_RESOURCE_PARAMS"
    ready_timeout = 120.0

    def java_opts(self) -> list[str]:
        """The secure profile's TaskManager trusts the stack's CA by default: the Elasticsearch
        connector's client takes no TLS context of its own, only the JVM's default trust store
        (the jobs' Kafka and Cassandra clients name theirs in their settings). On a cluster of
        one's own: env.java.opts.taskmanager with the same two options."""
        if not self.s.secure:
            return []
        store = LocalCa(self.s).jvm_truststore()
        return [f"-Djavax.net.ssl.trustStore={store}", "-Djavax.net.ssl.trustStoreType=PKCS12"]

    def __init__(self, settings, log=print, instance: int = 1):
        super().__init__(settings, log)
        self.instance = instance
        if instance > 1:
            self.name = f"flink-taskmanager-{instance}"

    def configure(self):
        pass  # the JobManager writes the shared conf

    def ports(self):
        return {"metrics": self.s.port("TALLY_FLINK_TM_METRICS_PORT") + self.instance - 1}

    def url(self):
        return f"{self.rest}/#/task-manager"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['metrics']}"

    def extra_dynamic(self):
        # JM and TM share one conf; each TM's reporter needs its own port.
        return [
            "-D",
            f"metrics.reporter.prom.port={self.ports()['metrics']}",
            "-D",
            f"taskmanager.resource-id={self.name}",
        ]

    def ready(self):
        with urllib.request.urlopen(f"{self.rest}/taskmanagers", timeout=3) as r:
            return any(tm["id"] == self.name for tm in json.load(r)["taskmanagers"])
