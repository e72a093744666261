"""./tally bench runq: what the runq exporter costs, beside bcc's runqlat on the same hooks.

Under a fixed load (3 busy loops and a 1 ms sleeper in a child cgroup of the container root), a
second exporter instance runs beside the stack's own, 15 s per setting after 3 s of warm-up:
rate limit 10 ms producing to Kafka; the same with no Kafka; the rate limiter off; and rate
limit 10 ms with Debian's libbpf-tools runqlat (the CO-RE build) attached to the same three
scheduler hooks at the same time. Per-hook cost is run_time_ns / run_cnt of each program's
kernel.bpf_stats_enabled counters; CPU is the process's utime + stime. Three runs of every
setting: each figure the median with min and max, with the host's load and the stack's
components' CPU. Also draws bench/out/runq.png (per-hook cost) and, from the stack's Prometheus,
the run-queue heatmap of the benchmark's minutes (bench/out/runq-heatmap.png). No figure is
asserted."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import requests
from tally.component_cgroups import v2_mount
from tally.plots import pyplot
from tally.process import ProcessRef, start_ticks
from tally.stack import Stack

from .http import _save, component_cpu, fmt, measured, summary
from .tools import OUT, cpu_seconds, free_port

RUNQLAT = "/usr/sbin/runqlat"  # libbpf-tools: bcc's runqlat, CO-RE (attaches without kernel headers)
BESIDE_RUNQLAT = "rate limit 10 ms, no Kafka, beside runqlat"
SETTINGS = (
    ("rate limit 10 ms, producing to Kafka", "10ms", []),
    ("rate limit 10 ms, no Kafka", "10ms", ["--no-kafka"]),
    ("rate limiter off, no Kafka", "0s", ["--no-kafka"]),
    (BESIDE_RUNQLAT, "10ms", ["--no-kafka"]),
)
HOOKS = ("sched_switch", "sched_wakeup", "sched_wakeup_new")
PNG = OUT / "runq.png"
HEATMAP = OUT / "runq-heatmap.png"


def _ctxt() -> int:
    return next(int(l.split()[1]) for l in Path("/proc/stat").read_text().splitlines() if l.startswith("ctxt "))


def _loaded() -> list[dict]:
    return json.loads(subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True, text=True).stdout)


def _ours(exclude: set[int]) -> dict[str, tuple[int, int]]:
    """The bench instance's programs (tp_sched_*, named after the hook): those loaded after `exclude`."""
    return {
        p["name"].removeprefix("tp_"): (p.get("run_time_ns", 0), p.get("run_cnt", 0))
        for p in _loaded()
        if p.get("name", "").startswith("tp_sched") and p["id"] not in exclude
    }


def _runqlat(exclude: set[int]) -> dict[str, tuple[int, int]]:
    """runqlat's programs: the tracing ones loaded after `exclude` that are not an exporter's (tp_*)."""
    return {
        p["name"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0))
        for p in _loaded()
        if p.get("type") == "tracing" and p["id"] not in exclude and not p.get("name", "").startswith("tp_")
    }


def _hooks(p0: dict, p1: dict, wall: float) -> dict:
    names = [n for n in p1 if n in p0]
    return {
        "ns_per_hook": {n: round((p1[n][0] - p0[n][0]) / max(1, p1[n][1] - p0[n][1])) for n in names},
        "hook_calls_per_s": {n: round((p1[n][1] - p0[n][1]) / wall) for n in names},
        "hooks_cpu_percent": round(100 * sum(p1[n][0] - p0[n][0] for n in names) / 1e9 / wall, 2),
    }


def _one(stack: Stack, binary: Path, label: str, rate: str, extra: list[str], seconds: int, runqlat_first: int) -> dict:
    """One setting, once: the bench instance (and runqlat) for `seconds` after 3 s of warm-up.
    Beside runqlat, the one attached first runs first on each tracepoint and takes the cache
    misses on the task struct, which the second then finds warm (3-5 ns a wakeup here): callers
    measure both orders."""
    port = free_port()
    before = {p["id"] for p in _loaded()}
    beside = label == BESIDE_RUNQLAT
    runqlat_first = beside and runqlat_first == 1

    def start_runqlat():
        return subprocess.Popen([RUNQLAT, "1", str(seconds + 15)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    field = None
    if runqlat_first:
        field = start_runqlat()
        time.sleep(1)
    proc = subprocess.Popen(
        [
            str(binary),
            "--metrics-addr",
            f"127.0.0.1:{port}",
            "--rate-limit",
            rate,
            "--kafka",
            stack.component("kafka").bootstrap,
            "--host",
            "bench",
            "--registry",
            stack.component("registry").url(),
            "--container-root",
            stack.s.get("TALLY_RUNQ_CONTAINER_ROOT"),
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/metrics"
    if beside and not runqlat_first:  # the field's tool on the same hooks, same load, same seconds
        time.sleep(1)
        field = start_runqlat()
    try:
        time.sleep(3)

        def events():
            return sum(
                float(l.rsplit(" ", 1)[1])
                for l in requests.get(url, timeout=5).text.splitlines()
                if l.startswith("tally_runq_exporter_events_total{")
            )

        ref = ProcessRef(proc.pid, start_ticks(proc.pid))
        fref = ProcessRef(field.pid, start_ticks(field.pid)) if field else None

        def reading():  # what the run is the difference of
            return {
                "cpu": cpu_seconds(ref),
                "ctxt": _ctxt(),
                "events": events(),
                "progs": _ours(before),
                "components": component_cpu(stack),
                "t": time.monotonic(),
                "field": (cpu_seconds(fref), _runqlat(before)) if field else None,
            }

        r0 = reading()
        time.sleep(seconds)
        r1 = reading()
        load1 = os.getloadavg()[0]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        if field:
            field.kill()
            field.wait()
    wall = r1["t"] - r0["t"]
    k0, k1 = r0["components"], r1["components"]
    run = {
        "switches_per_s": round((r1["ctxt"] - r0["ctxt"]) / wall),
        "exporter_cpu_percent": round(100 * (r1["cpu"] - r0["cpu"]) / wall, 2),
        "events_per_s": round((r1["events"] - r0["events"]) / wall),
        **_hooks(r0["progs"], r1["progs"], wall),
        "load1": load1,
        "component_cpu_percent": {n: round(100 * (k1[n] - k0[n]) / wall, 1) for n in k1 if n in k0},
    }
    if field:
        (fc0, fp0), (fc1, fp1) = r0["field"], r1["field"]
        run["runqlat"] = {**_hooks(fp0, fp1, wall), "process_cpu_percent": round(100 * (fc1 - fc0) / wall, 2)}
        run["attached_first"] = "runqlat" if runqlat_first else "tally"
    return run


def _mean(runs: list[dict]) -> dict:
    """The numbers of runs averaged (nested dicts too); other values from the first."""
    out = {}
    for key, value in runs[0].items():
        if isinstance(value, dict):
            out[key] = _mean([r[key] for r in runs if key in r])
        elif isinstance(value, (int, float)):
            out[key] = round(sum(r[key] for r in runs if key in r) / len(runs), 2)
        else:
            out[key] = value
    return out


def _summarise(runs: list[dict]) -> dict:
    """Every number of the runs (nested dicts too) as median (min-max) of its values."""
    first = runs[0]
    out = {}
    for key, value in first.items():
        if isinstance(value, dict):
            out[key] = _summarise([r[key] for r in runs if key in r])
        elif isinstance(value, (int, float)):
            out[key] = summary([r[key] for r in runs if key in r])
    return out


def bench_runq(stack: Stack, say, seconds: int = 15, runs: int = 3) -> dict:
    from tally import runq_plot
    from tally.components.runq_exporter import build

    binary = build(stack.s.home, say)
    mount = v2_mount()
    if mount is None:
        raise RuntimeError("no cgroup v2 hierarchy is mounted: the benchmark's load needs a cgroup of its own")
    group = mount / stack.s.get("TALLY_RUNQ_CONTAINER_ROOT") / f"bench-{uuid.uuid4().hex[:6]}"
    group.mkdir(parents=True)
    stats_flag = Path("/proc/sys/kernel/bpf_stats_enabled")
    stats_before = stats_flag.read_text().strip()
    stats_flag.write_text("1")
    load = []
    started = datetime.now(UTC)
    per_setting: dict[str, list[dict]] = {label: [] for label, _, _ in SETTINGS}
    try:
        for cmd in [["sh", "-c", "while :; do :; done"]] * 3 + [
            [sys.executable, "-c", "import time\nwhile True:\n    sum(range(2000))\n    time.sleep(0.001)"]
        ]:
            p = subprocess.Popen(cmd)
            (group / "cgroup.procs").write_text(str(p.pid))
            load.append(p)
        say(f"load: 3 busy loops and a 1 ms sleeper in {group.name}; {runs} runs of each setting, {seconds} s each")
        for k in range(runs):
            for label, rate, extra in SETTINGS:
                if label == BESIDE_RUNQLAT:  # both orders of attaching, averaged: neither gets the warm cache
                    orders = [_one(stack, binary, label, rate, extra, seconds, first) for first in (0, 1)]
                    run = _mean(orders)
                    run.pop("attached_first")
                    run["both_orders"] = orders
                else:
                    run = _one(stack, binary, label, rate, extra, seconds, 0)
                per_setting[label].append(run)
                theirs = run.get("runqlat", {}).get("ns_per_hook")
                say(
                    f"  run {k + 1}, {label}: {run['switches_per_s']:,} switches/s, ns/hook {run['ns_per_hook']}"
                    + (f" (runqlat {theirs}; each the mean of both attach orders)" if theirs else "")
                    + f", exporter CPU {run['exporter_cpu_percent']}%, {run['events_per_s']} events/s"
                )
    finally:
        for p in load:
            p.kill()
            p.wait()
        stats_flag.write_text(stats_before)
        time.sleep(0.2)
        group.rmdir()
    result = {
        "settings": {label: _summarise(rs) for label, rs in per_setting.items()},
        "runs": per_setting,
        "seconds_per_run": seconds,
        "note": "ns_per_hook = run_time_ns / run_cnt over the run (kernel.bpf_stats_enabled=1); hooks_cpu_percent ="
        " their run time over the wall time (kernel CPU in the switching tasks); exporter_cpu_percent = the bench"
        " instance's utime + stime; the last setting also measures bcc's runqlat (libbpf-tools, CO-RE) on the same"
        " hooks at the same time, each run the mean of two (runqlat attached first, then Tally's first: the first"
        " program on a tracepoint takes the task struct's cache misses); each figure median (min-max) of the runs",
    }
    plot(result, PNG)
    try:  # the stack's Prometheus over the benchmark's minutes: its load beside the stack's components
        minutes = max(2, math.ceil((datetime.now(UTC) - started).total_seconds() / 60))
        runq_plot.plot(stack.component("prometheus").url(), HEATMAP, minutes=minutes)
        result["heatmap"] = str(HEATMAP.relative_to(OUT.parent.parent))
    except (RuntimeError, OSError) as e:
        say(f"no heatmap: {e}")
    return result


def plot(result: dict, png: Path) -> Path:
    """ns per hook call, Tally's exporter beside runqlat in the same runs (median, min-max bars)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    beside = result["settings"][BESIDE_RUNQLAT]
    series = {"Tally's exporter": beside["ns_per_hook"], "runqlat (libbpf-tools)": beside["runqlat"]["ns_per_hook"]}
    width = 0.38
    for i, (name, hooks) in enumerate(series.items()):
        xs = [h + (i - 0.5) * width for h in range(len(HOOKS))]
        med = [hooks[n]["median"] if n in hooks else 0 for n in HOOKS]
        lo = [hooks[n]["median"] - hooks[n]["min"] if n in hooks else 0 for n in HOOKS]
        hi = [hooks[n]["max"] - hooks[n]["median"] if n in hooks else 0 for n in HOOKS]
        ax.bar(xs, med, width * 0.95, yerr=[lo, hi], capsize=4, label=name, color=f"C{i}")
        for x, m in zip(xs, med):
            ax.annotate(f"{m:.0f}", (x, m), ha="center", va="bottom", fontsize=8)
    ax.axhline(600, linestyle="--", color="grey", label="600 ns (the article's bound)")
    ax.set_xticks(range(len(HOOKS)), HOOKS)
    ax.set_ylabel("ns per call (median of runs, min-max)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    n = len(result["runs"][BESIDE_RUNQLAT])
    return _save(plt, fig, f"Per-hook cost on the same hooks, same load, same seconds ({n} runs)", png)


def table(result: dict) -> str:
    """The README's tables: each setting, then the side-by-side with runqlat."""
    s = result["settings"]
    n = len(result["runs"][BESIDE_RUNQLAT])
    rows = [
        "| setting | context switches/s | sched_switch ns | sched_wakeup ns | hooks' CPU (kernel) | exporter process CPU | events/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, f in s.items():
        rows.append(
            f"| {label} | {fmt(f['switches_per_s'], 0)} | {fmt(f['ns_per_hook'].get('sched_switch'), 0)}"
            f" | {fmt(f['ns_per_hook'].get('sched_wakeup'), 0)} | {fmt(f['hooks_cpu_percent'])}%"
            f" | {fmt(f['exporter_cpu_percent'])}% | {fmt(f['events_per_s'], 0)} |"
        )
    b = s[BESIDE_RUNQLAT]
    rows += [
        "",
        f"Beside bcc's runqlat, same hooks, same load, same seconds (median of {n} runs, min-max; each run the mean"
        " of both attach orders, since the program attached first takes the task struct's cache misses):",
        "",
        "| | sched_switch ns/hook | sched_wakeup ns/hook | sched_wakeup_new ns/hook | hooks' CPU (kernel) | process CPU |",
        "|---|---|---|---|---|---|",
    ]
    for name, f, cpu in (
        ("Tally's exporter", b, b["exporter_cpu_percent"]),
        ("runqlat (libbpf-tools)", b["runqlat"], b["runqlat"]["process_cpu_percent"]),
    ):
        hooks = f["ns_per_hook"]
        rows.append(
            f"| {name} | {fmt(hooks.get('sched_switch'), 0)} | {fmt(hooks.get('sched_wakeup'), 0)}"
            f" | {fmt(hooks.get('sched_wakeup_new'), 0)} | {fmt(f['hooks_cpu_percent'])}% | {fmt(cpu)}% |"
        )
    load = fmt(b["load1"])
    cpu = ", ".join(f"{k} {fmt(v, 1)}%" for k, v in b.get("component_cpu_percent", {}).items())
    rows += [
        "",
        f"{result['seconds_per_run']} s a run; host load (1 min) {load}; the stack's components meanwhile"
        f" (% of a core): {cpu}; " + measured(result, "runq", "plot `bench/out/runq.png`") + ".",
    ]
    return "\n".join(rows)
