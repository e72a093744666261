"""Processes the launcher starts: spawn detached, identify by PID + start time, stop by PID."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcessRef:
    """A PID plus the kernel's start time of that PID, so a recycled PID is never mistaken
    for (and never killed as) the process we started."""

    pid: int
    start_ticks: int

    def to_json(self) -> dict:
        return {"pid": self.pid, "start_ticks": self.start_ticks}

    @classmethod
    def from_json(cls, d: dict | None) -> ProcessRef | None:
        if not d:
            return None
        return cls(int(d["pid"]), int(d["start_ticks"]))


#: Sets the shell's own timer slack, which exec keeps and every thread of the server inherits.
SLACK = 'echo "$0" > /proc/self/timerslack_ns || echo "tally: timer slack not set (needs Linux 4.6)" >&2; exec "$@"'


def with_timer_slack(argv: list[str], slack_ns: int) -> list[str]:
    """argv started with the kernel's timer slack at slack_ns: its timed sleeps may end up to that
    much late, so the kernel can fold their wake-ups together. A server whose threads poll with
    short timed parks (Cassandra's shared executor pool parks its idle workers for 10 us at a time
    to stay ready) wakes thousands of times a second at rest at Linux's default 50 us; unchanged
    when slack_ns is 0."""
    return argv if slack_ns <= 0 else ["sh", "-c", SLACK, str(slack_ns), *argv]


def set_background_cpu(pid: int, nice: int) -> str:
    """Puts a running server's CPU behind the request path's: when the box is short of CPU, Linux
    gives a server at nice 10 about a tenth of what it gives one at 0, so a pipeline's backlog
    waits in Kafka instead of a caller's request waiting for a core. Set on the autogroup of the
    server's session (Linux shares CPU between autogroups before threads, so a server's own nice
    would weigh only among its own threads) and on each of its threads (where autogroups do not
    apply: a kernel without them, a process in a cpu cgroup); threads it starts later inherit it.
    Says what it set, for the log. The launcher calls it once the server is ready, so a server
    starts as fast as the others."""
    if not 0 <= nice <= 19:
        raise ValueError(f"nice {nice} is not in 0-19 (a server may not be put before others)")
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))
        group = "its autogroup and "
    except OSError as e:  # no autogroups in this kernel, or a second write within 100 ms
        group = f"not its autogroup ({e.strerror}), only "
    threads = 0
    for _ in range(2):  # a thread started during the first pass by one not yet set
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            break
        for tid in tids:
            try:
                if os.getpriority(os.PRIO_PROCESS, tid) != nice:
                    os.setpriority(os.PRIO_PROCESS, tid, nice)
                    threads += 1
            except OSError:  # a thread that ended since the listing
                pass
    return f"nice {nice} on {group}{threads} threads"


def nice_of(pid: int) -> tuple[int | None, int | None]:
    """A running process's nice (of its main thread) and its autogroup's nice; None for what
    cannot be read (the process gone, a kernel without autogroups)."""
    own = group = None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        own = int(stat[stat.rindex(")") + 2 :].split()[16])
    except (OSError, ValueError, IndexError):
        pass
    try:  # "/autogroup-123 nice 10"
        group = int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return own, group


def timer_slack_ns(pid: int) -> int | None:
    """The timer slack of a running process (of its main thread), None when it is gone."""
    try:
        return int(Path(f"/proc/{pid}/timerslack_ns").read_text())
    except (OSError, ValueError):
        return None


def start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces; fields after the last ')' are fixed.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":  # a zombie is not running
        return None
    return int(fields[19])


def alive(ref: ProcessRef | None) -> bool:
    return ref is not None and start_ticks(ref.pid) == ref.start_ticks


def rss_bytes(ref: ProcessRef | None) -> int | None:
    if not alive(ref):
        return None
    try:
        for line in Path(f"/proc/{ref.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def spawn(argv: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> ProcessRef:
    """Starts argv in its own session (so a terminal's Ctrl-C does not reach it), with
    stdout and stderr appended to log."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        out.write(f"\n==== {time.strftime('%Y-%m-%dT%H:%M:%S')} starting: {' '.join(argv)}\n".encode())
        out.flush()
        proc = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    ticks = None
    for _ in range(50):
        ticks = start_ticks(proc.pid)
        if ticks is not None:
            break
        if proc.poll() is not None:
            break
        time.sleep(0.01)
    return ProcessRef(proc.pid, ticks if ticks is not None else -1)


def stop(ref: ProcessRef | None, timeout: float = 60.0, sig: int = signal.SIGTERM) -> bool:
    """sig (SIGTERM), then SIGKILL after timeout. Signals only the PID we started (verified by
    its start time). Returns True if it was running."""
    if not alive(ref):
        return False
    try:
        os.kill(ref.pid, sig)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(ref):
            _reap(ref.pid)
            return True
        time.sleep(0.2)
    if alive(ref):
        os.kill(ref.pid, signal.SIGKILL)
        for _ in range(100):
            if not alive(ref):
                break
            time.sleep(0.1)
    _reap(ref.pid)
    return True


def _reap(pid: int) -> None:
    """Collects the exit status when we are the parent (a launcher that spawned and stops in one
    run, such as a test): a zombie would stay in its cgroup, which then cannot be removed."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # not our child: its own parent (or init) reaps it


def port_free(host: str, port: int) -> bool:
    """True when nothing listens on host:port (a wildcard listener answers too). A connect
    test, not a bind test: sockets a crashed server left in FIN_WAIT/TIME_WAIT on its port do
    not stop it from starting again (servers bind with SO_REUSEADDR), so they are no conflict."""
    return not tcp_open(host, port, timeout=0.5)


def tcp_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class NotReady(Exception):
    pass


def wait_until(
    what: str, probe: Callable[[], bool], timeout: float, still_running: Callable[[], bool], interval: float = 0.5
) -> None:
    """Polls probe until it is true. Fails early when the process died, or at timeout."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while time.monotonic() < deadline:
        if not still_running():
            raise NotReady(f"{what}: the process exited during start-up")
        try:
            if probe():
                return
        except Exception as e:  # a probe that cannot connect yet is simply not ready
            last_error = f" (last probe error: {e})"
        time.sleep(interval)
    raise NotReady(f"{what}: not ready after {timeout:.0f}s{last_error}")
