"""./tally bench linger: what a producer's linger.ms costs in CPU and buys in latency, on the
stack's broker, at the rates of the durable AddCount's goals.

The gateway produces with a 10 ms linger (`producer.linger.ms`); the AddCount p99 goal compares
it with Kafka's ProducerPerformance at 1 ms. This measures the trade the setting makes, with
Kafka's own tool so that nothing of Tally's is in it: ProducerPerformance (205 B records,
acks=all, idempotent, as `bench cost`'s floor) at each rate and linger for `seconds`, interleaved
(a whole round per run, so the box's hour falls on every setting alike), three rounds after an
unmeasured warm-up at each rate. For each:
the broker's CPU per record from its cgroup (`tally.containers/kafka/cpu.stat`) over the run,
less its idle CPU read over `idle_s` before and after; the producer's network thread's CPU per
record (the thread a gateway's produce requests and their answers cost; read from /proc while it
runs, from `START_S` on, so the JVM's start is not in it); p50 and p99 as ProducerPerformance
reports them. Each figure the median of the rounds with min and max. No figure is asserted."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from tally.component_cgroups import JOIN
from tally.plots import pyplot
from tally.stack import Stack

from .http import fmt, measured, settle, summary
from .stack_cpu import StackCpu, cores_over, thread_ticks, usage
from .tools import OUT, figure_path, producer_performance

PNG = OUT / "linger.png"
RATES = (1000, 2000)  # bench cost's durable AddCount rate; the p99 goal's rate
LINGERS = (1, 5, 10)  # the floor's and the p99 goal's ceiling; Kafka 4's default; the gateway's
RECORD_BYTES = 205
START_S = 10.0  # the producer's thread is read from this many seconds into its run on (its JVM is new each run)
NETWORK_THREAD = "kafka-producer-"  # "kafka-producer-network-thread | ..." as the kernel cuts it


class ThreadRate:
    """A thread's CPU over a process's run, sampled every `every` s: cores from the first sample
    `start_s` after the thread appears to the last one before it ends."""

    def __init__(self, cgroup: Path, name: str, start_s: float = START_S, every: float = 0.25):
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(cgroup, name, every), daemon=True)
        self.start_s = start_s

    def _run(self, cgroup: Path, name: str, every: float) -> None:
        while not self._stop.is_set():
            ticks = thread_ticks(cgroup, lambda n: n == name)
            if ticks is not None:
                self.samples.append((time.monotonic(), ticks))
            time.sleep(every)

    def __enter__(self) -> ThreadRate:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(2)

    def cores(self) -> float:
        return cores_after(self.samples, self.start_s, os.sysconf("SC_CLK_TCK"))


def cores_after(samples: list[tuple[float, int]], start_s: float, tick_hz: float) -> float:
    """Cores used between the first sample `start_s` after the first one and the last sample."""
    if not samples:
        return 0.0
    t0 = samples[0][0] + start_s
    kept = [s for s in samples if s[0] >= t0]
    if len(kept) < 2 or kept[-1][0] - kept[0][0] <= 0:
        return 0.0
    return (kept[-1][1] - kept[0][1]) / tick_hz / (kept[-1][0] - kept[0][0])


def bench_linger(
    stack: Stack,
    say,
    rates: tuple[int, ...] = RATES,
    lingers: tuple[int, ...] = LINGERS,
    seconds: float = 30,
    idle_s: float = 8,
    runs: int = 3,
) -> dict:
    cpu = StackCpu(stack)
    broker = cpu.root / "kafka"
    producer = cpu.cgroup("producer-performance")
    settle(say, stack=stack)
    for rate in rates:  # the broker's code for these requests compiled before anything is read
        say(f"warm-up, not measured: {rate:,} records/s for {seconds:g} s ...")
        producer_performance(stack, RECORD_BYTES, int(rate * seconds), throughput=rate, props=("linger.ms=1",))
    found: dict[str, dict[str, list[dict]]] = {str(r): {str(lg): [] for lg in lingers} for r in rates}
    for k in range(runs):
        for rate in rates:
            for linger in lingers:
                records = int(rate * seconds)
                before = cores_over(broker, idle_s)
                b0, t0 = usage(broker), time.monotonic()
                with ThreadRate(producer, NETWORK_THREAD) as sender:
                    pp = producer_performance(
                        stack,
                        RECORD_BYTES,
                        records,
                        throughput=rate,
                        props=(f"linger.ms={linger}",),
                        wrap=lambda argv: ["sh", "-c", JOIN, str(producer / "cgroup.procs"), *argv],
                    )
                time.sleep(1)  # the last answers and the broker's purgatory
                used, wall = usage(broker) - b0, time.monotonic() - t0
                after = cores_over(broker, idle_s)
                idle = (before + after) / 2
                run = {
                    "broker_us_per_record": (used - idle * wall) / records * 1e6,
                    "producer_network_thread_us_per_record": sender.cores() / rate * 1e6,
                    "p50_ms": pp["p50_ms"],
                    "p99_ms": pp["p99_ms"],
                    "records_per_s": pp["records_per_s"],
                    "broker_idle_cores": idle,
                    "line": pp["line"],
                }
                found[str(rate)][str(linger)].append(run)
                say(
                    f"round {k + 1}, {rate:,} rec/s, linger {linger} ms: broker {run['broker_us_per_record']:.1f}"
                    f" + producer thread {run['producer_network_thread_us_per_record']:.1f} µs a record,"
                    f" p99 {pp['p99_ms']:.0f} ms"
                )
    result: dict = {
        "record_bytes": RECORD_BYTES,
        "seconds": seconds,
        "idle_seconds": idle_s,
        "runs": runs,
        "rates": {},
    }
    for rate, by_linger in found.items():
        result["rates"][rate] = {}
        for linger, rs in by_linger.items():
            entry = {
                key: summary([r[key] for r in rs])
                for key in ("broker_us_per_record", "producer_network_thread_us_per_record", "p50_ms", "p99_ms")
            }
            entry["cpu_us_per_record"] = summary(
                [r["broker_us_per_record"] + r["producer_network_thread_us_per_record"] for r in rs]
            )
            entry["lines"] = [r["line"] for r in rs]
            result["rates"][rate][linger] = entry
    result["plot"] = str(plot(result, PNG))
    return result


def plot(result: dict, path: Path) -> Path:
    plt = pyplot()
    fig, (cpu_ax, lat_ax) = plt.subplots(1, 2, figsize=(10, 4))
    for rate, by_linger in sorted(result["rates"].items(), key=lambda kv: int(kv[0])):
        lingers = sorted(by_linger, key=int)
        for ax, key in ((cpu_ax, "cpu_us_per_record"), (lat_ax, "p99_ms")):
            ax.errorbar(
                [int(lg) for lg in lingers],
                [by_linger[lg][key]["median"] for lg in lingers],
                yerr=_spread([by_linger[lg][key] for lg in lingers]),
                marker="o",
                capsize=3,
                label=f"{int(rate):,} rec/s",
            )
    cpu_ax.set_xlabel("linger.ms")
    cpu_ax.set_ylabel("µs of CPU a record")
    cpu_ax.set_title("broker + producer's network thread", fontsize=10)
    lat_ax.set_xlabel("linger.ms")
    lat_ax.set_ylabel("p99 ms")
    lat_ax.set_title("ProducerPerformance's p99", fontsize=10)
    for ax in (cpu_ax, lat_ax):
        ax.set_ylim(bottom=0)
        ax.legend()
    fig.suptitle("Kafka producer linger: CPU against latency (acks=all, idempotent; median of rounds, min-max)")
    fig.tight_layout()
    path = figure_path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _spread(summaries: list[dict]) -> list[list[float]]:
    return [[s["median"] - s["min"] for s in summaries], [s["max"] - s["median"] for s in summaries]]


def table(result: dict) -> str:
    """The benchmarks page's linger table, from bench/out/linger.json (generated, never typed)."""
    rows = [
        "| rate | linger.ms | broker µs a record | producer's network thread µs a record | together"
        " | p50 ms | p99 ms | p99 / p99 at the least linger |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rate, by_linger in sorted(result["rates"].items(), key=lambda kv: int(kv[0])):
        lingers = sorted(by_linger, key=int)
        base = by_linger[lingers[0]]["p99_ms"]["median"]
        for lg in lingers:
            e = by_linger[lg]
            rows.append(
                f"| {int(rate):,} rec/s | {lg} | {fmt(e['broker_us_per_record'], 0)}"
                f" | {fmt(e['producer_network_thread_us_per_record'], 0)} | {fmt(e['cpu_us_per_record'], 0)}"
                f" | {fmt(e['p50_ms'], 0)} | {fmt(e['p99_ms'], 0)} | {e['p99_ms']['median'] / max(base, 1):.1f} |"
            )
    rows.append(
        f"\nKafka's ProducerPerformance, {result['record_bytes']} B records, acks=all, idempotent, on the stack's"
        f" broker with the jobs running, {result['seconds']:g} s a run, the settings interleaved; the broker's"
        f" idle CPU over {result['idle_seconds']:g} s before and after each run subtracted; the producer's network"
        f" thread read from {START_S:g} s into the run on. Median of {result['runs']} rounds (min-max), "
        + measured(result, "linger", "plot `bench/out/linger.png`")
        + "."
    )
    return "\n".join(rows)
