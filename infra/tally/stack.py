"""The local stack: every component in dependency order, started, checked and stopped."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from . import privileges, process
from .component_cgroups import ComponentCgroups
from .components.base import Component
from .components.cassandra import Cassandra
from .components.connect import Connect
from .components.elasticsearch import Elasticsearch
from .components.flink import FlinkJobManager, FlinkTaskManager
from .components.gateway import Gateway
from .components.kafka import Kafka
from .components.postgres import Postgres
from .components.prometheus import ElasticsearchExporter, PostgresExporter, Prometheus
from .components.registry import Registry
from .components.runq_exporter import RunqExporter
from .components.sql_gateway import SqlGateway
from .settings import Settings
from .state import State


class StackError(Exception):
    pass


def instances(settings: Settings, key: str) -> int:
    """How many instances of a component the setting asks for (gateways, TaskManagers)."""
    n = settings.int(key)
    if not 1 <= n <= 16:
        raise ValueError(f"{key}={n}: must be 1 to 16")
    return n


@dataclass
class Row:
    name: str
    pid: str
    ports: str
    health: str
    version: str
    url: str
    rss_mb: str


class Stack:
    def __init__(self, settings: Settings, log=print, components: list[Component] | None = None):
        self.s = settings
        self.log = log
        self.state = State(settings.home / "state.json")
        self.components = components if components is not None else self.default_components(settings, log)
        self.by_name = {c.name: c for c in self.components}
        self._setup = threading.Lock()
        self.cgroups = ComponentCgroups(
            settings.get("TALLY_RUNQ_CONTAINER_ROOT"),
            enabled=settings.get("TALLY_COMPONENT_CGROUPS").lower() in ("on", "true", "1", "yes"),
            log=log,
        )

    @staticmethod
    def default_components(settings: Settings, log) -> list[Component]:
        """The servers of docs/design.md, in start order; Prometheus last, scraping them all."""
        servers: list[Component] = [
            Postgres(settings, log),
            *(Kafka(settings, log, i) for i in range(1, settings.nodes + 1)),
            *(Cassandra(settings, log, i) for i in range(1, settings.nodes + 1)),
            Elasticsearch(settings, log),
            Registry(settings, log),
            Connect(settings, log),
            *(Gateway(settings, log, i) for i in range(1, instances(settings, "TALLY_GATEWAY_INSTANCES") + 1)),
            FlinkJobManager(settings, log),
            *(
                FlinkTaskManager(settings, log, i)
                for i in range(1, instances(settings, "TALLY_FLINK_TASKMANAGERS") + 1)
            ),
            SqlGateway(settings, log),
            ElasticsearchExporter(settings, log),
            PostgresExporter(settings, log),
            RunqExporter(settings, log),
        ]
        targets: dict[str, list[str]] = {}
        for c in servers:
            if c.metrics_target():
                targets.setdefault(c.metrics_job, []).append(c.metrics_target())
        prometheus = Prometheus(settings, log, targets)
        targets[prometheus.name] = [prometheus.metrics_target()]
        return servers + [prometheus]

    # ---- queries -------------------------------------------------------------------
    def component(self, name: str) -> Component:
        if name not in self.by_name:
            raise StackError(f"unknown component {name!r}; components: {', '.join(self.by_name)}")
        return self.by_name[name]

    def running(self, c: Component) -> bool:
        return process.alive(self.state.ref(c.name))

    def healthy(self, c: Component) -> bool:
        if not self.running(c):
            return False
        try:
            return bool(c.ready())
        except Exception:
            return False

    def port_conflicts(self) -> list[str]:
        """Ports that components not yet running would need but something else holds."""
        conflicts = []
        seen: dict[tuple[str, int], str] = {}  # the nodes of a cluster share ports on their own addresses
        for c in self.components:
            for label, port in c.ports().items():
                if (c.host, port) in seen:
                    conflicts.append(
                        f"port {port} is configured for both {seen[(c.host, port)]} and {c.name} ({label})"
                    )
                seen[(c.host, port)] = c.name
                if not self.running(c) and not self._port_released(c, port):
                    conflicts.append(f"port {port} ({c.name} {label}) is already in use on {c.host}")
        return conflicts

    def _port_released(self, c: Component, port: int) -> bool:
        """A process of ours that just died can hold its sockets a moment longer (its other
        threads are still exiting), so its own ports get a few seconds to close."""
        if process.port_free(c.host, port):
            return True
        if self.state.ref(c.name) is None:
            return False
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.2)
            if process.port_free(c.host, port):
                return True
        return False

    # ---- lifecycle -----------------------------------------------------------------
    def up(self) -> list[str]:
        """Starts what is not running; returns the names it started. A second call while
        everything runs is a no-op."""
        conflicts = self.port_conflicts()
        if conflicts:
            raise StackError(
                "cannot start: "
                + "; ".join(conflicts)
                + ". Stop whatever holds the port or override it (see infra/tally.env)."
            )
        todo = [c for c in self.components if not self.running(c)]
        for c in todo:
            c.fetch()
        for c in self.components:
            if c not in todo and (c.stale() or self.launch_changed(c)):
                self.log(f"restarting {c.name}: its build or settings changed")
                self.stop(c)
        started, failed = self._start_side_by_side(self.s.int("TALLY_UP_PARALLEL"))
        if failed is not None:
            c, e = failed
            for s in reversed(started):
                self.log(f"   stopping {s.name} (started by this run)")
                self.stop(s)
            raise StackError(f"{c.name} failed to start: {e}  (./tally logs {c.name}){last_lines(c.log_file)}")
        self._refresh_prometheus(started)
        return [c.name for c in started]

    def needs(self, c: Component) -> list[Component]:
        """What must be running before c starts: every instance of each kind it depends on (a
        dependency on `kafka` waits for all brokers: the last one makes the topics), and a
        Cassandra node the node before it (a ring takes its nodes one at a time)."""
        kinds = set(c.depends)
        out = [x for x in self.components if x is not c and (x.name in kinds or x.metrics_job in kinds)]
        if c.joins_one_at_a_time and c.node > 1:
            out += [x for x in self.components if x.metrics_job == c.metrics_job and x.node == c.node - 1]
        return out

    def _start_side_by_side(self, parallel: int) -> tuple[list[Component], tuple[Component, Exception] | None]:
        """Starts what is not running, each as soon as what it needs runs, up to `parallel` at a
        time (servers that need nothing of each other start side by side; 1: one after another, in
        the components' order). A running component converges instead (its provisioning is
        idempotent: migrations, seeds, topics). After a failure nothing new starts; what is in
        flight finishes. Returns what it started and the first failure."""
        pending = list(self.components)
        done: set[str] = set()
        started: list[Component] = []
        failed: tuple[Component, Exception] | None = None
        inflight: dict[Future, Component] = {}
        parallel = max(1, parallel)
        with ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="up") as pool:
            while True:
                progress = failed is None
                while progress:
                    progress = False
                    for c in list(pending):
                        if len(inflight) >= parallel:
                            break
                        if any(n.name not in done for n in self.needs(c)):
                            continue
                        pending.remove(c)
                        if self.running(c):
                            c.after_ready()
                            done.add(c.name)
                            progress = True
                        else:
                            inflight[pool.submit(self.start, c)] = c
                if not inflight:
                    break
                finished, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for f in finished:
                    c = inflight.pop(f)
                    try:
                        f.result()
                        started.append(c)
                        done.add(c.name)
                    except Exception as e:
                        self.state.record(c.name, status="failed", error=str(e), failed_at=time.time())
                        self.log(f"!! {c.name} failed to start: {e}")
                        tail = tail_lines(c.log_file, 25)
                        if tail:
                            self.log(f"   last lines of {c.log_file}:\n" + "\n".join("   | " + l for l in tail))
                        failed = failed or (c, e)
        if failed is None and pending:
            names = ", ".join(c.name for c in pending)
            failed = (pending[0], StackError(f"{names}: what they depend on is not part of the stack"))
        return started, failed

    def _refresh_prometheus(self, started: list[Component]) -> None:
        """A running Prometheus gets the current scrape targets (they change as components are added)."""
        prom = self.by_name.get("prometheus")
        if prom is None or prom in started or not self.running(prom):
            return
        cfg = prom.conf_dir / "prometheus.yml"
        before = cfg.read_text() if cfg.exists() else ""
        prom.configure()
        if cfg.read_text() != before:
            prom.reload()
            self.log("   prometheus reloaded with the current scrape targets")

    def start(self, c: Component) -> None:
        for dep in self.needs(c):
            if not self.running(dep):
                raise StackError(f"{c.name} needs {dep.name}, which is not running")
        nice = self.s.int("TALLY_BACKGROUND_CPU_NICE") if c.background_cpu else 0
        if not 0 <= nice <= 19:
            raise StackError(f"TALLY_BACKGROUND_CPU_NICE={nice} is not in 0-19 (no server may be put before others)")
        t0 = time.monotonic()
        self.log(f"starting {c.name} ...")
        # one server's set-up at a time: set-ups share files made once (the local CA, secrets,
        # the service user); the servers then start and get ready side by side
        with self._setup:
            c.configure()
            c.before_start()
            argv, env = c.command()
            launch = self.launch_digest(c, argv, env)
            if c.unprivileged and privileges.is_root():
                user = self.s.get("TALLY_SERVICE_USER")
                privileges.ensure_user(user)
                c.log_file.parent.mkdir(parents=True, exist_ok=True)
                c.log_file.touch()  # some servers write their log themselves (Flink's file appender)
                privileges.give(user, [p for p in c.owned_paths() if p.exists()])
                argv = privileges.drop(argv, user, c.capabilities)
            if c.relaxed_timers:
                argv = process.with_timer_slack(argv, self.s.int("TALLY_SERVER_TIMER_SLACK_US") * 1000)
            # joins its cgroup as root, before the privileges are dropped and the server starts
            argv = self.cgroups.wrap(argv, self.cgroups.prepare(c.name))
            ref = process.spawn(argv, c.log_file, env=env)
        self.state.record(
            c.name,
            process=ref.to_json(),
            status="starting",
            version=c.version,
            ports=c.ports(),
            url=c.url(),
            started_at=time.time(),
            error=None,
            launch_digest=launch,
        )
        process.wait_until(c.name, c.ready, c.ready_timeout, lambda: process.alive(ref))
        c.after_ready()
        if nice:
            self.log(f"   {c.name}: {process.set_background_cpu(ref.pid, nice)}")
        self.state.record(c.name, status="running")
        self.log(f"   {c.name} ready in {time.monotonic() - t0:.1f}s  {c.url()}")

    def launch_digest(self, c: Component, argv: list[str], env: dict[str, str]) -> str:
        """A digest of what c starts with: its command, Tally's settings and what Tally adds in its
        environment (a password among them, so only the digest is kept), its config files, its
        timer slack and its nice."""
        h = hashlib.sha256()
        # Tally's settings in it, from the env file or the shell, and what else Tally added
        added = {k: v for k, v in sorted(env.items()) if k.startswith("TALLY_") or os.environ.get(k) != v}
        slack = self.s.int("TALLY_SERVER_TIMER_SLACK_US") if c.relaxed_timers else 0
        launch = {"argv": argv, "env": added, "slack": slack}
        if c.background_cpu:  # only there, so a request-path server's digest stays as it was
            launch["nice"] = self.s.int("TALLY_BACKGROUND_CPU_NICE")
        h.update(json.dumps(launch).encode())
        for f in c.launch_files():
            h.update(str(f).encode() + b"\0" + f.read_bytes() + b"\0")
        return h.hexdigest()

    def launch_changed(self, c: Component) -> bool:
        """Whether a running c that restarts on change would now start otherwise than it did (a
        setting, a password, an address changed). Configuring it rewrites its config files, which
        the running server read at its start and does not read again."""
        if not c.restart_on_change or not self.running(c):
            return False
        started = self.state.components.get(c.name, {}).get("launch_digest")
        if started is None:
            return False
        c.configure()
        argv, env = c.command()
        return self.launch_digest(c, argv, env) != started

    def stop(self, c: Component) -> bool:
        ref = self.state.ref(c.name)
        was = process.stop(ref, timeout=c.stop_timeout, sig=c.stop_signal)
        self.cgroups.remove(c.name)
        self.state.forget_process(c.name)
        self.state.record(c.name, status="stopped")
        return was

    def down(self, wipe: bool = False) -> list[str]:
        stopped = []
        for c in reversed(self.components):
            if self.running(c):
                self.log(f"stopping {c.name} (pid {self.state.ref(c.name).pid})")
                self.stop(c)  # and its cgroup
                stopped.append(c.name)
        # those of crashed servers and other instances too; a cgroup with a process (the
        # three-node profile's servers share the names) is never removed
        self.cgroups.remove_root()
        if wipe:
            for sub in ("data", "conf", "logs"):
                path = self.s.home / sub
                if path.exists():
                    shutil.rmtree(path)
            (self.s.home / "state.json").unlink(missing_ok=True)
            self.log(f"wiped data, configs and logs under {self.s.home} (downloads kept)")
        return stopped

    def status(self) -> list[Row]:
        rows = []
        for c in self.components:
            entry = self.state.components.get(c.name, {})
            ref = self.state.ref(c.name)
            if self.running(c):
                health = "healthy" if self.healthy(c) else "unhealthy"
            elif entry.get("status") == "failed":
                health = "failed"
            elif ref is not None:
                health = "crashed"
            else:
                health = "stopped"
            rss = process.rss_bytes(ref)
            rows.append(
                Row(
                    c.name,
                    str(ref.pid) if ref and self.running(c) else "-",
                    ",".join(str(p) for p in c.ports().values()),
                    health,
                    c.version,
                    c.url(),
                    f"{rss / 2**20:.0f}" if rss else "-",
                )
            )
        return rows


def tail_lines(path, n: int) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-n:]
    except OSError:
        return []


def last_lines(log: Path, n: int = 3, width: int = 240) -> str:
    """The last n non-blank lines of a server's log, each cut to width, for the error itself: the
    summary line of a failed test or CI step keeps the error, not what `up` printed before it."""
    lines = [l.strip()[:width] for l in tail_lines(log, n + 20) if l.strip()]
    return "".join(f"\n   | {l}" for l in lines[-n:])
