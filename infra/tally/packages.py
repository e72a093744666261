"""Debian packages the stack needs, installed with apt when missing (we run as root here)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# what must exist -> the Debian package that provides it
REQUIRED = {
    "java": "openjdk-17-jdk-headless",
    "mvn": "maven",
    "psql": "postgresql-client-15",
    "/usr/lib/postgresql/15/bin/postgres": "postgresql-15",
    "setpriv": "util-linux",
    "prometheus": "prometheus",
    "prometheus-elasticsearch-exporter": "prometheus-elasticsearch-exporter",
    "prometheus-postgres-exporter": "prometheus-postgres-exporter",
    # the eBPF run-queue exporter's toolchain
    "clang": "clang",
    "bpftool": "bpftool",
    "/usr/include/bpf/bpf_helpers.h": "libbpf-dev",
    # bcc's runqlat in its CO-RE build, which `./tally bench runq` measures beside the exporter
    "/usr/sbin/runqlat": "libbpf-tools",
}


def present(thing: str) -> bool:
    return Path(thing).exists() if thing.startswith("/") else shutil.which(thing) is not None


def missing_packages() -> list[str]:
    return sorted({pkg for thing, pkg in REQUIRED.items() if not present(thing)})


def ensure_packages(log) -> None:
    missing = missing_packages()
    if not missing:
        return
    if os.geteuid() != 0:
        raise RuntimeError(f"missing Debian packages: {' '.join(missing)} (run as root, or apt-get install them)")
    log(f"installing Debian packages: {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, stdout=subprocess.DEVNULL)
    r = subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise RuntimeError(f"apt-get install failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
