"""Stack settings: documented defaults in infra/tally.env, overridden by the environment."""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULTS_FILE = REPO / "infra" / "tally.env"

_LINE = re.compile(r"^\s*(TALLY_[A-Z0-9_]+)\s*=\s*(.*?)\s*$")


def read_env_file(path: Path) -> dict[str, str]:
    """Parses KEY=value lines; '#' starts a comment line. Values are taken literally."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("#"):
            continue
        m = _LINE.match(line)
        if m:
            values[m.group(1)] = m.group(2)
    return values


#: The three-node profile's defaults (TALLY_NODES=3): keyspaces replicated three times in the
#: local datacenter, every Cassandra read and write at LOCAL_QUORUM (one node can be down).
#: The identity of the broker's own links in the secure profile (PLAIN over TLS, in its config).
KAFKA_BROKER_USER = "tally-broker"

THREE_NODES = {
    "TALLY_CASSANDRA_REPLICATION_STRATEGY": "NetworkTopologyStrategy",
    "TALLY_CASSANDRA_REPLICATION_FACTOR": "3",
    "TALLY_CASSANDRA_CONSISTENCY": "LOCAL_QUORUM",
}


#: The secure profile's client settings (TALLY_SECURE=1), unless set otherwise: every Tally client
#: speaks SASL_SSL to Kafka as the stack's SCRAM user, TLS with a login to Cassandra and to
#: Elasticsearch (https, basic authentication), trusting
#: the stack's own CA. `{home}` is the profile's TALLY_HOME, `{ca}` its CA's certificate.
SECURE = {
    "TALLY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
    "TALLY_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
    "TALLY_KAFKA_SASL_PASSWORD_FILE": "{home}/service-secrets/kafka-scram-password",
    "TALLY_KAFKA_SSL_TRUSTSTORE": "{ca}",
    "TALLY_CASSANDRA_SSL": "true",
    "TALLY_CASSANDRA_SSL_TRUSTSTORE": "{ca}",
    "TALLY_ELASTICSEARCH_USERNAME": "tally",
    "TALLY_ELASTICSEARCH_SSL_TRUSTSTORE": "{ca}",
}


@dataclass
class Settings:
    values: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(
        cls, environ: dict[str, str] | None = None, defaults: Path = DEFAULTS_FILE, overlay: Path | None = None
    ) -> Settings:
        """defaults < overlay (an env file of a deployment, e.g. `./tally deploy --env FILE`) <
        the environment. A key of the overlay that is no setting is refused by name (a typo must
        not leave a default in place)."""
        env = os.environ if environ is None else environ
        values = read_env_file(defaults)
        if overlay is not None:
            given = read_env_file(overlay)
            unknown = sorted(set(given) - set(values))
            if unknown:
                raise ValueError(f"{overlay}: {', '.join(unknown)} are no settings (see {defaults.name})")
            values.update(given)
        for key in list(values):
            if key in env and env[key] != "":
                values[key] = env[key]
        if values.get("TALLY_NODES") == "3":
            # the three-node profile: what a cluster of three runs with, unless set otherwise
            for key, value in THREE_NODES.items():
                if not env.get(key):
                    values[key] = value
        if values.get("TALLY_SECURE") == "1":
            profile = cls(values)
            home, ca = profile.home, profile.local_ca_pem()
            if not env.get("TALLY_KAFKA_SASL_USERNAME"):
                values["TALLY_KAFKA_SASL_USERNAME"] = values["TALLY_KAFKA_SCRAM_USER"]
            for key, value in SECURE.items():
                if not env.get(key):
                    values[key] = value.format(home=home, ca=ca)
        return cls(values)

    def get(self, key: str) -> str:
        if key not in self.values:
            raise KeyError(f"unknown setting {key} (not declared in {DEFAULTS_FILE.name})")
        return self.values[key]

    def port(self, key: str) -> int:
        raw = self.get(key)
        try:
            port = int(raw)
        except ValueError:
            raise ValueError(f"{key}={raw!r} is not a port number") from None
        if not 1 <= port <= 65535:
            raise ValueError(f"{key}={port} is outside 1..65535")
        return port

    def int(self, key: str) -> int:
        raw = self.get(key)
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"{key}={raw!r} is not a whole number") from None

    @property
    def host(self) -> str:
        return self.get("TALLY_HOST")

    @property
    def nodes(self) -> int:
        """How many Kafka brokers and Cassandra nodes the stack runs (TALLY_NODES: 1 or 3)."""
        n = self.int("TALLY_NODES")
        if n not in (1, 3):
            raise ValueError(f"TALLY_NODES={n}: 1 or 3")
        return n

    @property
    def secure(self) -> bool:
        """The secure profile (TALLY_SECURE=1): no plaintext listener, TLS and a login everywhere."""
        flag = self.get("TALLY_SECURE")
        if flag not in ("0", "1"):
            raise ValueError(f"TALLY_SECURE={flag!r}: 0 or 1")
        if flag == "1" and self.nodes != 1:
            raise ValueError("the secure profile runs one node (TALLY_SECURE=1 with TALLY_NODES=1)")
        return flag == "1"

    def node_host(self, node: int) -> str:
        """Node i's address: TALLY_HOST for the first, then the next loopback aliases (127.0.0.2,
        127.0.0.3), as Cassandra's ccm runs a cluster on one machine with the same ports."""
        if node == 1:
            return self.host
        parts = self.host.split(".")
        if len(parts) != 4 or parts[0] != "127" or int(parts[3]) + node - 1 > 254:
            raise ValueError(f"TALLY_NODES > 1 needs a loopback TALLY_HOST (127.x.y.z), not {self.host}")
        return ".".join(parts[:3] + [str(int(parts[3]) + node - 1)])

    def kafka_bootstrap(self) -> str:
        """What Tally's clients dial: every broker's SASL_SSL listener when the clients' security
        (TALLY_KAFKA_SECURITY_PROTOCOL) is on, else the plaintext one."""
        if self.get("TALLY_KAFKA_SECURITY_PROTOCOL").upper() != "PLAINTEXT":
            return self.kafka_secure_bootstrap()
        return self.kafka_plaintext_bootstrap()

    def kafka_admin_config(self) -> dict[str, str]:
        """The launcher's own administration of its brokers (topics, SCRAM users): the plaintext
        listener, or in the secure profile the SASL_SSL one as the broker's PLAIN identity (the
        SCRAM users do not exist before the launcher makes them)."""
        if not self.secure:
            return {"bootstrap.servers": self.kafka_plaintext_bootstrap(), "log_level": 0}
        return {
            "bootstrap.servers": self.kafka_secure_bootstrap(),
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.username": KAFKA_BROKER_USER,
            "sasl.password": self.kafka_broker_password(),
            "ssl.ca.location": str(self.local_ca_pem()),
            "log_level": 0,
        }

    def local_ca_pem(self) -> Path:
        """The certificate of the stack's own CA (tally.tls.LocalCa makes it): the local servers'
        clients' trust store."""
        return self.home / "tls" / "ca.pem"

    def kafka_broker_password(self) -> str:
        """The password of the broker's own identity in the secure profile (made once, mode 600)."""
        return self.generated_secret(self.home / "secrets" / "kafka-broker-password")

    def kafka_plaintext_bootstrap(self) -> str:
        """Every broker's plaintext listener: the launcher's own administration of its brokers."""
        port = self.port("TALLY_KAFKA_PORT")
        return ",".join(f"{self.node_host(i)}:{port}" for i in range(1, self.nodes + 1))

    def node_hosts(self) -> list[str]:
        """Every node's address (Kafka brokers and Cassandra nodes share them)."""
        return [self.node_host(i) for i in range(1, self.nodes + 1)]

    def cassandra_hosts(self) -> list[str]:
        return self.node_hosts()

    @property
    def home(self) -> Path:
        """TALLY_HOME, else .tally/ (the three-node profile: .tally/nodes-3/, the secure one
        .tally/secure/: their own data and state beside the one-node stack's)."""
        raw = self.get("TALLY_HOME")
        if raw:
            return Path(raw).resolve()
        if self.values.get("TALLY_SECURE") == "1":
            return REPO / ".tally" / "secure"
        return REPO / ".tally" / "nodes-3" if self.nodes == 3 else REPO / ".tally"

    def admin_token(self) -> str:
        """The token that guards the admin API, Recount and registry writes: TALLY_ADMIN_TOKEN when
        set, else $TALLY_HOME/admin-token, made on first use (mode 600) so no stack starts open."""
        return self.secret("TALLY_ADMIN_TOKEN") or self.generated_secret(self.home / "admin-token")

    @staticmethod
    def generated_secret(path: Path) -> str:
        """A random secret kept in `path` (mode 600), made on first use: the same on every later call."""
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            # written whole, then linked in place: a reader never sees it half written, and of two
            # launchers (or two servers set up side by side) making it at once, the first one wins
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(32))
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        return path.read_text().strip()

    def kafka_scram_password(self) -> str:
        """The password of the local broker's SCRAM user (TALLY_KAFKA_SCRAM_USER): the setting, or
        one made on first use in $TALLY_HOME/service-secrets/kafka-scram-password (the service
        user's jobs read it when the stack's clients go through the SASL_SSL listener)."""
        return (
            self.secret("TALLY_KAFKA_SCRAM_PASSWORD") or self.service_secret("kafka-scram-password").read_text().strip()
        )

    def kafka_password_properties(self) -> Path:
        """service_secrets/kafka-client.properties: `password=` the Kafka SASL password, for a
        FileConfigProvider reference (${file:<path>:password}) where a client's options are shown
        (the SQL catalog's tables); written each call, mode 600, owned by the service user."""
        pw = self.secret("TALLY_KAFKA_SASL_PASSWORD")
        escaped = "".join("\\" + c if c in "\\=:#! " else c for c in pw)
        path = self.service_secret("kafka-client.properties")  # made (and handed over) if new
        path.write_text(f"password={escaped}\n")
        return path

    def kafka_secure_bootstrap(self) -> str:
        """Every broker's SASL_SSL listener (the local stack's)."""
        port = self.port("TALLY_KAFKA_SECURE_PORT")
        return ",".join(f"{self.node_host(i)}:{port}" for i in range(1, self.nodes + 1))

    #: How Tally's clients reach Kafka: the settings the Java services and jobs read (KafkaClientSecurity).
    KAFKA_CLIENT_SECURITY = (
        "TALLY_KAFKA_SECURITY_PROTOCOL",
        "TALLY_KAFKA_SASL_MECHANISM",
        "TALLY_KAFKA_SASL_USERNAME",
        "TALLY_KAFKA_SSL_TRUSTSTORE",
        "TALLY_KAFKA_SSL_TRUSTSTORE_PASSWORD",
        "TALLY_KAFKA_SSL_VERIFY_HOSTNAME",
    )

    def kafka_client_env(self) -> dict[str, str]:
        """The Kafka client security of a Java service's environment (the password resolved from
        its file when TALLY_KAFKA_SASL_PASSWORD_FILE is set)."""
        env = {k: self.get(k) for k in self.KAFKA_CLIENT_SECURITY}
        env["TALLY_KAFKA_SASL_PASSWORD"] = self.secret("TALLY_KAFKA_SASL_PASSWORD")
        return env

    #: How Tally's clients log in to Cassandra and check its nodes (CassandraClientSecurity).
    CASSANDRA_CLIENT_SECURITY = (
        "TALLY_CASSANDRA_USERNAME",
        "TALLY_CASSANDRA_SSL",
        "TALLY_CASSANDRA_SSL_TRUSTSTORE",
        "TALLY_CASSANDRA_SSL_TRUSTSTORE_PASSWORD",
        "TALLY_CASSANDRA_SSL_VERIFY_HOSTNAME",
    )

    @property
    def service_secrets(self) -> Path:
        """Secrets the servers' own user reads (the jobs on the TaskManagers): made by the launcher,
        owned by the service user when the launcher is root, mode 600."""
        return self.home / "service-secrets"

    def service_secret(self, name: str) -> Path:
        """A secret made once in service_secrets/<name>, readable by the service user; its path."""
        from . import privileges

        path = self.service_secrets / name
        new = not path.exists()
        self.generated_secret(path)
        if new:
            os.chmod(self.service_secrets, 0o700)
            if privileges.is_root():
                user = self.get("TALLY_SERVICE_USER")
                privileges.ensure_user(user)
                privileges.give(user, [self.service_secrets])
        return path

    def cassandra_password(self) -> str:
        """The password of Tally's Cassandra role: TALLY_CASSANDRA_PASSWORD (or its _FILE), else
        the one the local stack made for it (service_secrets/cassandra-password)."""
        return self.secret("TALLY_CASSANDRA_PASSWORD") or self.service_secret("cassandra-password").read_text().strip()

    def cassandra_password_file(self) -> str:
        """A file holding that password, for the jobs: TALLY_CASSANDRA_PASSWORD_FILE, else the local
        stack's own; empty when only a value was given (a job must not take it as an argument)."""
        if self.get("TALLY_CASSANDRA_PASSWORD_FILE"):
            return self.get("TALLY_CASSANDRA_PASSWORD_FILE")
        if self.get("TALLY_CASSANDRA_PASSWORD"):
            return ""
        return str(self.service_secret("cassandra-password"))

    def cassandra_client_env(self) -> dict[str, str]:
        """The Cassandra login and TLS of a Java service's environment (the password resolved)."""
        env = {k: self.get(k) for k in self.CASSANDRA_CLIENT_SECURITY}
        env["TALLY_CASSANDRA_PASSWORD"] = self.cassandra_password() if self.get("TALLY_CASSANDRA_USERNAME") else ""
        return env

    #: How Tally's clients log in to Elasticsearch and check its node (ElasticsearchClientSecurity).
    ELASTICSEARCH_CLIENT_SECURITY = (
        "TALLY_ELASTICSEARCH_USERNAME",
        "TALLY_ELASTICSEARCH_SSL_TRUSTSTORE",
        "TALLY_ELASTICSEARCH_SSL_TRUSTSTORE_PASSWORD",
    )

    def elasticsearch_url(self) -> str:
        """Elasticsearch as Tally's clients reach it: TALLY_ELASTICSEARCH_URL, else the local
        node's (https in the secure profile)."""
        scheme = "https" if self.secure else "http"
        return self.get("TALLY_ELASTICSEARCH_URL") or f"{scheme}://{self.host}:{self.port('TALLY_ELASTICSEARCH_PORT')}"

    def elasticsearch_password(self) -> str:
        """The password of Tally's Elasticsearch user: TALLY_ELASTICSEARCH_PASSWORD (or its _FILE),
        else the one the local secure profile made for it (service_secrets/elasticsearch-password)."""
        return (
            self.secret("TALLY_ELASTICSEARCH_PASSWORD")
            or self.service_secret("elasticsearch-password").read_text().strip()
        )

    def elasticsearch_password_file(self) -> str:
        """A file holding that password, for the jobs: TALLY_ELASTICSEARCH_PASSWORD_FILE, else the
        local stack's own; empty when only a value was given (a job must not take it as an argument)."""
        if self.get("TALLY_ELASTICSEARCH_PASSWORD_FILE"):
            return self.get("TALLY_ELASTICSEARCH_PASSWORD_FILE")
        if self.get("TALLY_ELASTICSEARCH_PASSWORD"):
            return ""
        return str(self.service_secret("elasticsearch-password"))

    def elasticsearch_client_env(self) -> dict[str, str]:
        """The Elasticsearch login and trust of a Java service's environment (the password resolved)."""
        env = {k: self.get(k) for k in self.ELASTICSEARCH_CLIENT_SECURITY}
        login = self.get("TALLY_ELASTICSEARCH_USERNAME")
        env["TALLY_ELASTICSEARCH_PASSWORD"] = self.elasticsearch_password() if login else ""
        return env

    def elasticsearch_requests_args(self) -> dict:
        """The same for Python's requests: requests.get(url, **args) logs in and checks the node."""
        args: dict = {}
        user = self.get("TALLY_ELASTICSEARCH_USERNAME")
        if user:
            args["auth"] = (user, self.elasticsearch_password())
        store = self.get("TALLY_ELASTICSEARCH_SSL_TRUSTSTORE")
        if store:
            if not store.lower().endswith((".pem", ".crt")):
                raise ValueError(f"TALLY_ELASTICSEARCH_SSL_TRUSTSTORE={store}: Python's clients read PEM only")
            args["verify"] = store
        return args

    def cassandra_connect_args(self) -> dict:
        """The same for the Python driver: Cluster(**args) logs in and speaks TLS as configured."""
        import ssl

        args: dict = {}
        user = self.get("TALLY_CASSANDRA_USERNAME")
        if user:
            from cassandra.auth import PlainTextAuthProvider

            args["auth_provider"] = PlainTextAuthProvider(user, self.cassandra_password())
        flag = self.get("TALLY_CASSANDRA_SSL").lower()
        if flag not in ("true", "false"):
            raise ValueError(f"TALLY_CASSANDRA_SSL={flag!r}: true or false")
        if flag == "true":
            store = self.get("TALLY_CASSANDRA_SSL_TRUSTSTORE")
            if store and not store.lower().endswith((".pem", ".crt")):
                raise ValueError(f"TALLY_CASSANDRA_SSL_TRUSTSTORE={store}: the Python driver reads PEM only")
            ctx = ssl.create_default_context(cafile=store or None)
            ctx.check_hostname = self.get("TALLY_CASSANDRA_SSL_VERIFY_HOSTNAME").lower() != "false"
            args["ssl_context"] = ctx
        return args

    def kafka_java_properties(self, password_ref: str) -> dict[str, str]:
        """The same security as a Java client's properties, the password given as `password_ref`
        (a config-provider reference such as ${env:TALLY_KAFKA_SASL_PASSWORD}, resolved by the
        client, so the secret is in no file this writes). Empty for PLAINTEXT."""
        protocol = self.get("TALLY_KAFKA_SECURITY_PROTOCOL").upper()
        if protocol == "PLAINTEXT":
            return {}
        props = {"security.protocol": protocol}
        if protocol.startswith("SASL_"):
            mechanism = self.get("TALLY_KAFKA_SASL_MECHANISM").upper()
            module = (
                "org.apache.kafka.common.security.plain.PlainLoginModule"
                if mechanism == "PLAIN"
                else "org.apache.kafka.common.security.scram.ScramLoginModule"
            )
            user = self.get("TALLY_KAFKA_SASL_USERNAME").replace("\\", "\\\\").replace('"', '\\"')
            props["sasl.mechanism"] = mechanism
            props["sasl.jaas.config"] = f'{module} required username="{user}" password="{password_ref}";'
        if protocol.endswith("SSL"):
            store = self.get("TALLY_KAFKA_SSL_TRUSTSTORE")
            if store:
                props["ssl.truststore.location"] = store
                lower = store.lower()
                props["ssl.truststore.type"] = (
                    "PEM" if lower.endswith((".pem", ".crt")) else "JKS" if lower.endswith(".jks") else "PKCS12"
                )
                if self.get("TALLY_KAFKA_SSL_TRUSTSTORE_PASSWORD"):
                    props["ssl.truststore.password"] = self.get("TALLY_KAFKA_SSL_TRUSTSTORE_PASSWORD")
            verify = self.get("TALLY_KAFKA_SSL_VERIFY_HOSTNAME").lower() != "false"
            props["ssl.endpoint.identification.algorithm"] = "https" if verify else ""
        return props

    def kafka_client_config(self) -> dict[str, str]:
        """The same security for librdkafka (confluent-kafka): the launcher's and tools' clients."""
        protocol = self.get("TALLY_KAFKA_SECURITY_PROTOCOL").upper()
        conf = {"bootstrap.servers": self.kafka_bootstrap(), "security.protocol": protocol}
        if protocol.startswith("SASL_"):
            conf["sasl.mechanism"] = self.get("TALLY_KAFKA_SASL_MECHANISM")
            conf["sasl.username"] = self.get("TALLY_KAFKA_SASL_USERNAME")
            conf["sasl.password"] = self.secret("TALLY_KAFKA_SASL_PASSWORD")
        if protocol.endswith("SSL"):
            if self.get("TALLY_KAFKA_SSL_TRUSTSTORE"):
                conf["ssl.ca.location"] = self.get("TALLY_KAFKA_SSL_TRUSTSTORE")
            if self.get("TALLY_KAFKA_SSL_VERIFY_HOSTNAME").lower() == "false":
                conf["ssl.endpoint.identification.algorithm"] = "none"
        return conf

    def secret(self, key: str) -> str:
        """A secret setting: read from the file <key>_FILE names when that is set (so it is in no
        environment or command line), else the value itself."""
        path = self.values.get(key + "_FILE", "")
        return Path(path).read_text().strip() if path else self.get(key)

    def admin_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.admin_token()}"}

    def dist(self, name: str) -> Path:
        """Downloaded servers: the three-node profile's default home shares the one-node stack's."""
        root = REPO / ".tally" if not self.get("TALLY_HOME") else self.home
        return root / "dist" / name

    def data(self, name: str) -> Path:
        return self.home / "data" / name

    def conf(self, name: str) -> Path:
        return self.home / "conf" / name

    def log(self, name: str) -> Path:
        return self.home / "logs" / f"{name}.log"
