"""Elasticsearch 7.17 single node from Maven jars, in a home directory made here.

Elasticsearch refuses to run as root; like every server it runs as the service user
(tally.privileges), which owns its data and config directories."""

from __future__ import annotations

import json
import shutil
import urllib.request

from ..fetch import layout_stamp
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


class Elasticsearch(Component):
    name = "elasticsearch"
    version = "7.17.29"
    dists = ("elasticsearch",)
    relaxed_timers = True
    ready_timeout = 150.0
    stop_timeout = 60.0

    def ports(self):
        return {
            "http": self.s.port("TALLY_ELASTICSEARCH_PORT"),
            "transport": self.s.port("TALLY_ELASTICSEARCH_TRANSPORT_PORT"),
        }

    def url(self):
        return f"http://{self.host}:{self.ports()['http']}"

    @property
    def es_home(self):
        return self.s.dist("elasticsearch") / "home"

    def fetch(self):
        super().fetch()
        home = self.es_home
        stamp = home / ".built"
        wanted = layout_stamp(self.s, self.dists[0], "es-home-3")
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
        stamp.write_text(wanted)

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
""")
        (self.conf_dir / "log4j2.properties").write_text("""status = error
appender.console.type = Console
appender.console.name = console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d{ISO8601}][%-5p][%-25c{1.}] %marker%m%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = console
""")

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
        with urllib.request.urlopen(f"{self.url()}/_cluster/health", timeout=3) as r:
            return json.load(r)["status"] in ("green", "yellow")
