"""./tally bench transport: what a GetCount costs the gateway against HTTP servers that do nothing
but answer, on the same box, loopback and load.

A GetCount is the gateway's cheapest call (a lookup in the counter view), so most of its CPU is
the HTTP request itself. The floors: `HttpFloorServer` (bench/), answering every POST with the
bytes of a GetCount's answer, as Netty alone (the gateway's epoll transport and HTTP codec) and as
a Vert.x HTTP server (the gateway's framework, one server an event loop as the gateway has, no
vertx-web router, no Tally code), each in a cgroup of its own. vegeta sends the same GetCount
bodies to each at `rate` for `seconds` (open loop), after a warm-up of each; the rounds are
interleaved. CPU a request: the server's cgroup over the run less its idle CPU over `idle_s`
before and after (the gateway's from `tally.containers/gateway`). Each figure the median of the
rounds with min and max; the ratios of the gateway over each floor. No figure is asserted."""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from pathlib import Path

from tally.component_cgroups import JOIN
from tally.components.base import JAVA
from tally.plots import pyplot
from tally.stack import Stack

from . import cost as bench_cost
from .cost import StackCpu, usage
from .http import attack_lazy, fmt, measured, settle, summary, vegeta
from .profile import operation_load
from .tools import OUT, bench_jar

PNG = OUT / "transport.png"
FLOORS = ("netty", "vertx")
SERVERS = (*FLOORS, "gateway")
WARMUP_S = bench_cost.WARMUP_S


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_floor(kind: str, cgroup: Path) -> tuple[subprocess.Popen, str]:
    """An HttpFloorServer of `kind` in `cgroup`, listening; (its process, its URL)."""
    port = _free_port()
    cmd = [JAVA, "-Xmx256m", "-cp", str(bench_jar()), "io.tally.bench.http.HttpFloorServer", kind, str(port)]
    p = subprocess.Popen(
        ["sh", "-c", JOIN, str(cgroup / "cgroup.procs"), *cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = p.stdout.readline()
    if "listening" not in line:
        p.kill()
        raise RuntimeError(f"HttpFloorServer {kind} did not start: {line}{p.stderr.read()[-2000:]}")
    return p, f"http://127.0.0.1:{port}"


def _cores(cgroup: Path, seconds: float) -> float:
    u0, t0 = usage(cgroup), time.monotonic()
    time.sleep(seconds)
    return (usage(cgroup) - u0) / (time.monotonic() - t0)


def bench_transport(stack: Stack, say, rate: int = 2000, seconds: float = 30, idle_s: float = 8, runs: int = 3) -> dict:
    exe = vegeta(stack)
    cpu = StackCpu(stack)
    getcount = next(o for o in bench_cost.operations() if o.name == "getcount")
    settle(say, stack=stack)
    gateway_load = operation_load(stack, say, getcount, seconds)  # its counters written, warmed up
    cgroups = {kind: cpu.cgroup(f"http-floor-{kind}") for kind in FLOORS}
    cgroups["gateway"] = cpu.root / "gateway"
    procs, urls = {}, {}
    found: dict[str, list[dict]] = {s: [] for s in SERVERS}
    try:
        for kind in FLOORS:
            procs[kind], urls[kind] = start_floor(kind, cgroups[kind])
            say(f"warming the {kind} floor up for {WARMUP_S} s ...")
            attack_lazy(exe, urls[kind] + getcount.path, lambda i: getcount.body("floor", i), rate, WARMUP_S)
        run = uuid.uuid4().hex[:8]
        for k in range(runs):
            for server in SERVERS:
                before = _cores(cgroups[server], idle_s)
                u0, t0 = usage(cgroups[server]), time.monotonic()
                if server == "gateway":
                    n, _ = gateway_load()
                    report = gateway_load.report
                else:
                    report = attack_lazy(
                        exe, urls[server] + getcount.path, lambda i: getcount.body(run, i), rate, seconds
                    )
                    n = round(report["requests"] * report["success"])
                used, wall = usage(cgroups[server]) - u0, time.monotonic() - t0
                idle = (before + _cores(cgroups[server], idle_s)) / 2
                entry = {
                    "us_per_request": (used - idle * wall) / max(n, 1) * 1e6,
                    "idle_cores": idle,
                    "requests": n,
                    "success": report["success"],
                    "p50_ms": report["latencies"]["50th"] / 1e6,
                    "p99_ms": report["latencies"]["99th"] / 1e6,
                }
                found[server].append(entry)
                say(
                    f"round {k + 1}, {server}: {entry['us_per_request']:.1f} µs of CPU a request,"
                    f" p99 {entry['p99_ms']:.2f} ms, success {entry['success']:.4f}"
                )
    finally:
        for p in procs.values():
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
    result: dict = {"rate": rate, "seconds": seconds, "idle_seconds": idle_s, "runs": runs, "servers": {}}
    for server, rs in found.items():
        result["servers"][server] = {
            key: summary([r[key] for r in rs]) for key in ("us_per_request", "p50_ms", "p99_ms", "success")
        }
    gateway = result["servers"]["gateway"]["us_per_request"]["median"]
    result["ratio_gateway_to"] = {
        kind: gateway / max(result["servers"][kind]["us_per_request"]["median"], 0.001) for kind in FLOORS
    }
    result["plot"] = str(plot(result, PNG))
    return result


LABELS = {
    "netty": "Netty alone (epoll, HTTP codec)",
    "vertx": "Vert.x HTTP server, no router",
    "gateway": "the gateway's GetCount",
}


def plot(result: dict, path: Path) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.2))
    servers = [s for s in SERVERS if s in result["servers"]]
    us = [result["servers"][s]["us_per_request"] for s in servers]
    ax.barh(
        [LABELS[s] for s in servers],
        [u["median"] for u in us],
        xerr=[[u["median"] - u["min"] for u in us], [u["max"] - u["median"] for u in us]],
        capsize=3,
        color=["#999999", "#6f8fb3", "#c0504d"][: len(servers)],
    )
    ax.invert_yaxis()
    ax.set_xlabel(f"µs of CPU a request at {result['rate']:,} req/s (median of rounds, min-max)")
    ax.set_xlim(left=0)
    fig.suptitle("A GetCount against HTTP servers that only answer (same loopback, same load)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def table(result: dict) -> str:
    """The benchmarks page's transport table, from bench/out/transport.json (generated, never typed)."""
    rows = [
        f"| server, {result['rate']:,} req/s of GetCount bodies, open loop (vegeta) | µs of CPU a request"
        " | p50 ms | p99 ms | success | the gateway's µs over this |",
        "|---|---|---|---|---|---|",
    ]
    for s in SERVERS:
        e = result["servers"].get(s)
        if e is None:
            continue
        ratio = f"{result['ratio_gateway_to'][s]:.2f}" if s in result["ratio_gateway_to"] else ""
        rows.append(
            f"| {LABELS[s]} | {fmt(e['us_per_request'], 1)} | {fmt(e['p50_ms'])} | {fmt(e['p99_ms'])}"
            f" | {fmt(e['success'], 4)} | {ratio} |"
        )
    rows.append(
        f"\n{result['seconds']:g} s a run after a warm-up of each server, the servers interleaved; each server's"
        f" CPU from its own cgroup, less its idle CPU over {result['idle_seconds']:g} s before and after. Median"
        f" of {result['runs']} rounds (min-max), "
        + measured(result, "transport", "plot `bench/out/transport.png`")
        + "."
    )
    return "\n".join(rows)
