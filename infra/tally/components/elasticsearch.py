"""Elasticsearch single node from Maven jars, in a home directory made here.

The local stack runs 7.17 without security. The secure profile runs 7.10.2 with its security
modules (x-pack-core, x-pack-security): the newest 7.x whose x-pack-security is on Maven Central.
Its node takes only https (a key store of the stack's CA) and basic authentication against the
file realm: one user, Tally's, whose role may manage Tally's indices and templates and read the
cluster's health (the exporter's scrape).

Elasticsearch refuses to run as root; like every server it runs as the service user
(tally.privileges), which owns its data and config directories."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import secrets
import shutil
from pathlib import Path

from ..fetch import layout_stamp
from ..tls import LocalCa
from .base import JAVA, Component

NETTY_MODULE = "transport-netty4"

DESCRIPTOR = """description=Netty 4 based transport implementation
version={v}
name=transport-netty4
classname=org.elasticsearch.transport.Netty4Plugin
java.version=1.8
elasticsearch.version={v}
extended.plugins=
has.native.controller=false
"""

# Elasticsearch's security manager applies a module's policy by code base, one grant per jar.
POLICY = """grant codeBase "${codebase.netty-common}" {
  permission java.io.FilePermission "/proc/sys/net/core/somaxconn", "read";
  permission java.net.SocketPermission "*", "accept,connect";
  permission java.lang.RuntimePermission "setContextClassLoader";
};
grant codeBase "${codebase.netty-transport}" {
  permission java.util.PropertyPermission "sun.nio.ch.bugLevel", "write";
};
"""

SECURITY_DESCRIPTORS = {
    # module: (class, the module it extends, description)
    "x-pack-core": ("org.elasticsearch.xpack.core.XPackPlugin", "", "Elasticsearch Expanded Pack Plugin - Core"),
    "x-pack-security": (
        "org.elasticsearch.xpack.security.Security",
        "x-pack-core",
        "Elasticsearch Expanded Pack Plugin - Security",
    ),
}

# x-pack-core carries its own Netty transport (TLS on it); security sets factories and class
# loaders while its realms start (what its shipped policy grants, less what only SAML, Kerberos
# and LDAP realms need, which this node does not configure).
SECURITY_POLICIES = {
    "x-pack-core": POLICY,
    "x-pack-security": """grant {
  permission java.lang.RuntimePermission "setFactory";
  permission java.lang.RuntimePermission "getClassLoader";
  permission java.lang.RuntimePermission "setContextClassLoader";
  permission java.lang.RuntimePermission "accessDeclaredMembers";
  permission java.lang.reflect.ReflectPermission "suppressAccessChecks";
  permission java.util.PropertyPermission "org.apache.xml.security.ignoreLineBreaks", "read,write";
};
""",
}

#: Tally's role on a secured node: its indices and templates, and the cluster's health and stats.
ROLES = """tally_client:
  cluster: [monitor, manage_index_templates]
  indices:
    - names: ["tally-*"]
      privileges: [all]
"""

PBKDF2_ROUNDS = 10000


def pbkdf2_hash(password: str, salt: bytes | None = None) -> str:
    """A password as Elasticsearch's file realm stores it ({PBKDF2}: HMAC-SHA512, a 32-byte salt
    and key, base64), what its users tool writes."""
    salt = salt if salt is not None else secrets.token_bytes(32)
    key = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, PBKDF2_ROUNDS, dklen=32)
    return f"{{PBKDF2}}{PBKDF2_ROUNDS}${base64.b64encode(salt).decode()}${base64.b64encode(key).decode()}"


def artifact(jar: Path) -> str:
    """A jar's artifact name without its version: log4j-api-2.17.1.jar -> log4j-api."""
    return re.sub(r"-\d[^-]*(-[A-Za-z]+)?\.jar$|\.jar$", "", jar.name)


class Elasticsearch(Component):
    name = "elasticsearch"
    relaxed_timers = True
    ready_timeout = 150.0
    stop_timeout = 60.0

    def ports(self):
        return {
            "http": self.s.port("TALLY_ELASTICSEARCH_PORT"),
            "transport": self.s.port("TALLY_ELASTICSEARCH_TRANSPORT_PORT"),
        }

    @property
    def version(self) -> str:
        return "7.10.2" if self.s.secure else "7.17.29"

    @property
    def dists(self) -> tuple[str, ...]:
        if self.s.secure:
            return ("elasticsearch-secure", "elasticsearch-x-pack-core", "elasticsearch-x-pack-security")
        return ("elasticsearch",)

    def url(self):
        return f"{'https' if self.s.secure else 'http'}://{self.host}:{self.ports()['http']}"

    @property
    def es_home(self):
        return self.s.dist("elasticsearch") / "home"

    def fetch(self):
        super().fetch()
        home = self.es_home
        stamp = home / ".built"
        wanted = layout_stamp(self.s, self.dists[0], "es-home-4") + "".join(
            layout_stamp(self.s, d, "") for d in self.dists[1:]
        )
        if stamp.exists() and stamp.read_text() == wanted:
            return
        if home.exists():
            shutil.rmtree(home)
        module = home / "modules" / NETTY_MODULE
        (home / "lib").mkdir(parents=True)
        module.mkdir(parents=True)
        (home / "plugins").mkdir()
        (home / "bin").mkdir()  # checked by the security manager set-up, even though unused
        for j in sorted(self.lib.glob("*.jar")):
            # Netty and the transport plugin form the module; everything else is the core.
            dest = module if j.name.startswith(("netty-", "transport-netty4-client")) else home / "lib"
            shutil.copy2(j, dest / j.name)
        (module / "plugin-descriptor.properties").write_text(DESCRIPTOR.format(v=self.version))
        (module / "plugin-security.policy").write_text(POLICY)
        if self.s.secure:
            self.lay_out_security_modules(home)
        stamp.write_text(wanted)

    def lay_out_security_modules(self, home: Path) -> None:
        """x-pack-core and x-pack-security as modules, each with the jars of its dist that the
        classpath it extends lacks (by artifact: a module may not carry a second copy of a jar
        its parent has, even of another version)."""
        seen = {artifact(j) for j in (home / "lib").glob("*.jar")}
        for name, dist in (
            ("x-pack-core", "elasticsearch-x-pack-core"),
            ("x-pack-security", "elasticsearch-x-pack-security"),
        ):
            module = home / "modules" / name
            module.mkdir(parents=True)
            own = set()
            for j in sorted((self.s.dist(dist) / "lib").glob("*.jar")):
                if artifact(j) not in seen:
                    shutil.copy2(j, module / j.name)
                    own.add(artifact(j))
            seen |= own  # x-pack-security extends x-pack-core (whose own Netty transport it uses)
            cls, extends, description = SECURITY_DESCRIPTORS[name]
            (module / "plugin-descriptor.properties").write_text(
                f"description={description}\nversion={self.version}\nname={name}\nclassname={cls}\n"
                f"java.version=1.8\nelasticsearch.version={self.version}\nextended.plugins={extends}\n"
                "has.native.controller=false\n"
            )
            (module / "plugin-security.policy").write_text(SECURITY_POLICIES[name])

    def configure(self):
        p = self.ports()
        for d in (self.data_dir / "data", self.data_dir / "logs", self.data_dir / "tmp", self.conf_dir):
            d.mkdir(parents=True, exist_ok=True)
        (
            self.conf_dir / "elasticsearch.yml"
        ).write_text(f"""# Written by ./tally up; edit infra/tally/components/elasticsearch.py instead.
cluster.name: tally-local
node.name: tally-es-1
network.host: {self.host}
http.port: {p["http"]}
transport.port: {p["transport"]}
discovery.type: single-node
path.data: {self.data_dir / "data"}
path.logs: {self.data_dir / "logs"}
action.auto_create_index: "+tally-*,-*"
{self.security_settings() if self.s.secure else ""}""")
        if self.s.secure:
            self.write_file_realm()
            os.chmod(self.conf_dir / "elasticsearch.yml", 0o600)  # it holds the key store's password
        (self.conf_dir / "log4j2.properties").write_text("""status = error
appender.console.type = Console
appender.console.name = console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] %marker%m%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = console
""")

    def security_settings(self) -> str:
        """https and transport TLS with a key store of the stack's CA; logins against the file
        realm only (no native realm: its users would live in an index Tally does not manage)."""
        keystore, password = LocalCa(self.s).component_keystore(self)
        tls = "\n".join(
            f"xpack.security.{layer}.ssl.{key}: {value}"
            for layer in ("http", "transport")
            for key, value in (
                ("enabled", "true"),
                ("keystore.path", keystore),
                ("keystore.password", password),
                ("truststore.path", keystore),
                ("truststore.password", password),
            )
        )
        return f"""xpack.security.enabled: true
xpack.security.transport.ssl.verification_mode: certificate
{tls}
xpack.security.authc.realms.file.tally.order: 0
xpack.security.authc.anonymous.roles: []
xpack.ml.enabled: false
"""

    def write_file_realm(self) -> None:
        """Tally's user, its password hashed (PBKDF2) and its role; mode 600: the node reads them."""
        user = self.s.get("TALLY_ELASTICSEARCH_USERNAME")  # the secure profile's: tally, unless set
        files = {
            "users": f"{user}:{pbkdf2_hash(self.s.elasticsearch_password())}\n",
            "users_roles": f"tally_client:{user}\n",
            "roles.yml": ROLES,
        }
        for name, text in files.items():
            path = self.conf_dir / name
            path.write_text(text)
            os.chmod(path, 0o600)

    def command(self):
        heap = self.s.get("TALLY_ELASTICSEARCH_HEAP")
        tmp = self.data_dir / "tmp"
        argv = [
            JAVA,
            f"-Xms{heap}",
            f"-Xmx{heap}",
            "-XX:+UseG1GC",
            "-Des.networkaddress.cache.ttl=60",
            "-Des.networkaddress.cache.negative.ttl=10",
            "-Xss1m",
            "-Djava.awt.headless=true",
            "-Dfile.encoding=UTF-8",
            "-Djna.nosys=true",
            "-XX:-OmitStackTraceInFastThrow",
            "-Dio.netty.noUnsafe=true",
            "-Dio.netty.noKeySetOptimization=true",
            "-Dio.netty.recycler.maxCapacityPerThread=0",
            "-Dio.netty.allocator.numDirectArenas=0",
            "-Dlog4j.shutdownHookEnabled=false",
            "-Dlog4j2.disable.jmx=true",
            "-Dlog4j2.formatMsgNoLookups=true",
            "-Djava.locale.providers=SPI,COMPAT",
            f"-Djava.io.tmpdir={tmp}",
            f"-Des.path.home={self.es_home}",
            f"-Des.path.conf={self.conf_dir}",
            "-Des.distribution.flavor=default",
            "-Des.distribution.type=tar",
            "-Des.bundled_jdk=false",
            "-cp",
            f"{self.es_home}/lib/*",
            "org.elasticsearch.bootstrap.Elasticsearch",
        ]
        return argv, self.env(LIBFFI_TMPDIR=str(tmp), ES_TMPDIR=str(tmp))

    def ready(self):
        return self.health() in ("green", "yellow")

    def health(self) -> str:
        """The cluster's health, asked as Tally's clients ask (logged in, over TLS, in the secure profile)."""
        import requests

        r = requests.get(f"{self.url()}/_cluster/health", timeout=3, **self.s.elasticsearch_requests_args())
        r.raise_for_status()
        return r.json()["status"]
