"""./tally bench transport: what a GetCount and a durable AddCount cost the gateway against HTTP
servers that do nothing but answer (or write to Kafka and answer), on the same box, loopback and load.

A GetCount is the gateway's cheapest call (a lookup in the counter view), so most of its CPU is
the HTTP request itself. The floors: `HttpFloorServer` (bench/), answering every POST with the
bytes of a GetCount's answer, as Netty alone (the gateway's epoll transport and HTTP codec) and as
a Vert.x HTTP server (the gateway's framework, one server an event loop as the gateway has, no
vertx-web router, no Tally code), and the same on Vert.x 5 and Netty 4.2 (`Vertx5FloorServer`, its
own module: what a migration of the gateway's HTTP layer would start from); for a durable AddCount, that Vert.x server writing each body to
Kafka with the gateway's producer settings and answering after the ack. Each in a cgroup of its
own. vegeta sends the same bodies to each at the operation's `bench cost` rate for `seconds`
(open loop), after a warm-up of each; the rounds are interleaved. CPU a request: the server's cgroup over the run less its idle CPU over `idle_s`
before and after (the gateway's from `tally.containers/gateway`). Each figure the median of the
rounds with min and max; the ratios of the gateway over each floor. No figure is asserted."""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

from tally.plots import pyplot
from tally.stack import Stack

from . import cost as bench_cost
from . import warmup
from .floors import LINGER_MS, start_floor, stop
from .http import attack_lazy, fmt, measured, settle, summary, vegeta
from .profile import operation_load
from .stack_cpu import StackCpu, cores_and_kernel_over, usage_and_kernel
from .tools import OUT, figure_path

PNG = OUT / "transport.png"
#: each operation of bench cost measured here, at its bench cost rate, and the floors it is put against
FLOORS = {"getcount": ("netty", "vertx", "vertx5"), "addcount_eventual": ("vertx-kafka",)}
WARMUP_S = warmup.WARMUP_S


def bench_transport(stack: Stack, say, seconds: float = 30, idle_s: float = 8, runs: int = 3) -> dict:
    exe = vegeta(stack)
    cpu = StackCpu(stack)
    ops = {o.name: o for o in bench_cost.operations() if o.name in FLOORS}
    settle(say, stack=stack)
    gateway_cgroup = cpu.root / "gateway"
    procs: dict[str, subprocess.Popen] = {}
    urls: dict[str, str] = {}
    found: dict[str, dict[str, list[dict]]] = {name: {} for name in FLOORS}
    try:
        loads = {}
        for name, floors in FLOORS.items():
            op = ops[name]
            loads[name] = operation_load(stack, say, op, seconds)  # what it reads written, warmed up
            for kind in floors:
                procs[kind], urls[kind] = start_floor(kind, cpu.cgroup(f"http-floor-{kind}"), stack)
                say(f"warming the {kind} floor up for {WARMUP_S} s ...")
                attack_lazy(exe, urls[kind] + op.path, lambda i, op=op: op.body("floorwarm", i), op.rate, WARMUP_S)
        for k in range(runs):
            run = uuid.uuid4().hex[:8]
            for name, floors in FLOORS.items():
                op = ops[name]
                for server in (*floors, "gateway"):
                    cgroup = gateway_cgroup if server == "gateway" else cpu.cgroup(f"http-floor-{server}")
                    before, kernel_before = cores_and_kernel_over(cgroup, idle_s)
                    (u0, k0), t0 = usage_and_kernel(cgroup), time.monotonic()
                    if server == "gateway":
                        n, _ = loads[name]()
                        report = loads[name].report
                    else:
                        report = attack_lazy(
                            exe, urls[server] + op.path, lambda i, op=op: op.body(run, i), op.rate, seconds
                        )
                        n = round(report["requests"] * report["success"])
                    (u1, k1), wall = usage_and_kernel(cgroup), time.monotonic() - t0
                    used, kernel = u1 - u0, k1 - k0
                    after, kernel_after = cores_and_kernel_over(cgroup, idle_s)
                    idle, kernel_idle = (before + after) / 2, (kernel_before + kernel_after) / 2
                    entry = {
                        "us_per_request": (used - idle * wall) / max(n, 1) * 1e6,
                        "kernel_us_per_request": (kernel - kernel_idle * wall) / max(n, 1) * 1e6,
                        "idle_cores": idle,
                        "requests": n,
                        "success": report["success"],
                        "p50_ms": report["latencies"]["50th"] / 1e6,
                        "p99_ms": report["latencies"]["99th"] / 1e6,
                    }
                    found[name].setdefault(server, []).append(entry)
                    say(
                        f"round {k + 1}, {name}, {server}: {entry['us_per_request']:.1f} µs of CPU a request"
                        f" ({entry['kernel_us_per_request']:.1f} in the kernel),"
                        f" p99 {entry['p99_ms']:.2f} ms, success {entry['success']:.4f}"
                    )
    finally:
        for p in procs.values():
            stop(p)
    result: dict = {"seconds": seconds, "idle_seconds": idle_s, "runs": runs, "operations": {}}
    for name, by_server in found.items():
        servers = {
            server: {
                key: summary([r[key] for r in rs])
                for key in ("us_per_request", "kernel_us_per_request", "p50_ms", "p99_ms", "success")
            }
            for server, rs in by_server.items()
        }
        gateway = servers["gateway"]["us_per_request"]["median"]
        result["operations"][name] = {
            "rate": ops[name].rate,
            "label": ops[name].label,
            "servers": servers,
            "ratio_gateway_to": {
                kind: gateway / max(servers[kind]["us_per_request"]["median"], 0.001) for kind in FLOORS[name]
            },
        }
    result["linger_ms"] = int(LINGER_MS)
    result["plot"] = str(plot(result, PNG))
    return result


LABELS = {
    "netty": "Netty alone (epoll, HTTP codec)",
    "vertx": "Vert.x HTTP server, no router",
    "vertx5": "Vert.x 5 (Netty 4.2) HTTP server, no router",
    "vertx-kafka": "Vert.x HTTP server writing the body to Kafka, answering after the ack",
    "gateway": "the gateway",
}
SHORT = {
    "netty": "Netty alone",
    "vertx": "Vert.x, no router",
    "vertx5": "Vert.x 5, no router",
    "vertx-kafka": "Vert.x + Kafka producer",
    "gateway": "the gateway",
}
COLOURS = {"netty": "#999999", "vertx": "#6f8fb3", "vertx5": "#9fb7d3", "vertx-kafka": "#6f8fb3", "gateway": "#c0504d"}


def plot(result: dict, path: Path) -> Path:
    plt = pyplot()
    names = list(result["operations"])
    fig, axes = plt.subplots(
        len(names), 1, figsize=(8, 1.8 + 0.8 * sum(len(o["servers"]) for o in result["operations"].values()))
    )
    for ax, name in zip(axes if len(names) > 1 else [axes], names, strict=True):
        o = result["operations"][name]
        servers = list(o["servers"])
        us = [o["servers"][s]["us_per_request"] for s in servers]
        ax.barh(
            [SHORT[s] for s in servers],
            [u["median"] for u in us],
            xerr=[[u["median"] - u["min"] for u in us], [u["max"] - u["median"] for u in us]],
            capsize=3,
            color=[COLOURS[s] for s in servers],
        )
        kernel = [o["servers"][s].get("kernel_us_per_request") for s in servers]
        if all(kernel):
            ax.barh(
                [SHORT[s] for s in servers],
                [k["median"] for k in kernel],
                height=0.35,
                color="#333333",
                label="of it in the kernel (median)",
            )
            ax.legend(fontsize=8, loc="lower right")
        ax.invert_yaxis()
        ax.set_xlim(left=0)
        ax.set_title(f"{o['label'].split(' (')[0]}, {o['rate']:,} req/s", fontsize=10)
        ax.set_xlabel("µs of the server's CPU a request (median of rounds, min-max)")
    fig.suptitle("The gateway against servers that only answer, or only write to Kafka")
    fig.tight_layout()
    path = figure_path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def table(result: dict) -> str:
    """The benchmarks page's transport table, from bench/out/transport.json (generated, never typed)."""
    rows = [
        "| operation (open loop, vegeta) | server | µs of CPU a request | of it in the kernel | p50 ms | p99 ms"
        " | success | the gateway's µs over this |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in result["operations"].values():
        for s, e in o["servers"].items():
            ratio = f"{o['ratio_gateway_to'][s]:.2f}" if s in o["ratio_gateway_to"] else ""
            rows.append(
                f"| {o['label']}, {o['rate']:,} req/s | {LABELS[s]} | {fmt(e['us_per_request'], 1)}"
                f" | {fmt(e.get('kernel_us_per_request'), 1)} | {fmt(e['p50_ms'])} | {fmt(e['p99_ms'])} | {fmt(e['success'], 4)} | {ratio} |"
            )
    rows.append(
        f"\n{result['seconds']:g} s a run after a warm-up of each server, the servers interleaved (the writing"
        f" floor with the gateway's producer settings: acks=all, idempotent, linger {result.get('linger_ms', 10)} ms);"
        f" each server's CPU from its own cgroup, less its idle CPU over {result['idle_seconds']:g} s before and"
        f" after; of it in the kernel: the same from the cgroup's system time (its system calls, and"
        f" the loopback's delivery to the receiving socket that the kernel does on the sender's time)."
        f" Median of {result['runs']} rounds (min-max), "
        + measured(result, "transport", "plot `bench/out/transport.png`")
        + "."
    )
    return "\n".join(rows)
