"""The Go toolchain the runq exporter's go.mod names. The machine's own `go` when it is that
version or newer; otherwise the toolchain module the Go module proxy serves for it
(golang.org/toolchain, the download `GOTOOLCHAIN=auto` makes), checked against a pinned hash and
unpacked under .tally/toolchains/. Debian 12's own Go is 1.19, which cannot build the exporter."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import urllib.request
import zipfile
from pathlib import Path

from .settings import REPO

GO_MOD = REPO / "connectors" / "runq-exporter" / "go.mod"
TOOLCHAINS = REPO / ".tally" / "toolchains"
# dirhash h1 (go.sum's hash of a module zip) of each toolchain module the project names: the
# checksum database is not reachable from every machine, so the hash is pinned here.
PINNED_H1 = {
    "v0.0.1-go1.26.8.linux-amd64": "h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM=",
}


def required() -> str:
    """The `go` directive of the exporter's go.mod, e.g. '1.26.8'."""
    m = re.search(r"^go (\d+\.\d+(?:\.\d+)?)\s*$", GO_MOD.read_text(), re.M)
    if not m:
        raise RuntimeError(f"{GO_MOD} has no go directive")
    return m.group(1)


def parse_version(text: str) -> tuple[int, ...]:
    """'go1.26.8' or '1.26.8' -> (1, 26, 8); a missing patch counts as 0."""
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        raise ValueError(f"not a Go version: {text!r}")
    return tuple(int(g or 0) for g in m.groups())


def version_of(go: str) -> tuple[int, ...] | None:
    try:
        r = subprocess.run(
            [go, "env", "GOVERSION"],
            capture_output=True,
            text=True,
            timeout=60,
            env=dict(os.environ, GOTOOLCHAIN="local"),
        )
    except OSError:
        return None
    return parse_version(r.stdout) if r.returncode == 0 and r.stdout.strip() else None


def module_version(version: str) -> str:
    arch = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), platform.machine())
    return f"v0.0.1-go{version}.linux-{arch}"


def h1(zip_bytes: bytes) -> str:
    """go.sum's h1 hash of a module zip (golang.org/x/mod/sumdb/dirhash.Hash1)."""
    z = zipfile.ZipFile(io.BytesIO(zip_bytes))
    lines = "".join(
        f"{hashlib.sha256(z.read(n)).hexdigest()}  {n}\n" for n in sorted(z.namelist()) if not n.endswith("/")
    )
    return "h1:" + base64.b64encode(hashlib.sha256(lines.encode()).digest()).decode()


def proxy() -> str:
    """The first proxy of GOPROXY (Go's default when unset)."""
    for entry in re.split(r"[,|]", os.environ.get("GOPROXY") or "https://proxy.golang.org"):
        if entry.startswith("http"):
            return entry.rstrip("/")
    raise RuntimeError("GOPROXY names no proxy: the Go toolchain cannot be fetched")


def install(version: str, log=print) -> Path:
    """The toolchain module of `version`, fetched from the proxy and unpacked once."""
    mod = module_version(version)
    target = TOOLCHAINS / f"go{version}"
    go = target / "bin" / "go"
    if go.exists():
        return go
    url = f"{proxy()}/golang.org/toolchain/@v/{mod}.zip"
    log(f"installing Go {version} (the exporter's go.mod) from the Go module proxy: {url} -> {target}")
    with urllib.request.urlopen(url, timeout=600) as r:
        data = r.read()
    want = PINNED_H1.get(mod)
    got = h1(data)
    if want is None:
        raise RuntimeError(f"no pinned hash for {mod} (its h1 is {got}): add it to PINNED_H1 after checking it")
    if got != want:
        raise RuntimeError(f"{url}: hash {got}, expected {want}; nothing was installed")
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    prefix = f"golang.org/toolchain@{mod}/"
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            if not info.filename.startswith(prefix) or info.filename.endswith("/"):
                continue
            dest = tmp / info.filename[len(prefix) :]
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(z.read(info))
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                dest.chmod(mode)
    for tool in [tmp / "bin" / "go", tmp / "bin" / "gofmt", *(tmp / "pkg" / "tool").glob("*/*")]:
        if tool.is_file():
            tool.chmod(tool.stat().st_mode | 0o755)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return go


def go_binary(log=print) -> str:
    """A `go` at least as new as the go.mod's: the machine's, else one installed from the proxy."""
    need = required()
    for found in (shutil.which("go"), "/usr/local/go/bin/go"):
        if found and Path(found).exists():
            have = version_of(found)
            if have is not None and have >= parse_version(need):
                return found
    return str(install(need, log))
