"""Open-loop HTTP load with vegeta, shared by the HTTP benchmarks (./tally bench getcount, reads):
vegeta installed as a Go module, its targets, one attack at a fixed rate with its report and a
per-second series, three runs a rate summarised as median (min-max) with the host's load and
each component's CPU share, and the PNG plots under bench/out/."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import subprocess
import time
from pathlib import Path

from tally.plots import pyplot
from tally.stack import Stack

from .tools import cpu_seconds, figure_path, pipeline_backlog, summary

VEGETA_MODULE = "github.com/tsenart/vegeta/v12@v12.12.0"
COMPONENTS = ("gateway", "cassandra", "kafka", "flink-taskmanager")


def vegeta(stack: Stack) -> Path:
    """vegeta, installed as a Go module into $TALLY_HOME/bin on first use."""
    bin_dir = stack.s.home / "bin"
    exe = bin_dir / "vegeta"
    if not exe.exists():
        bin_dir.mkdir(parents=True, exist_ok=True)
        from tally.components.runq_exporter import go_binary

        r = subprocess.run(
            [go_binary(), "install", VEGETA_MODULE],
            env={**os.environ, "GOBIN": str(bin_dir)},
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise RuntimeError(f"installing vegeta failed: {r.stderr[-2000:]}")
    return exe


def targets(url: str, bodies: list[dict]) -> bytes:
    """vegeta's JSON target format, one line a request."""
    lines = []
    for b in bodies:
        lines.append(
            json.dumps(
                {
                    "method": "POST",
                    "url": url,
                    "body": base64.b64encode(json.dumps(b).encode()).decode(),
                    "header": {"Content-Type": ["application/json"]},
                }
            )
        )
    return ("\n".join(lines) + "\n").encode()


class VegetaReportError(RuntimeError):
    """vegeta could not read back the results it wrote (once, in a bench cost run: "gob: bad string
    slice length: 0"): the run served its requests, but its figures are lost."""


def vegeta_report(exe: Path, results: bytes) -> dict:
    """vegeta's JSON report of an attack's results; a report that is not JSON names what vegeta said
    (a bench once stopped on a bare JSON error that named neither)."""
    report = subprocess.run([str(exe), "report", "-type=json"], input=results, capture_output=True)
    try:
        return json.loads(report.stdout)
    except ValueError as e:
        raise VegetaReportError(
            f"vegeta report gave no JSON (exit {report.returncode}, {len(results):,} bytes of results):"
            f" {report.stderr.decode(errors='replace')[-1000:] or report.stdout[:200]!r}"
        ) from e


def per_second(exe: Path, results: bytes) -> list[dict]:
    """The attack's requests by second: sent, answered 2xx, p99 latency (ms)."""
    csv_out = subprocess.run([str(exe), "encode", "--to", "csv"], input=results, capture_output=True, check=True)
    by_second: dict[int, list[tuple[int, float]]] = {}
    first = None
    for row in csv.reader(io.StringIO(csv_out.stdout.decode(errors="replace"))):
        if len(row) < 3:
            continue
        t_ns, code, latency_ns = int(row[0]), int(row[1]), int(row[2])
        first = t_ns if first is None else min(first, t_ns)
        by_second.setdefault(t_ns, []).append((code, latency_ns / 1e6))
    seconds: dict[int, list[tuple[int, float]]] = {}
    for t_ns, rows in by_second.items():
        seconds.setdefault((t_ns - first) // 1_000_000_000, []).extend(rows)
    out = []
    for s in sorted(seconds):
        rows = seconds[s]
        lat = sorted(ms for _, ms in rows)
        out.append(
            {
                "second": s,
                "sent": len(rows),
                "ok": sum(1 for code, _ in rows if 200 <= code < 300),
                "p99_ms": lat[min(len(lat) - 1, int(0.99 * len(lat)))],
            }
        )
    return out


def attack_lazy(exe: Path, url: str, body, rate: int, seconds: float, max_workers: int = 1024) -> dict:
    """One open-loop run whose requests are made as vegeta sends them (-lazy): body(i) is the i-th
    request's JSON, so per-request tokens and times are fresh (a 5 s accept window refuses a
    target file made in advance). vegeta's JSON report with the per-second series."""
    import threading

    run = subprocess.Popen(
        [
            str(exe),
            "attack",
            "-lazy",
            "-format=json",
            f"-rate={rate}/s",
            f"-duration={seconds}s",
            "-timeout=10s",
            f"-max-workers={max_workers}",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    stop = threading.Event()

    def feed() -> None:
        i = 0
        try:
            while not stop.is_set():
                run.stdin.write(targets(url, [body(i)]))
                i += 1
        except (BrokenPipeError, ValueError):
            pass  # vegeta is done

    threading.Thread(target=feed, daemon=True).start()
    results = run.stdout.read()  # until vegeta is done (communicate() would close its stdin first)
    run.wait()
    stop.set()
    try:
        run.stdin.close()
    except OSError:
        pass
    if run.returncode != 0:
        raise RuntimeError(f"vegeta attack failed: {run.stderr.read().decode()[-2000:]}")
    report = vegeta_report(exe, results)
    report["per_second"] = per_second(exe, results)
    return report


def attack(
    exe: Path, target_lines: bytes, rate: int, seconds: float, series: bool = False, max_workers: int = 512
) -> dict:
    """One open-loop run at a fixed rate; vegeta's JSON report (latencies in ns), with the
    per-second series under "per_second" when asked."""
    results = subprocess.run(
        [
            str(exe),
            "attack",
            "-format=json",
            f"-rate={rate}/s",
            f"-duration={seconds}s",
            "-timeout=10s",
            f"-max-workers={max_workers}",
        ],
        input=target_lines,
        capture_output=True,
    )
    if results.returncode != 0:
        raise RuntimeError(f"vegeta attack failed: {results.stderr.decode()[-2000:]}")
    out = vegeta_report(exe, results.stdout)
    if series:
        out["per_second"] = per_second(exe, results.stdout)
    return out


def component_cpu(stack: Stack) -> dict[str, float]:
    out = {}
    for name in COMPONENTS:
        ref = stack.state.ref(name)
        if ref is not None:
            try:
                out[name] = cpu_seconds(ref)
            except OSError:
                pass
    return out


def _proc_stat() -> list[int]:
    """The host's CPU time so far by state (/proc/stat's first line, in clock ticks): user, nice,
    system, idle, iowait, irq, softirq, steal, ..."""
    f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return f + [0] * (8 - len(f))


def host_ticks() -> dict[str, int]:
    """The host's CPU time so far: busy (user, nice, system, irq, softirq), stolen by the
    hypervisor (steal), and the total of every state."""
    f = _proc_stat()
    return {"busy": f[0] + f[1] + f[2] + f[5] + f[6], "steal": f[7], "total": sum(f[:8])}


def host_shares(before: dict[str, int], after: dict[str, int], wall_s: float) -> dict[str, float]:
    """Between two host_ticks(): the host's busy CPU and the hypervisor's steal, in % of a core
    (as the components' cgroups are read): a p99 that moves with steal moved with the host, not
    the code, and busy time beyond the components' sum is another process's (vegeta's own)."""
    per_core = 100 / (os.sysconf("SC_CLK_TCK") * max(wall_s, 1e-9))
    return {
        "host_busy_percent_of_a_core": (after["busy"] - before["busy"]) * per_core,
        "steal_percent_of_a_core": (after["steal"] - before["steal"]) * per_core,
    }


def cpu_idle_fraction(seconds: float) -> float:
    """The host's idle share of CPU time over the next `seconds` (from /proc/stat)."""

    def read() -> tuple[int, int]:
        fields = _proc_stat()
        return sum(fields), fields[3] + fields[4]  # idle + iowait

    t0, i0 = read()
    time.sleep(seconds)
    t1, i1 = read()
    return (i1 - i0) / max(1, t1 - t0)


# records left for the jobs that count as caught up (a checkpoint interval of a trickle)
BACKLOG_SETTLED = 5_000


def settle(say, idle: float = 0.6, window: float = 5, timeout: float = 180, stack: Stack | None = None) -> float:
    """Waits until the jobs have consumed what earlier runs produced (with `stack`; up to 30
    minutes) and then until the host is mostly idle (the writer's flushes, compactions and
    indexing after a seed are over), so a run measures the load it makes, not the tail of the
    last; returns the seconds waited (the report records them). A CPU-idle check alone passed
    while the rollup job still had 400,000 AddCounts to go (parallelism 1 leaves a core idle)."""
    t0 = time.monotonic()
    if stack is not None:
        backlog = pipeline_backlog(stack)
        while backlog > BACKLOG_SETTLED and time.monotonic() - t0 < 1800:
            time.sleep(10)
            backlog = pipeline_backlog(stack)
        say(f"  pipeline backlog {backlog:,} records after {time.monotonic() - t0:.0f} s")
    t1 = time.monotonic()
    while time.monotonic() - t1 < timeout:
        if cpu_idle_fraction(window) >= idle:
            break
    waited = time.monotonic() - t0
    say(f"  host settled after {waited:.0f} s")
    return waited


def runs_at_rates(
    stack: Stack,
    say,
    what: str,
    target_lines: bytes | None,
    rates,
    seconds: float,
    runs: int = 3,
    one_run=None,
    extras: tuple[str, ...] = (),
) -> dict:
    """`runs` open-loop runs at each rate: latency percentiles, success, requests answered a
    second, host load and each component's CPU (% of a core) as median (min-max); the last run's
    per-second series. A run attacks target_lines, or is one_run(rate) (a vegeta report with the
    per-second series); each key in extras is a figure of that report summarised too."""
    exe = vegeta(stack)
    out = {}
    for rate in rates:
        settled = settle(say, stack=stack)
        figures: dict[str, list[float]] = {}
        cpu, series = {}, []
        for k in range(runs):
            c0, h0, t0 = component_cpu(stack), host_ticks(), time.monotonic()
            if one_run is not None:
                rep = one_run(rate)
            else:
                rep = attack(exe, target_lines, rate, seconds, series=k == runs - 1)
            wall = time.monotonic() - t0
            c1, host = component_cpu(stack), host_shares(h0, host_ticks(), wall)
            for name in c1:
                cpu.setdefault(name, []).append(100 * (c1[name] - c0.get(name, c1[name])) / wall)
            lat = rep["latencies"]
            got = {
                "p50_ms": lat["50th"] / 1e6,
                "p99_ms": lat["99th"] / 1e6,
                "max_ms": lat["max"] / 1e6,
                "success": rep["success"],
                "answered_per_s": rep.get("throughput", 0.0),
                "load1": os.getloadavg()[0],
                **host,
                **{key: rep[key] for key in extras},
            }
            for key, value in got.items():
                figures.setdefault(key, []).append(value)
            series = rep.get("per_second", series)
            say(
                f"  {what} {rate}/s run {k + 1}: p50 {got['p50_ms']:.2f} ms, p99 {got['p99_ms']:.2f} ms,"
                f" success {rep['success']:.4f}, codes {rep.get('status_codes')},"
                f" host busy {host['host_busy_percent_of_a_core']:.0f}% of a core,"
                f" steal {host['steal_percent_of_a_core']:.1f}%" + "".join(f", {key} {rep[key]:.2f}" for key in extras)
            )
        out[str(rate)] = {
            **{key: summary(values) for key, values in figures.items()},
            "cpu_percent_of_a_core": {name: summary(v) for name, v in cpu.items()},
            "last_run_per_second": series,
            "settled_after_s": settled,
        }
    return out


def _save(plt, fig, title: str, png: Path) -> Path:
    """Titles, lays out and writes a benchmark's figure as PNG, then frees it."""
    fig.suptitle(title)
    fig.tight_layout()
    png = figure_path(png)
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png


def plot_latencies(rates: dict, title: str, png: Path) -> Path:
    """Two panels: p50/p99 by rate (median, min-max bars), and the last run of each rate over time."""
    plt = pyplot()
    fig, (by_rate, over_time) = plt.subplots(1, 2, figsize=(12, 4.5))
    xs = sorted(rates, key=int)
    for key, label in (("p50_ms", "p50"), ("p99_ms", "p99")):
        med = [rates[x][key]["median"] for x in xs]
        lo = [rates[x][key]["median"] - rates[x][key]["min"] for x in xs]
        hi = [rates[x][key]["max"] - rates[x][key]["median"] for x in xs]
        by_rate.errorbar([int(x) for x in xs], med, yerr=[lo, hi], marker="o", capsize=4, label=label)
    by_rate.set_xlabel("requests/s asked (open loop)")
    by_rate.set_ylabel("latency, ms (median of runs, min-max)")
    by_rate.set_yscale("log")
    by_rate.legend()
    by_rate.grid(alpha=0.3)
    for x in xs:
        s = rates[x].get("last_run_per_second") or []
        over_time.plot([p["second"] for p in s], [p["ok"] for p in s], label=f"{int(x):,}/s asked: 2xx/s")
    over_time.set_xlabel("second of the run")
    over_time.set_ylabel("answered 2xx per second")
    twin = over_time.twinx()
    for x in xs:
        s = rates[x].get("last_run_per_second") or []
        twin.plot([p["second"] for p in s], [p["p99_ms"] for p in s], linestyle=":", label=f"{int(x):,}/s: p99 ms")
    twin.set_ylabel("p99 latency in that second, ms (dotted)")
    twin.set_yscale("log")
    over_time.legend(loc="lower left", fontsize=8)
    return _save(plt, fig, title, png)


def plot_runs(series: dict[str, list[float]], ceilings: dict[str, float], title: str, ylabel: str, png: Path) -> Path:
    """Each run of each series as a bar (runs side by side), each ceiling of the same run as a
    dashed line: a throughput benchmark's runs and what bounds them, on a log scale."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / max(1, max(len(v) for v in series.values()))
    for i, runs in enumerate(series.values()):
        for j, value in enumerate(runs):
            x = i + (j - (len(runs) - 1) / 2) * width
            ax.bar(x, value, width * 0.9, color=f"C{i}")
            ax.annotate(f"{value:,.0f}", (x, value), ha="center", fontsize=7)
    for k, (name, value) in enumerate(ceilings.items()):
        ax.axhline(value, linestyle="--", color=f"C{len(series) + k}", label=f"{name}: {value:,.0f}")
    ax.set_xticks(range(len(series)), [f"{n}\n(runs 1-{len(r)})" for n, r in series.items()])
    ax.set_ylabel(ylabel)
    ax.set_yscale("log")
    if ceilings:
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return _save(plt, fig, title, png)


def fmt(s: dict | None, digits: int = 2) -> str:
    """A summary as the README shows it: median (min-max)."""
    if not s:
        return "-"
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"


def measured(result: dict, name: str, plots: str = "") -> str:
    """Where a table's figures come from: when, at which commit, by which command, into which report."""
    commit = result.get("commit")
    at = f"at commit `{commit}`" if commit else "at a commit the report does not record (it predates commit recording)"
    plots = f", {plots}" if plots else ""
    return f"measured {result.get('measured_at', '?')} {at} (`./tally bench {name}`, `bench/out/{name}.json`{plots})"
