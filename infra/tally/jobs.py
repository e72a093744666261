"""Tally's Flink jobs on the session cluster, through Flink's REST API: deploy (upload the
shaded jar, run), list, stop with a savepoint, resume from it, cancel."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path

from .settings import REPO, Settings

JOBS_JAR_DIR = REPO / "jobs" / "target"


@dataclass(frozen=True)
class JobSpec:
    name: str  # the Flink job name (env.execute(name))
    entry_class: str
    stores: tuple[str, ...] = ()  # which of the stores' arguments the job takes (it refuses others)
    extra: tuple[str, ...] = ()  # job-specific arguments
    # job-specific arguments whose values are settings: (argument, setting)
    from_settings: tuple[tuple[str, str], ...] = ()

    def args(self, s: Settings, targets=None) -> list[str]:
        """The job's arguments; `targets` (deploy's Targets): the servers of a deployment,
        else the local stack's."""
        h = s.host
        kafka = targets.kafka if targets else s.kafka_bootstrap()
        registry = targets.registry if targets else f"http://{h}:{s.port('TALLY_REGISTRY_PORT')}"
        cassandra = (
            (",".join(host for host, _ in targets.cassandra), str(targets.cassandra[0][1]))
            if targets
            else (",".join(s.cassandra_hosts()), str(s.port("TALLY_CASSANDRA_PORT")))
        )
        elasticsearch = targets.elasticsearch if targets else s.elasticsearch_url()
        args = [
            "--kafka.bootstrap",
            kafka,
            "--registry.url",
            registry,
            "--checkpoint.interval.ms",
            s.get("TALLY_FLINK_CHECKPOINT_INTERVAL_MS"),
            "--state.backend",
            s.get("TALLY_FLINK_STATE_BACKEND"),
        ]
        args += kafka_security_args(s)
        if "cassandra" in self.stores:
            args += ["--cassandra.host", cassandra[0], "--cassandra.port", cassandra[1]]
            args += ["--cassandra.datacenter", s.get("TALLY_CASSANDRA_DATACENTER")]
            args += ["--cassandra.consistency", s.get("TALLY_CASSANDRA_CONSISTENCY")]
            args += ["--cassandra.replication.strategy", s.get("TALLY_CASSANDRA_REPLICATION_STRATEGY")]
            args += ["--cassandra.replication.factor", s.get("TALLY_CASSANDRA_REPLICATION_FACTOR")]
            args += ["--cassandra.batch.partitions", s.get("TALLY_CASSANDRA_BATCH_PARTITIONS")]
            args += ["--cassandra.batch.bytes", s.get("TALLY_CASSANDRA_BATCH_BYTES")]
            args += ["--cassandra.batch.linger.ms", s.get("TALLY_CASSANDRA_BATCH_LINGER_MS")]
            args += cassandra_security_args(s)
        if "elasticsearch" in self.stores:
            args += [
                "--elasticsearch.url",
                elasticsearch,
                "--lifecycle.interval.ms",
                s.get("TALLY_SLICE_LIFECYCLE_MS"),
            ]
            args += elasticsearch_security_args(s)
        for arg, setting in self.from_settings:
            args += [arg, s.get(setting)]
        return args + list(self.extra)


def kafka_security_args(s: Settings) -> list[str]:
    """The jobs' Kafka client security, when it is on: the password only as a file on the
    TaskManager's host (a job's arguments show in Flink's REST API and dashboard)."""
    protocol = s.get("TALLY_KAFKA_SECURITY_PROTOCOL").upper()
    if protocol == "PLAINTEXT":
        return []
    if protocol.startswith("SASL_") and not s.get("TALLY_KAFKA_SASL_PASSWORD_FILE"):
        raise ValueError(
            "the jobs read Kafka's SASL password only from a file on the TaskManager's host:"
            " set TALLY_KAFKA_SASL_PASSWORD_FILE (TALLY_KAFKA_SASL_PASSWORD alone would be a job argument)"
        )
    return [
        "--kafka.security.protocol",
        protocol,
        "--kafka.sasl.mechanism",
        s.get("TALLY_KAFKA_SASL_MECHANISM"),
        "--kafka.sasl.username",
        s.get("TALLY_KAFKA_SASL_USERNAME"),
        "--kafka.sasl.password.file",
        s.get("TALLY_KAFKA_SASL_PASSWORD_FILE"),
        "--kafka.ssl.truststore",
        s.get("TALLY_KAFKA_SSL_TRUSTSTORE"),
        "--kafka.ssl.truststore.password",
        s.get("TALLY_KAFKA_SSL_TRUSTSTORE_PASSWORD"),
        "--kafka.ssl.verify.hostname",
        s.get("TALLY_KAFKA_SSL_VERIFY_HOSTNAME"),
    ]


def login_args(store: str, user: str, password_file: str) -> list[str]:
    """A job's login to `store`: the password only as a file on the TaskManager's host (a job's
    arguments show in Flink's REST API and dashboard)."""
    if not password_file:
        setting = f"TALLY_{store.upper()}_PASSWORD"
        raise ValueError(
            f"the jobs read {store}'s password only from a file on the TaskManager's host:"
            f" set {setting}_FILE ({setting} alone would be a job argument)"
        )
    return [f"--{store}.username", user, f"--{store}.password.file", password_file]


def cassandra_security_args(s: Settings) -> list[str]:
    """The jobs' Cassandra login and TLS, when either is on: the password only as a file on the
    TaskManager's host."""
    user, ssl = s.get("TALLY_CASSANDRA_USERNAME"), s.get("TALLY_CASSANDRA_SSL").lower()
    args = []
    if user:
        args += login_args("cassandra", user, s.cassandra_password_file())
    if ssl == "true":
        args += [
            "--cassandra.ssl",
            "true",
            "--cassandra.ssl.truststore",
            s.get("TALLY_CASSANDRA_SSL_TRUSTSTORE"),
            "--cassandra.ssl.truststore.password",
            s.get("TALLY_CASSANDRA_SSL_TRUSTSTORE_PASSWORD"),
            "--cassandra.ssl.verify.hostname",
            s.get("TALLY_CASSANDRA_SSL_VERIFY_HOSTNAME"),
        ]
    return args


def elasticsearch_security_args(s: Settings) -> list[str]:
    """The jobs' Elasticsearch login and trust store, when set: the password only as a file on
    the TaskManager's host."""
    user, store = s.get("TALLY_ELASTICSEARCH_USERNAME"), s.get("TALLY_ELASTICSEARCH_SSL_TRUSTSTORE")
    args = []
    if user:
        args += login_args("elasticsearch", user, s.elasticsearch_password_file())
    if store:
        args += ["--elasticsearch.ssl.truststore", store]
        args += ["--elasticsearch.ssl.truststore.password", s.get("TALLY_ELASTICSEARCH_SSL_TRUSTSTORE_PASSWORD")]
    return args


JOBS = [
    JobSpec(
        "tally-timeseries-writer",
        "io.tally.jobs.timeseries.TimeSeriesWriterJob",
        ("cassandra", "elasticsearch"),
        from_settings=(("--kafka.fetch.max.wait.ms", "TALLY_TIMESERIES_WRITER_FETCH_MAX_WAIT_MS"),),
    ),
    JobSpec(
        "tally-counter-rollup",
        "io.tally.jobs.counter.CounterRollupJob",
        ("cassandra",),
        from_settings=(("--counter.state.idle.ms", "TALLY_COUNTER_STATE_IDLE_MS"),),
    ),
    # short windows on the local stack, so a test sees an incident within seconds; the
    # switch-out and wait floors scale with the window (100 and 100 ms a minute by default, so
    # ~20 and 20 ms in 10 s), and so do the alerts' hold-downs (a window's size)
    JobSpec(
        "tally-noisy-neighbor",
        "io.tally.jobs.sched.NoisyNeighborJob",
        (),
        (
            "--window.size.ms",
            "10000",
            "--window.slide.ms",
            "2000",
            "--rule.min.switch.outs",
            "20",
            "--rule.min.wait.ms",
            "20",
            "--alert.for.ms",
            "10000",
            "--alert.keep.firing.for.ms",
            "10000",
        ),
    ),
]


STATE_BACKENDS = ("hashmap", "rocksdb")  # JobSettings.STATE_BACKEND
MAX_PARALLELISM = 128  # the jobs' key groups (JobKafka.MAX_PARALLELISM): no job scales beyond it


def default_parallelism(s: Settings) -> int:
    """TALLY_FLINK_PARALLELISM: a number, or "auto" (all TaskManagers' slots shared by the jobs, at least 1)."""
    raw = s.get("TALLY_FLINK_PARALLELISM").strip()
    slots = s.int("TALLY_FLINK_TASK_SLOTS") * s.int("TALLY_FLINK_TASKMANAGERS")
    if raw == "auto":
        return max(1, slots // len(JOBS))
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"TALLY_FLINK_PARALLELISM={raw!r}: a whole number or auto") from None
    if not 1 <= n <= min(slots, MAX_PARALLELISM):
        raise ValueError(f"TALLY_FLINK_PARALLELISM={n}: must be 1 to the TaskManagers' slots ({slots})")
    return n


class FlinkRest:
    def __init__(self, settings: Settings, base: str | None = None):
        self.base = base or f"http://{settings.host}:{settings.port('TALLY_FLINK_PORT')}"

    def call(
        self,
        method: str,
        path: str,
        body: dict | None = None,
        data: bytes | None = None,
        content_type: str = "application/json",
        timeout: float = 60,
    ) -> dict:
        payload = data if data is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.base + path, data=payload, method=method)
        if payload is not None:
            req.add_header("Content-Type", content_type)
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read()
            return json.loads(text) if text else {}

    def jobs(self) -> list[dict]:
        return self.call("GET", "/jobs/overview")["jobs"]

    def upload(self, jar: Path) -> str:
        boundary = uuid.uuid4().hex
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="jarfile"; filename="{jar.name}"\r\n'
                f"Content-Type: application/x-java-archive\r\n\r\n"
            ).encode()
            + jar.read_bytes()
            + f"\r\n--{boundary}--\r\n".encode()
        )
        r = self.call("POST", "/jars/upload", data=body, content_type=f"multipart/form-data; boundary={boundary}")
        return Path(r["filename"]).name


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def jobs_jar() -> Path:
    jars = [j for j in JOBS_JAR_DIR.glob("tally-jobs-*.jar") if not j.name.startswith("original-")]
    if not jars:
        raise RuntimeError(f"no jobs jar in {JOBS_JAR_DIR}: run ./tally build")
    return jars[0]


class Jobs:
    def __init__(self, settings: Settings, log=print, targets=None):
        """targets (deploy's Targets): the jobs of a deployment on someone else's Flink, its
        records kept under $TALLY_HOME/deploy/<Flink's host and port>/ (its checkpoints are the
        cluster's; a restart restores from the savepoint deploy took last); else the local stack's."""
        self.s = settings
        self.log = log
        self.targets = targets
        self.rest = FlinkRest(settings, targets.flink if targets else None)
        home = settings.home
        if targets:
            home = settings.home / "deploy" / targets.flink.split("//", 1)[-1].replace(":", "_").replace("/", "_")
            home.mkdir(parents=True, exist_ok=True)
        self.savepoints = home / "savepoints.json"
        self.builds = home / "job-builds.json"
        self.job_ids = home / "job-ids.json"  # each job's last deployment (its checkpoints' folder)
        self.checkpoints = settings.data("flink") / "checkpoints" if not targets else home / "no-local-checkpoints"
        self.scale = home / "job-scale.json"  # parallelism set by `rescale`, kept across ups
        # the state backend each deployment ran on: its retained checkpoints restore only into that one
        self.backends = home / "job-backends.json"

    def running(self, name: str) -> dict | None:
        return next(
            (
                j
                for j in self.rest.jobs()
                if j["name"] == name and j["state"] in ("RUNNING", "CREATED", "RESTARTING", "INITIALIZING")
            ),
            None,
        )

    def parallelism_of(self, name: str) -> int:
        """The job's parallelism: what `rescale` recorded for it, else the setting's."""
        if self.targets and self.s.get("TALLY_FLINK_PARALLELISM").strip() == "auto":
            slots = self.rest.call("GET", "/overview")["slots-total"]  # someone else's cluster: its slots
            return _read(self.scale).get(name) or max(1, slots // len(JOBS))
        return _read(self.scale).get(name) or default_parallelism(self.s)

    def build_of(self, spec: JobSpec) -> str:
        """What a deployment runs: the jobs jar's digest, the job's arguments and parallelism."""
        import hashlib

        run = json.dumps(spec.args(self.s, self.targets)) + f"@{self.parallelism_of(spec.name)}"
        return hashlib.sha256(jobs_jar().read_bytes() + run.encode()).hexdigest()

    def deployed_builds(self) -> dict:
        return json.loads(self.builds.read_text()) if self.builds.exists() else {}

    def backend(self) -> str:
        """The state backend the jobs run on now (TALLY_FLINK_STATE_BACKEND)."""
        backend = self.s.get("TALLY_FLINK_STATE_BACKEND")
        if backend not in STATE_BACKENDS:
            raise ValueError(f"TALLY_FLINK_STATE_BACKEND={backend!r}: one of {', '.join(STATE_BACKENDS)}")
        return backend

    def backend_of(self, job_id: str) -> str:
        """The backend a deployment ran on; rocksdb for those made before the setting existed."""
        return _read(self.backends).get(job_id, "rocksdb")

    def deploy(self, spec: JobSpec, savepoint: str | None = None, backend: str | None = None) -> str:
        """Runs the job (from `savepoint`: a savepoint or retained checkpoint), on `backend` or
        the setting's; a deployment on another backend than the setting's is a migration step
        and records no build, so the next `up` upgrades it."""
        return self.deploy_all([(spec, savepoint)], backend)[0]

    def deploy_all(self, runs: list[tuple[JobSpec, str | None]], backend: str | None = None) -> list[str]:
        """Runs each (job, restore point) from one upload of the jobs' jar, then waits until every
        one runs: the jobs restore side by side instead of one after another. Their ids, in order."""
        backend = backend or self.backend()
        jar_id = self.rest.upload(jobs_jar())
        job_ids = []
        builds, backends = self.deployed_builds(), _read(self.backends)
        try:
            for spec, savepoint in runs:
                builds[spec.name] = self.build_of(spec) if backend == self.backend() else "migrating"
                self.builds.write_text(json.dumps(builds, indent=2))
                args = spec.args(self.s, self.targets)
                args[args.index("--state.backend") + 1] = backend
                body = {
                    "entryClass": spec.entry_class,
                    "programArgsList": args,
                    "parallelism": self.parallelism_of(spec.name),
                }
                if savepoint:
                    body["savepointPath"] = savepoint
                job_id = self.rest.call("POST", f"/jars/{jar_id}/run", body, timeout=120)["jobid"]
                self._remember(spec.name, job_id)
                backends[job_id] = backend
                self.backends.write_text(json.dumps(backends, indent=2))
                job_ids.append(job_id)
        finally:  # the jobs run from the blob server; an upload kept per deployment filled the disk
            try:
                self.rest.call("DELETE", f"/jars/{jar_id}")
            except OSError:
                pass  # the JobManager's restart clears the upload directory anyway
        for (spec, _), job_id in zip(runs, job_ids):
            self.wait_running(spec.name, job_id)
        return job_ids

    def migrate(self, spec: JobSpec, checkpoint: str, backend: str) -> str:
        """A job's retained checkpoint taken on `backend` (not the setting's) restored into the
        setting's: the job runs once more on `backend` from the checkpoint and stops with a
        savepoint, whose canonical format any backend restores (timers included); the caller
        deploys from that savepoint. A native checkpoint restored into another backend is refused
        by Flink, or worse: RocksDB's checkpoint restored with heap timers lost every timer."""
        self.log(f"   {spec.name}: its checkpoint is of the {backend} state backend; moving it to {self.backend()}")
        self.deploy(spec, checkpoint, backend)
        return self.stop_with_savepoint(spec.name)

    def wait_running(self, name: str, job_id: str, timeout: float = 90) -> None:
        """Until every task of the job runs (restored, sources assigned): only then can it take a
        savepoint, and only then is its state really back."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = self.rest.call("GET", f"/jobs/{job_id}")
            state = job["state"]
            if state in ("FAILED", "CANCELED", "FINISHED"):
                raise RuntimeError(f"{name} ended as {state} right after submission (see the Flink dashboard)")
            if state == "RUNNING" and all(v["status"] == "RUNNING" for v in job["vertices"]):
                return
            time.sleep(0.5)
        raise RuntimeError(f"{name}: not every task RUNNING after {timeout:.0f} s (see the Flink dashboard)")

    def ensure_deployed(self) -> list[str]:
        started = []
        runs: list[tuple[JobSpec, str | None]] = []  # deployed together, after the loop
        for spec in JOBS:
            running = self.running(spec.name)
            if running is not None:
                self._remember(spec.name, running["jid"])  # one started outside ./tally (Flink's CLI)
            if running is None:
                # the cluster was restarted, or the job failed or was cancelled: its state comes back
                # from its newest retained checkpoint or savepoint, never from nothing
                restore = self.restore_point(spec.name)
                self.log(f"deploying Flink job {spec.name}" + (f" from {restore}" if restore else ""))
                deployed = _read(self.job_ids).get(spec.name, [])
                if restore and "/chk-" in restore and self.backend_of(deployed[-1]) != self.backend():
                    restore = self.migrate(spec, restore, self.backend_of(deployed[-1]))
                runs.append((spec, restore))
            elif self.deployed_builds().get(spec.name) != self.build_of(spec):
                # a running job of an older build: upgraded through a savepoint, so no state is lost
                self.log(
                    f"upgrading Flink job {spec.name}: its build changed (stop with a savepoint, resume on the new jar)"
                )
                self.stop_with_savepoint(spec.name)
                self.resume(spec.name)
                started.append(spec.name)
        if runs:
            self.deploy_all(runs)
            for spec, _ in runs:
                self.prune_checkpoints(spec.name)
                started.append(spec.name)
        return started

    def _remember(self, name: str, job_id: str) -> None:
        """Records a deployment of the job: its checkpoints are where a restart restores from."""
        ids = _read(self.job_ids)
        if ids.get(name, [])[-1:] != [job_id]:
            ids[name] = ids.get(name, []) + [job_id]
            self.job_ids.write_text(json.dumps(ids, indent=2))

    def restore_point(self, name: str) -> str | None:
        """The newest complete state of the job's last deployment: its latest retained checkpoint
        (a chk-N folder with its _metadata) or the savepoint recorded for it, whichever is newer."""
        candidates = []
        saved = _read(self.savepoints).get(name)
        if saved and self.targets:  # someone else's cluster keeps it: its path is only meaningful there
            return saved
        if saved:
            meta = Path(saved.removeprefix("file:")) / "_metadata"
            if meta.exists():
                candidates.append((meta.stat().st_mtime, saved))
        deployed = _read(self.job_ids).get(name)
        if deployed:
            for chk in (self.checkpoints / deployed[-1]).glob("chk-*"):
                meta = chk / "_metadata"
                if meta.exists():
                    candidates.append((meta.stat().st_mtime, str(chk)))
        return max(candidates)[1] if candidates else None

    def prune_checkpoints(self, name: str) -> None:
        """Removes the checkpoint folders of the job's earlier deployments once its current one
        has a completed checkpoint (restores are NO_CLAIM: the new job's first checkpoint is a
        full one, so nothing of the old folder is needed after it)."""
        ids = _read(self.job_ids)
        deployed = ids.get(name, [])
        if not deployed or not any((self.checkpoints / deployed[-1]).glob("chk-*/_metadata")):
            return
        for job_id in deployed[:-1]:
            shutil.rmtree(self.checkpoints / job_id, ignore_errors=True)
        ids[name] = deployed[-1:]
        self.job_ids.write_text(json.dumps(ids, indent=2))

    def stop_with_savepoint(self, name: str) -> str:
        job = self.running(name)
        if job is None:
            raise RuntimeError(f"{name} is not running")
        self.wait_running(name, job["jid"])  # a savepoint needs every task running
        trigger = self.rest.call("POST", f"/jobs/{job['jid']}/stop", {"drain": False})["request-id"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            st = self.rest.call("GET", f"/jobs/{job['jid']}/savepoints/{trigger}")
            if st["status"]["id"] == "COMPLETED":
                op = st["operation"]
                if "failure-cause" in op:
                    raise RuntimeError(f"savepoint failed: {op['failure-cause'].get('stack-trace', '')[:500]}")
                path = op["location"]
                saved = json.loads(self.savepoints.read_text()) if self.savepoints.exists() else {}
                saved[name] = path
                self.savepoints.write_text(json.dumps(saved, indent=2))
                return path
            time.sleep(0.5)
        raise RuntimeError("the savepoint did not complete within 120 s")

    def resume(self, name: str) -> str:
        if self.running(name):
            raise RuntimeError(f"{name} is running already; stop it with a savepoint first")
        saved = json.loads(self.savepoints.read_text()) if self.savepoints.exists() else {}
        if name not in saved:
            raise RuntimeError(f"no savepoint recorded for {name}; stop it with a savepoint first")
        spec = next(s for s in JOBS if s.name == name)
        return self.deploy(spec, saved[name])

    def rescale(self, name: str, parallelism: int) -> str:
        """Stops the job with a savepoint and resumes it from that savepoint at `parallelism`
        (its keyed state is split or merged by key group; sources keep their offsets)."""
        if not 1 <= parallelism <= MAX_PARALLELISM:
            raise ValueError(f"parallelism {parallelism}: must be 1 to {MAX_PARALLELISM} (the jobs' key groups)")
        job = self.running(name)
        if job is None:
            raise RuntimeError(f"{name} is not running")
        overview = self.rest.call("GET", "/overview")
        now = self.rest.call("GET", f"/jobs/{job['jid']}")
        in_use = max((v["parallelism"] for v in now["vertices"]), default=1)
        if parallelism > overview["slots-available"] + in_use:
            raise RuntimeError(
                f"{name} at {parallelism} needs {parallelism} slots; {overview['slots-available']} are free "
                f"and it holds {in_use} (raise TALLY_FLINK_TASK_SLOTS)"
            )
        self.stop_with_savepoint(name)
        scale = _read(self.scale)
        scale[name] = parallelism
        self.scale.write_text(json.dumps(scale, indent=2))
        return self.resume(name)

    def cancel(self, name: str) -> None:
        job = self.running(name)
        if job is None:
            raise RuntimeError(f"{name} is not running")
        self.rest.call("PATCH", f"/jobs/{job['jid']}?mode=cancel")
