"""The host a report was measured on, recorded beside its figures: the CPU, the kernel, when it
booted, how memory is paged, and how long a random read of memory takes there. On 2026-11-30 a
host whose JVM servers cost three times as much an operation as the day before's was told apart
only by the reports' floors; its random reads took 450 ns at 1 GiB (the performance log, "A host
whose servers cost three times as much"). A report that carries this names such a host itself.
On 2026-12-02 a host with the fastest memory reads yet (176 ns) served each request at twice the
CPU of 2026-11-29's: what a request crosses most is hand-offs between threads, so the CPU one
costs is recorded too. That afternoon's host (family 25 model 1) ran BPF hooks at three times the ns and
the servers at twice the µs of the morning's (family 26), and returned through the kernel's
"Safe RET" thunk (spec_rstack_overflow), which some AMD families need and others do not: the
kernel's CPU mitigations are recorded as well, so hosts can be compared on them."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path

from tally.component_cgroups import v2_mount
from tally.components.base import JAVA

from .tools import bench_jar

#: the probe's array: larger than any cache of the box, about the size of a server's heap
PROBE_MIB = 256
#: the cache-sized probe: what a small working set reads at
CACHED_MIB = 1
#: where the kernel says which CPU vulnerabilities it mitigates, and how
VULNERABILITIES = Path("/sys/devices/system/cpu/vulnerabilities")
#: mitigations every x86 host here has carried, at little cost to a server; the line names the others
EVERYWHERE = {"spectre_v1", "spec_store_bypass"}


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def cpu(cpuinfo: str) -> dict:
    """The CPU's model, family and model number, from /proc/cpuinfo's first processor."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return {
        "model_name": fields.get("model name", ""),
        "family": fields.get("cpu family", ""),
        "model": fields.get("model", ""),
        "mhz": fields.get("cpu MHz", ""),
    }


def selected(mode: str) -> str:
    """The bracketed choice of a /sys/kernel/mm/transparent_hugepage file ("always [madvise] never")."""
    start, end = mode.find("["), mode.find("]")
    return mode[start + 1 : end] if 0 <= start < end else mode


def booted_at(stat: str) -> str:
    for line in stat.splitlines():
        if line.startswith("btime "):
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(line.split()[1])))
    return ""


def mitigations(directory: Path = VULNERABILITIES) -> dict:
    """Each vulnerability the kernel mitigates, with how ("Retpolines; IBPB: conditional; ..."),
    from its sysfs files; the ones it is not affected by are left out."""
    try:
        files = sorted(directory.iterdir())
    except OSError:
        return {}
    out = {}
    for f in files:
        state = _read(str(f))
        if state.startswith("Mitigation:"):
            out[f.name] = state.removeprefix("Mitigation:").strip()
    return out


def memory_latency(mib: int, huge_pages: bool = False) -> dict:
    """ns a dependent random read over `mib` MiB (io.tally.bench.host.MemoryLatencyProbe), or
    {"error": ...} when the probe cannot run (no bench jar built)."""
    jvm = ["-Xms1g", "-Xmx1g"] + (["-XX:+UseTransparentHugePages"] if huge_pages else [])
    return _probe(jvm, "MemoryLatencyProbe", str(mib))


def thread_handoff() -> dict:
    """µs of CPU one thread's hand-off to another costs (io.tally.bench.host.HandoffProbe: a
    park/unpark ping-pong), or {"error": ...} when the probe cannot run."""
    return _probe(["-Xms64m", "-Xmx64m"], "HandoffProbe")


def _probe(jvm: list[str], probe: str, *args: str) -> dict:
    """A probe of io.tally.bench.host run in a JVM of its own: its last line's JSON, or
    {"error": ...} when it cannot run (no bench jar built)."""
    argv = [JAVA, *jvm, "-XX:+UseSerialGC", "-cp", str(bench_jar()), f"io.tally.bench.host.{probe}", *args]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    if r.returncode != 0:
        return {"error": r.stderr.strip()[-300:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def host() -> dict:
    """What the report's host is and how fast its memory answers now."""
    mount = v2_mount()
    return {
        "cpu": cpu(_read("/proc/cpuinfo")),
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "booted_at": booted_at(_read("/proc/stat")),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "transparent_hugepage": selected(_read("/sys/kernel/mm/transparent_hugepage/enabled")),
        "clocksource": _read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "mitigations": mitigations(),
        "cgroup_v2": str(mount) if mount else "",
        "load_at_end": list(os.getloadavg()),
        "random_read_ns": {
            f"{PROBE_MIB}_mib": memory_latency(PROBE_MIB),
            f"{PROBE_MIB}_mib_huge_pages": memory_latency(PROBE_MIB, huge_pages=True),
            f"{CACHED_MIB}_mib": memory_latency(CACHED_MIB),
        },
        "thread_handoff": thread_handoff(),
    }


def line(report: dict) -> str:
    """The host in a few words for under a table ("" for a report that predates the record)."""
    h = report.get("host")
    if not h:
        return ""
    reads = h.get("random_read_ns", {})
    big = reads.get(f"{PROBE_MIB}_mib", {}).get("ns_per_read")
    huge = reads.get(f"{PROBE_MIB}_mib_huge_pages", {}).get("ns_per_read")
    what = f"{h['cpu'].get('model_name') or 'an unnamed CPU'} (family {h['cpu'].get('family')} model {h['cpu'].get('model')})"
    read = f", a random read of {PROBE_MIB} MiB {big:g} ns ({huge:g} on huge pages)" if big and huge else ""
    handoff = h.get("thread_handoff", {}).get("cpu_us_per_handoff")
    read += f", a thread hand-off {handoff:g} µs of CPU" if handoff else ""
    named = {k: v.split(";")[0] for k, v in sorted(h.get("mitigations", {}).items()) if k not in EVERYWHERE}
    read += ", mitigating " + ", ".join(f"{k} ({v})" for k, v in named.items()) if named else ""
    return f"host: {what}, {h.get('cores')} cores, kernel {h.get('kernel')}, up since {h.get('booted_at')}{read}"
