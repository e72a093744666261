"""Fetching server jars through Maven (pinned versions in infra/dist/<name>/pom.xml)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from .settings import REPO, Settings

MAVEN_SETTINGS = REPO / "infra" / "maven-settings.xml"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"


def mvn(*args: str, cwd: Path = REPO, quiet: bool = True) -> list[str]:
    cmd = ["mvn", "-B", "-s", str(MAVEN_SETTINGS)]
    if quiet:
        cmd.append("-q")
    return cmd + list(args)


def fetch_dist(settings: Settings, name: str, log) -> Path:
    """Copies the runtime jars of infra/dist/<name>/pom.xml into $TALLY_HOME/dist/<name>/lib.
    Skipped when the pom has not changed since the last successful copy."""
    pom = REPO / "infra" / "dist" / name / "pom.xml"
    target = settings.dist(name)
    lib = target / "lib"
    stamp = target / ".pom.sha256"
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()
    if lib.is_dir() and stamp.exists() and stamp.read_text() == digest:
        return lib
    log(f"fetching {name} jars with Maven")
    if lib.exists():
        shutil.rmtree(lib)
    result = subprocess.run(
        mvn(
            "-f",
            str(pom),
            f"{DEPENDENCY_PLUGIN}:copy-dependencies",
            f"-DoutputDirectory={lib}",
            "-DincludeScope=runtime",
        ),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"fetching {name} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    stamp.write_text(digest)
    return lib


def jar(lib: Path, prefix: str) -> Path:
    """The one jar in lib whose name is <prefix>-<version>.jar."""
    for p in sorted(lib.glob(f"{prefix}-*.jar")):
        rest = p.name[len(prefix) + 1 :]
        if rest[:1].isdigit():
            return p
    raise FileNotFoundError(f"no {prefix}-<version>.jar in {lib}")


def layout_stamp(settings: Settings, name: str, layout: str) -> str:
    """Identifies a home directory built from a dist: the jars' pom digest plus the
    layout's own version, so a change to either rebuilds it."""
    stamp = settings.dist(name) / ".pom.sha256"
    return f"{stamp.read_text() if stamp.exists() else ''}:{layout}"
