"""The eBPF run-queue latency exporter (connectors/runq-exporter), built here with Go, clang
and bpftool, run as root (loading BPF needs it), scraped by Prometheus."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import urllib.request
from pathlib import Path

from .. import gotoolchain
from ..settings import REPO
from .base import Component

SRC = REPO / "connectors" / "runq-exporter"


def go_binary() -> str:
    """The Go the exporter is built with (installed from the Go module proxy when the machine's is too old)."""
    return gotoolchain.go_binary()


def source_digest() -> str:
    h = hashlib.sha256()
    for p in sorted(SRC.rglob("*")):
        if (
            p.is_file()
            and p.suffix in (".go", ".c", ".mod", ".sum", ".sh")
            and "build" not in p.relative_to(SRC).parts
            and not p.name.startswith("runq_bpfe")
        ):
            h.update(str(p.relative_to(SRC)).encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def build(home: Path, log) -> Path:
    """The exporter's build.sh (vmlinux.h from this kernel's BTF, bpf2go, go build): skipped when nothing changed."""
    binary = home / "bin" / "runq-exporter"
    stamp = home / "bin" / "runq-exporter.sha256"
    digest = source_digest()
    if binary.exists() and stamp.exists() and stamp.read_text() == digest:
        return binary
    log("building the runq exporter (connectors/runq-exporter/build.sh: bpftool, bpf2go, go build)")
    binary.parent.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        ["bash", str(SRC / "build.sh"), str(binary)],
        cwd=SRC,
        env=dict(os.environ, GO=go_binary()),
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(f"building the runq exporter failed:\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
    stamp.write_text(digest)
    return binary


class RunqExporter(Component):
    name = "runq-exporter"
    restart_on_change = True
    version = "tally 0.1.0"
    depends = ("kafka", "registry")
    ready_timeout = 60.0
    stop_timeout = 15.0
    # Not root: loading and attaching its tracepoint programs and ring buffer needs CAP_BPF, reading
    # task structs from them CAP_PERFMON; /proc and the cgroup tree are readable by anyone.
    capabilities = ("bpf", "perfmon")

    def ports(self):
        return {"metrics": self.s.port("TALLY_RUNQ_EXPORTER_PORT")}

    def url(self):
        return f"http://{self.host}:{self.ports()['metrics']}/metrics"

    def metrics_target(self):
        return f"{self.host}:{self.ports()['metrics']}"

    def fetch(self):
        build(self.s.home, self.log)

    def stale(self):
        stamp = self.s.home / "bin" / "runq-exporter.sha256"
        return stamp.exists() and stamp.read_text() != source_digest()

    def command(self):
        binary = build(self.s.home, self.log)
        return [
            str(binary),
            "--source",
            self.s.get("TALLY_RUNQ_SOURCE"),
            "--kafka",
            self.s.kafka_bootstrap(),
            "--registry",
            f"http://{self.host}:{self.s.port('TALLY_REGISTRY_PORT')}",
            "--metrics-addr",
            self.metrics_target(),
            "--host",
            socket.gethostname(),
            "--container-root",
            self.s.get("TALLY_RUNQ_CONTAINER_ROOT"),
            "--containers",
            self.s.get("TALLY_RUNQ_CONTAINERS"),
            "--export-rate",
            self.s.get("TALLY_RUNQ_EXPORT_RATE"),
        ], self.env(**self.s.kafka_client_env())

    def ready(self):
        try:
            with urllib.request.urlopen(self.url(), timeout=3) as r:
                return r.status == 200
        except OSError:
            return False
