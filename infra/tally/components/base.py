"""One component of the local stack: fetch, configure, start, wait until ready, stop."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from ..fetch import fetch_dist, jar
from ..process import tcp_open
from ..settings import Settings

JAVA = shutil.which("java") or "java"


def emptied(directory: Path) -> Path:
    """The directory, created or emptied: a server's temporary files, which a killed server
    never cleaned up and nothing needs once it is gone."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


class Component:
    name = ""
    version = ""
    depends: tuple[str, ...] = ()  # kinds (names or metrics jobs) that must run before this starts
    joins_one_at_a_time = False  # nodes of a cluster that must start one after another
    dists: tuple[str, ...] = ()  # infra/dist/<name>/pom.xml fetched with Maven; the first is its own
    ready_timeout = 120.0
    stop_timeout = 60.0

    def __init__(self, settings: Settings, log=print):
        self.s = settings
        self.log = log

    # ---- facts -------------------------------------------------------------------
    def ports(self) -> dict[str, int]:
        """Every port the component binds, by a readable name."""
        return {}

    def url(self) -> str:
        return ""

    def metrics_target(self) -> str | None:
        """host:port that Prometheus scrapes for this component, if any."""
        return None

    @property
    def metrics_job(self) -> str:
        """Prometheus's 'job' label of the component: its kind (instances share it)."""
        return self.name

    @property
    def host(self) -> str:
        return self.s.host

    @property
    def data_dir(self) -> Path:
        return self.s.data(self.name)

    @property
    def conf_dir(self) -> Path:
        return self.s.conf(self.name)

    @property
    def log_file(self) -> Path:
        return self.s.log(self.name)

    # ---- lifecycle ---------------------------------------------------------------
    def fetch(self) -> None:
        for dist in self.dists:
            fetch_dist(self.s, dist, self.log)

    def configure(self) -> None:
        """Writes config files into the state directory (idempotent)."""

    def command(self) -> tuple[list[str], dict[str, str]]:
        raise NotImplementedError

    def ready(self) -> bool:
        main = next(iter(self.ports().values()), None)
        return main is not None and tcp_open(self.host, main)

    # ---- privileges --------------------------------------------------------------
    #: Started as the service user when the launcher is root (see tally.privileges); False for a
    #: server that picks its own user (Postgres runs as postgres).
    unprivileged = True
    #: Capabilities it keeps when it drops root (`setpriv --list-caps` names); none for most.
    capabilities: tuple[str, ...] = ()

    #: Its timed waits may end up to TALLY_SERVER_TIMER_SLACK_US late (see process.with_timer_slack):
    #: the servers Tally uses in the background; not the gateway and registry, which answer users.
    relaxed_timers = False

    #: Its CPU comes after the request path's when the box is short of it (at nice
    #: TALLY_BACKGROUND_CPU_NICE once ready, see process.set_background_cpu): the servers no caller waits
    #: on, whose backlog waits in Kafka and catches up (Flink, Connect, the SQL gateway, metrics).
    background_cpu = False

    #: `up` restarts it when what it would start with differs from what it was started with (its
    #: command, the environment Tally adds, its config files; see Stack.launch_digest): services
    #: that hold no state of their own, so a restart costs seconds.
    restart_on_change = False

    def launch_files(self) -> list[Path]:
        """The config files it reads at its start (what configure writes): all of conf_dir."""
        d = self.conf_dir
        return sorted(p for p in d.rglob("*") if p.is_file()) if d.is_dir() else []

    def before_start(self) -> None:
        """What must happen just before the server starts, never while it runs (emptying its tmp)."""

    def owned_paths(self) -> list[Path]:
        """What the server writes, so what the service user must own: data, config, log."""
        return [self.data_dir, self.conf_dir, self.log_file]

    #: What asks the server to stop cleanly (then SIGKILL after stop_timeout).
    stop_signal = signal.SIGTERM

    def after_ready(self) -> None:
        """Provisioning that needs the running server (topics, keyspaces, ...)."""

    def stale(self) -> bool:
        """Whether a running instance runs an older build than the one on disk (then `up` restarts it)."""
        return False

    # ---- helpers -----------------------------------------------------------------
    @property
    def lib(self) -> Path:
        return self.s.dist(self.dists[0]) / "lib"

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        env.update(extra)
        return env

    def write_console_log4j2(self, quiet_loggers: dict[str, str] | None = None) -> Path:
        """A log4j2 config that logs to stdout (the launcher appends it to the component's log)."""
        loggers = "".join(f"      - name: {n}\n        level: {lvl}\n" for n, lvl in (quiet_loggers or {}).items())
        path = self.conf_dir / "log4j2.yaml"
        path.write_text(
            "Configuration:\n  Appenders:\n    Console:\n      name: STDOUT\n      PatternLayout:\n"
            '        pattern: "[%d] %p %m (%c)%n"\n  Loggers:\n    Root:\n      level: INFO\n'
            "      AppenderRef:\n        - ref: STDOUT\n" + (f"    Logger:\n{loggers}" if loggers else "")
        )
        return path

    def jmx_agent(self, port: int, rules: str = "- pattern: '.*'\n", include: tuple[str, ...] = ()) -> str:
        """-javaagent flag for the Prometheus JMX exporter, bound to the stack host. `include`:
        the only MBeans it reads (ObjectName patterns); without it every MBean is read at each
        scrape and the rules drop what they do not match afterwards."""
        cfg = self.conf_dir / "jmx-exporter.yaml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        names = "".join(f"  - '{n}'\n" for n in include)
        cfg.write_text(
            "lowercaseOutputName: true\n" + (f"includeObjectNames:\n{names}" if include else "") + "rules:\n" + rules
        )
        agent = jar(self.s.dist("jmx-exporter") / "lib", "jmx_prometheus_javaagent")
        return f"-javaagent:{agent}={self.host}:{port}:{cfg}"


class ClusterNode(Component):
    """Node i of a clustered server (Kafka, Cassandra): node 1 keeps the component's name and
    TALLY_HOST; node i > 1 is `<name>-i` on the i-th loopback alias (Settings.node_host), with
    the same ports. Its data, config, log and state follow the name."""

    def __init__(self, settings: Settings, log=print, node: int = 1):
        super().__init__(settings, log)
        self.node = node
        if node > 1:
            self.name = f"{self.name}-{node}"

    @property
    def host(self) -> str:
        return self.s.node_host(self.node)
