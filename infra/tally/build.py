"""Building the Java modules, skipped when no source or POM changed since the last build."""

from __future__ import annotations

import hashlib
import subprocess

from .fetch import mvn
from .settings import REPO, Settings

SOURCE_GLOBS = ("pom.xml", "*/pom.xml", "*/*/pom.xml", "*/src/**/*", "*/*/src/**/*", "schemas/avro/*.avsc")


def mvn_cmd(*args: str) -> list[str]:
    return mvn(*args, quiet=False)


def source_digest() -> str:
    h = hashlib.sha256()
    for pattern in SOURCE_GLOBS:
        for p in sorted(REPO.glob(pattern)):
            if (
                p.is_file()
                and "target" not in p.parts
                and ".tally" not in p.parts
                and "infra" not in p.parts[len(REPO.parts) : len(REPO.parts) + 1]
            ):
                h.update(str(p.relative_to(REPO)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def build_java(log, force: bool = False) -> None:
    stamp = Settings.load().home / "build.sha256"
    digest = source_digest()
    if not force and stamp.exists() and stamp.read_text() == digest:
        return
    log("building the Java modules (mvn package -DskipTests)")
    r = subprocess.run(mvn("package", "-DskipTests"), cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"Maven build failed:\n{r.stdout[-4000:]}{r.stderr[-2000:]}")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest)
