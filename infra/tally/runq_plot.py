"""`./tally runq plot`: a PNG heatmap of run-queue latency per container over time, from the
exporter's histogram as the stack's Prometheus keeps it (p99 of each step, per container), so a
person sees at a glance which container waited when, and behind whom."""

from __future__ import annotations

import json
import math
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

P99 = "histogram_quantile(0.99, sum by (container, le) (rate(tally_runq_latency_seconds_bucket[{window}])))"


def query_range(prometheus: str, expr: str, start: datetime, end: datetime, step_s: int) -> list[dict]:
    q = urlencode({"query": expr, "start": start.timestamp(), "end": end.timestamp(), "step": step_s})
    with urllib.request.urlopen(f"{prometheus}/api/v1/query_range?{q}", timeout=30) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"Prometheus: {body}")
    return body["data"]["result"]


def matrix(result: list[dict], start: datetime, step_s: int, steps: int) -> tuple[list[str], list[list[float]]]:
    """Containers (the slowest p99 first) and their p99 in ms a step (NaN where none)."""
    rows: dict[str, list[float]] = {}
    t0 = start.timestamp()
    for series in result:
        name = series["metric"].get("container", "?")
        row = [math.nan] * steps
        for t, v in series["values"]:
            i = round((float(t) - t0) / step_s)
            value = float(v)
            if 0 <= i < steps and not math.isnan(value):
                row[i] = value * 1000
        if any(not math.isnan(x) for x in row):
            rows[name] = row
    order = sorted(rows, key=lambda n: -max(x for x in rows[n] if not math.isnan(x)))
    return order, [rows[n] for n in order]


def plot(prometheus: str, out: Path, minutes: int = 30, step_s: int = 15, now: datetime | None = None) -> Path:
    from .plots import pyplot

    end = now or datetime.now(UTC)
    start = end - timedelta(minutes=minutes)
    steps = minutes * 60 // step_s + 1
    window = f"{max(step_s * 4, 60)}s"
    names, rows = matrix(query_range(prometheus, P99.format(window=window), start, end, step_s), start, step_s, steps)
    if not names:
        raise RuntimeError(f"no run-queue samples in Prometheus over the last {minutes} min")
    plt = pyplot()
    import numpy as np

    data = np.ma.masked_invalid(np.log10(np.array(rows)))
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.35 * len(names)))
    im = ax.imshow(data, aspect="auto", interpolation="nearest", cmap="magma")
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ticks = list(range(0, steps, max(1, steps // 8)))
    ax.set_xticks(ticks, [(start + timedelta(seconds=i * step_s)).strftime("%H:%M") for i in ticks])
    ax.set_xlabel(f"time (UTC), {step_s} s steps")
    ax.set_title(f"run-queue latency p99 per container ({window} rate), last {minutes} min")
    bar = fig.colorbar(im, ax=ax)
    bar.set_label("p99 (log10 ms)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
