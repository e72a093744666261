"""Servers run with no more privilege than they need.

`./tally up` runs as root on a fresh machine (it installs Debian packages), but no server needs
root: each runs as the service user (TALLY_SERVICE_USER, a system account made on first use),
owning only what it writes (its data, config and log). The one that needs kernel access, the
eBPF exporter, keeps just the capabilities BPF needs instead of root. A launcher that is not
root starts everything as itself: it has no privilege to drop.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
from pathlib import Path

_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")


def is_root() -> bool:
    return os.geteuid() == 0


def ensure_user(name: str) -> None:
    """The service account: a system user with no login shell and no home, made if missing."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"TALLY_SERVICE_USER={name!r} is not a valid user name")
    if name == "root":
        raise ValueError("TALLY_SERVICE_USER=root: the servers would keep every privilege")
    try:
        pwd.getpwnam(name)
        return
    except KeyError:
        pass
    subprocess.run(
        ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        capture_output=True,
    )


def give(user: str, paths: list[Path]) -> None:
    """Makes the user own what its server writes (directories recursively, files themselves)."""
    for p in paths:
        if p.is_dir():
            subprocess.run(["chown", "-R", f"{user}:{user}", str(p)], check=True)
        elif p.exists():
            shutil.chown(p, user, user)


def drop(argv: list[str], user: str, capabilities: tuple[str, ...] = ()) -> list[str]:
    """argv run as the user, with only the given capabilities (names as `setpriv --list-caps`
    prints them) kept in its bounding, inheritable and ambient sets; unchanged when not root."""
    if not is_root():
        return argv
    priv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"]
    if capabilities:
        caps = ",".join(f"+{c}" for c in capabilities)
        priv += [f"--inh-caps=-all,{caps}", f"--ambient-caps=-all,{caps}", f"--bounding-set=-all,{caps}"]
    else:
        priv += ["--inh-caps=-all", "--bounding-set=-all"]
    return [*priv, *argv]


def uid_of(pid: int) -> int | None:
    """The effective uid of a running process (from /proc), None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[2])
    except OSError:
        return None
    return None


def effective_caps(pid: int) -> int | None:
    """The effective capability mask of a running process (CapEff in /proc), None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    except OSError:
        return None
    return None
