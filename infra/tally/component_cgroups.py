"""Each server of the stack in its own cgroup v2, `<mount>/<root>/<component>` (root:
TALLY_RUNQ_CONTAINER_ROOT, tally.containers), so the run-queue exporter's `tally` rule sees
the stack's components as containers with no setting: kafka, cassandra, flink-taskmanager,
gateway... each with its run-queue latency and switch-outs by cause.

The launcher makes the cgroup, the spawned process joins it before it execs the server (so
every thread and child a server starts is in it from its first instruction), and `down` removes
it once empty. No controller is enabled: the cgroups name processes, they limit nothing.

A component gets no cgroup where one cannot be made: no cgroup v2 hierarchy (a v1-only host),
a read-only or delegated-away /sys/fs/cgroup (most containers, a launcher that is not root), or
TALLY_COMPONENT_CGROUPS=off. It then runs as before and the exporter counts it as `system`.
"""

from __future__ import annotations

import errno
import re
import time
from pathlib import Path

_NAME = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
_ROOT = re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$")

# Joins the cgroup whose cgroup.procs is $0, then execs the server; a failed join is said in the
# server's log and the server runs anyway (outside it).
JOIN = 'echo $$ > "$0" 2>/dev/null || echo "tally: could not join cgroup ${0%/cgroup.procs}; running outside it" >&2; exec "$@"'


def v2_mount(mounts: str | None = None) -> Path | None:
    """Where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup on a v2 host,
    /sys/fs/cgroup/unified on a hybrid one; None on a v1-only host."""
    if mounts is None:
        try:
            mounts = Path("/proc/self/mounts").read_text()
        except OSError:
            return None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == "cgroup2":
            return Path(fields[1])
    return None


class ComponentCgroups:
    def __init__(self, root: str, enabled: bool = True, mount: Path | None = None, log=print):
        if not _ROOT.fullmatch(root) or ".." in root.split("/"):
            raise ValueError(f"TALLY_RUNQ_CONTAINER_ROOT={root!r} is not a relative cgroup path")
        self.root = root
        self.enabled = enabled
        self.mount = mount if mount is not None else (v2_mount() if enabled else None)
        self.log = log
        self._refused: str | None = None  # why cgroups cannot be made here, said once

    def path(self, component: str) -> Path | None:
        if not _NAME.fullmatch(component):
            raise ValueError(f"{component!r} is not a component name")
        return None if self.mount is None else self.mount / self.root / component

    def prepare(self, component: str) -> Path | None:
        """Makes the component's cgroup; its cgroup.procs file, or None when it cannot have one."""
        if not self.enabled or self._refused:
            return None
        if self.mount is None:
            self._refuse("no cgroup v2 hierarchy is mounted")
            return None
        d = self.path(component)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            self._refuse(f"cannot create {d}: {e.strerror}")
            return None
        procs = d / "cgroup.procs"
        return procs if procs.exists() else None

    def wrap(self, argv: list[str], procs: Path | None) -> list[str]:
        return argv if procs is None else ["sh", "-c", JOIN, str(procs), *argv]

    def remove(self, component: str, wait: float = 3.0) -> None:
        """Removes the component's cgroup once its processes are gone. A process that just
        exited stays listed until its parent reaps it, so a busy cgroup is tried again for
        `wait` seconds; one with a process left after that stays, and the next start reuses it."""
        d = self.path(component)
        if d is None or not d.is_dir():
            return
        deadline = time.monotonic() + wait
        while True:
            try:
                d.rmdir()
                return
            except OSError as e:
                if e.errno == errno.EBUSY and time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                if e.errno == errno.EBUSY:
                    self.log(f"   cgroup {d} still has processes ({' '.join(map(str, self.members(component)))}); kept")
                elif e.errno != errno.ENOENT:
                    self.log(f"   cannot remove cgroup {d}: {e.strerror}")
                return

    def remove_root(self) -> None:
        """The root's cgroups no process is in (also those of instances another setting
        started, such as a second gateway), then the root itself once empty; a cgroup with a
        process (a test's, a benchmark's) stays, and so does the root."""
        if self.mount is None:
            return
        root = self.mount / self.root
        try:
            children = [d for d in root.iterdir() if d.is_dir()]
        except OSError:
            return
        for d in children:
            try:
                d.rmdir()
            except OSError:
                pass
        try:
            root.rmdir()
        except OSError:
            pass

    def members(self, component: str) -> list[int]:
        d = self.path(component)
        try:
            return [int(p) for p in (d / "cgroup.procs").read_text().split()] if d else []
        except OSError:
            return []

    def _refuse(self, why: str) -> None:
        self._refused = why
        self.log(f"   components run without their own cgroups ({why}); the runq exporter counts them as system")
