"""A private PostgreSQL 15 cluster for the control plane (own data dir and port,
wal_level=logical for Debezium). initdb and postgres refuse root, so they run as the
distribution's 'postgres' user."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

from ..settings import REPO
from .base import Component

PG_BIN = Path("/usr/lib/postgresql/15/bin")
MIGRATIONS = REPO / "infra" / "postgres" / "migrations"
SEEDS = REPO / "infra" / "namespaces"
SLOT = "tally_control"  # the Debezium connector's slot.name (infra/connect/tally-control-plane.json)
AS_POSTGRES = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]


class Postgres(Component):
    unprivileged = False  # it runs as postgres (AS_POSTGRES), the owner of its cluster
    name = "postgres"
    version = "15"
    ready_timeout = 60.0
    stop_timeout = 30.0
    # SIGTERM is a "smart" shutdown that waits for every client to leave, and Debezium's
    # replication connection never does; SIGINT is the fast, clean one.
    stop_signal = signal.SIGINT

    def ports(self):
        return {"sql": self.s.port("TALLY_POSTGRES_PORT")}

    def url(self):
        return f"postgresql://postgres@{self.host}:{self.ports()['sql']}/tally_control"

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pgdata"

    def fetch(self):
        if not (PG_BIN / "postgres").exists():
            raise RuntimeError(f"PostgreSQL 15 is not installed ({PG_BIN}); apt-get install postgresql-15")

    def configure(self):
        run_dir = self.data_dir / "run"
        run_dir.mkdir(parents=True, exist_ok=True)
        shutil.chown(self.data_dir, "postgres", "postgres")
        shutil.chown(run_dir, "postgres", "postgres")
        if not (self.pgdata / "PG_VERSION").exists():
            self.log("initialising the private PostgreSQL cluster")
            pwfile = self.data_dir / ".pw"
            pwfile.write_text(self.s.secret("TALLY_POSTGRES_PASSWORD") + "\n")
            shutil.chown(pwfile, "postgres", "postgres")
            os.chmod(pwfile, 0o600)
            try:
                subprocess.run(
                    [
                        *AS_POSTGRES,
                        str(PG_BIN / "initdb"),
                        "-D",
                        str(self.pgdata),
                        "-U",
                        "postgres",
                        "--auth-local=scram-sha-256",
                        "--auth-host=scram-sha-256",
                        f"--pwfile={pwfile}",
                        "-E",
                        "UTF8",
                        "--locale=C.UTF-8",
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                )
            except subprocess.CalledProcessError as e:
                raise RuntimeError(f"initdb failed: {e.stdout}{e.stderr}") from None
            finally:
                pwfile.unlink(missing_ok=True)
        stale_pid_file(self.pgdata / "postmaster.pid")
        conf = self.pgdata / "postgresql.auto.conf"
        conf.write_text(f"""# Written by ./tally up; edit infra/tally/components/postgres.py instead.
listen_addresses = '{self.host}'
port = {self.ports()["sql"]}
unix_socket_directories = '{run_dir}'
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
max_slot_wal_keep_size = '1GB'
shared_buffers = '64MB'
""")
        shutil.chown(conf, "postgres", "postgres")
        # Every connection proves its password (SCRAM), the local socket's too: initdb's
        # --auth-local=trust let any process of the postgres user in as anyone.
        hba = self.pgdata / "pg_hba.conf"
        hba.write_text("""# Written by ./tally up; edit infra/tally/components/postgres.py instead.
# TYPE  DATABASE     USER  ADDRESS  METHOD
local   all          all            scram-sha-256
host    all          all   all      scram-sha-256
local   replication  all            scram-sha-256
host    replication  all   all      scram-sha-256
""")
        shutil.chown(hba, "postgres", "postgres")
        os.chmod(hba, 0o600)

    def command(self):
        return [*AS_POSTGRES, str(PG_BIN / "postgres"), "-D", str(self.pgdata)], self.env()

    def client(self) -> Psql:
        """psql against this cluster, as its superuser."""
        return Psql(self.host, self.ports()["sql"], "postgres", self.s.secret("TALLY_POSTGRES_PASSWORD"), self.env())

    def psql(
        self, sql: str, db: str = "postgres", user: str = "postgres", password: str | None = None, check: bool = True
    ) -> str:
        return self.client().psql(sql, db, user, password, check)

    def psql_script(self, script: str, db: str = "tally_control", **variables: str) -> str:
        return self.client().psql_script(script, db, **variables)

    def ready(self):
        r = subprocess.run(
            [str(PG_BIN / "pg_isready"), "-h", self.host, "-p", str(self.ports()["sql"])], capture_output=True
        )
        return r.returncode == 0

    def after_ready(self):
        provision_control_plane(self.client(), self.s, self.log)


class Psql:
    """psql against a PostgreSQL server (the local cluster, or one `./tally deploy` is pointed at),
    as a role that may create databases and roles. Values of scripts go by environment (psql's
    \\getenv), never on a command line others can read, and are quoted by Postgres itself."""

    def __init__(self, host: str, port: int, user: str, password: str, env: dict | None = None):
        self.host, self.port, self.user, self.password = host, port, user, password
        self.base_env = dict(os.environ if env is None else env)

    def _psql(self, db: str, user: str | None, password: str | None, variables: dict[str, str]) -> tuple[list, dict]:
        """psql's command line (quiet, unaligned, stop on the first error) and environment."""
        env = self.base_env | {"PGPASSWORD": password or self.password, "PGCONNECT_TIMEOUT": "3"}
        argv = ["psql", "-h", self.host, "-p", str(self.port), "-U", user or self.user, "-d", db]
        argv += ["-v", "ON_ERROR_STOP=1", "-X", "-q", "-t", "-A", "-w"]
        env.update({f"TALLY_PSQL_{k.upper()}": v for k, v in variables.items()})
        return argv, env

    def psql(
        self, sql: str, db: str = "postgres", user: str | None = None, password: str | None = None, check: bool = True
    ) -> str:
        """One statement of our own (constant SQL: values from settings go through psql_script)."""
        argv, env = self._psql(db, user, password, {})
        r = subprocess.run([*argv, "-c", sql], capture_output=True, text=True, env=env)
        if check and r.returncode != 0:
            raise RuntimeError(f"psql failed: {r.stderr.strip()}")
        return r.stdout.strip()

    def psql_script(self, script: str, db: str = "tally_control", **variables: str) -> str:
        """Runs a script with psql variables (:'name' in the script is the quoted literal), so
        values are never spliced into SQL text by us."""
        argv, env = self._psql(db, None, None, variables)
        fetch = "".join(f"\\getenv {k} TALLY_PSQL_{k.upper()}\n" for k in variables)
        r = subprocess.run(argv, input=fetch + script, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError(f"psql failed: {r.stderr.strip()}")
        return r.stdout.strip()


def provision_control_plane(pg: Psql, s, log=print) -> list[str]:
    """The control plane's database, roles, schema, seed namespaces and Debezium's slot
    (idempotent); what it did, one line a change."""
    done = []
    if pg.psql("SELECT 1 FROM pg_database WHERE datname = 'tally_control'") != "1":
        pg.psql("CREATE DATABASE tally_control")
        done.append("created database tally_control")
    # roles and passwords are settings: quoted by Postgres (format %I/%L over psql variables),
    # never spliced into the SQL text here
    for role in (s.get("TALLY_CDC_USER"), s.get("TALLY_CONTROL_ADMIN_USER")):
        if pg.psql_script("SELECT 1 FROM pg_roles WHERE rolname = :'user';", db="postgres", user=role) != "1":
            done.append(f"created role {role}")
    pg.psql_script(
        """SELECT format('CREATE ROLE %I WITH LOGIN REPLICATION PASSWORD %L', :'user', :'pw')
                        WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'user') \\gexec""",
        db="postgres",
        user=s.get("TALLY_CDC_USER"),
        pw=s.secret("TALLY_CDC_PASSWORD"),
    )
    done += [f"applied migration {m}" for m in apply_migrations(pg)]
    pg.psql_script(
        """SELECT format('GRANT SELECT ON ALL TABLES IN SCHEMA public TO %I', :'user') \\gexec""",
        user=s.get("TALLY_CDC_USER"),
    )
    pg.psql_script(
        """SELECT format('CREATE ROLE %I WITH LOGIN PASSWORD %L', :'user', :'pw')
                        WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'user') \\gexec
                        SELECT format('GRANT SELECT, INSERT, UPDATE, DELETE ON namespaces TO %I', :'user') \\gexec""",
        user=s.get("TALLY_CONTROL_ADMIN_USER"),
        pw=s.secret("TALLY_CONTROL_ADMIN_PASSWORD"),
    )
    seeded = seed_namespaces(pg)
    if seeded:
        log(f"seeded namespaces: {', '.join(seeded)}")
        done.append(f"seeded namespaces {', '.join(seeded)}")
    if ensure_slot(pg):
        done.append(f"created replication slot {SLOT}")
    return done


def control_plane_differences(pg: Psql, s) -> list[str]:
    """What provision_control_plane would change, found without changing anything."""
    if pg.psql("SELECT 1 FROM pg_database WHERE datname = 'tally_control'") != "1":
        return ["database tally_control is missing (and everything in it)"]
    out = []
    for role in (s.get("TALLY_CDC_USER"), s.get("TALLY_CONTROL_ADMIN_USER")):
        if pg.psql_script("SELECT 1 FROM pg_roles WHERE rolname = :'user';", db="postgres", user=role) != "1":
            out.append(f"role {role} is missing")
    out += [f"migration {m} is not applied" for m in pending_migrations(pg)]
    if pg.psql("SELECT to_regclass('public.seeded_namespaces') IS NOT NULL", db="tally_control") == "t":
        done = set(pg.psql("SELECT name FROM seeded_namespaces", db="tally_control").split())
        out += [f"seed namespace {f.stem} is not seeded" for f in sorted(SEEDS.glob("*.json")) if f.stem not in done]
    if pg.psql_script("SELECT 1 FROM pg_replication_slots WHERE slot_name = :'slot';", slot=SLOT) != "1":
        out.append(f"replication slot {SLOT} is missing")
    return out


def apply_migrations(pg) -> list[str]:
    """Applies infra/postgres/migrations/V<n>__<name>.sql in order, once each, recording
    them in schema_migrations (each file runs in one transaction)."""
    pg.psql(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, "
        "applied_at timestamptz NOT NULL DEFAULT now())",
        db="tally_control",
    )
    applied = []
    for f in pending_migrations(pg):
        version = f.name[1:].split("__")[0]
        sql = f.read_text()
        name = f.stem.split("__", 1)[1]
        pg.psql(
            f"BEGIN;\n{sql}\nINSERT INTO schema_migrations (version, name) VALUES ({int(version)}, '{name}');\nCOMMIT;",
            db="tally_control",
        )
        applied.append(f.name)
    return applied


def pending_migrations(pg) -> list[Path]:
    """The migration files not recorded in schema_migrations (all of them before the first)."""
    files = sorted(MIGRATIONS.glob("V*__*.sql"), key=lambda p: int(p.name[1:].split("__")[0]))
    if pg.psql("SELECT to_regclass('public.schema_migrations') IS NOT NULL", db="tally_control") != "t":
        return files
    done = set(pg.psql("SELECT version FROM schema_migrations", db="tally_control").split())
    return [f for f in files if f.name[1:].split("__")[0] not in done]


def seed_namespaces(pg) -> list[str]:
    """Inserts each infra/namespaces/<name>.json once (recorded in seeded_namespaces): a new seed
    file appears on the next up, a seed deleted through the admin API stays deleted. Kinds and
    configs are validated by the gateway's parser in the Java unit tests of these files."""
    done = set(pg.psql("SELECT name FROM seeded_namespaces", db="tally_control").split())
    seeded = []
    for f in sorted(SEEDS.glob("*.json")):
        name = f.stem
        if name in done:
            continue
        config = json.loads(f.read_text())
        pg.psql_script(
            """BEGIN;
INSERT INTO namespaces (name, kind, config) VALUES (:'name', :'kind', :'config'::jsonb) ON CONFLICT (name) DO NOTHING;
INSERT INTO seeded_namespaces (name) VALUES (:'name');
COMMIT;""",
            name=name,
            kind=config["kind"],
            config=json.dumps(config),
        )
        seeded.append(name)
    return seeded


def ensure_slot(pg) -> bool:
    """Creates Debezium's logical replication slot before the connector first runs, so changes
    made while Connect is down (or not yet started) are kept for it. down --wipe removes it
    with the data directory. Whether it made one."""
    made = pg.psql_script(
        """SELECT slot_name FROM pg_create_logical_replication_slot(:'slot', 'pgoutput')
                      WHERE NOT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = :'slot');""",
        slot=SLOT,
    )
    return bool(made)


def stale_pid_file(pid_file: Path) -> None:
    """After a crash (or SIGKILL) postmaster.pid stays; when its PID now belongs to another
    program, postgres refuses to start. Removed only when that PID is not a postgres process."""
    if not pid_file.exists():
        return
    try:
        pid = int(pid_file.read_text().split()[0])
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except (ValueError, IndexError, OSError):
        comm = ""
    if comm != "postgres":
        pid_file.unlink(missing_ok=True)
