"""The README's table of the performance goals (issue 15), generated from every report under
bench/out/ that measures one: each goal with the figure measured (median of the runs where the
benchmark makes several, with min-max), whether it is met, and the report it comes from. A goal
whose report is missing says so; nothing is typed by hand."""

from __future__ import annotations

import json
from pathlib import Path

from . import staleness
from .cost import floor_median


def _load(out: Path, name: str) -> dict | None:
    path = out / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _range(s: dict, digits: int = 1) -> str:
    return f"{s['median']:,.{digits}f} ({s['min']:,.{digits}f}-{s['max']:,.{digits}f})"


def rows(out: Path) -> list[tuple[str, str, str, str, str]]:
    """(figure, goal, measured, met, report) for each goal."""
    found: list[tuple[str, str, str, str, str]] = []
    missing = "not measured yet"

    found.extend(_cost_rows(_load(out, "cost")))

    getcount = _load(out, "getcount")
    for kind in ("EVENTUAL", "ACCURATE"):
        figure = f"GetCount p99 at 2,000 req/s over 100,000 counters, {kind}"
        t = (getcount or {}).get("types", {}).get(kind)
        r = (t or {}).get("rates", {}).get("2000")
        if r is None:
            found.append((figure, "< 5 ms, 0 errors", missing, "", "getcount"))
            continue
        met = r["p99_ms"]["median"] < 5 and r["success"]["min"] == 1.0
        errors = "0 errors" if r["success"]["min"] == 1.0 else f"success {r['success']['min']:.4f}"
        found.append((figure, "< 5 ms, 0 errors", f"{_range(r['p99_ms'], 2)} ms, {errors}", _yes(met), "getcount"))

    addcount = _load(out, "addcount")
    figure = "durable AddCount at 2,000 req/s, 60 s: p99 / ProducerPerformance p99 at 2,000 rec/s"
    if addcount and "2000" in addcount["rates"]:
        r = addcount["rates"]["2000"]
        ratio = addcount["p99_ratio_to_producer_performance"]
        met = ratio <= 2 and r["success"]["min"] == 1.0 and r["pipeline_lag_s"]["median"] < 2
        found.append(
            (
                figure,
                "<= 2, 0 errors, pipeline lag at the end < 2 s",
                f"{ratio:.1f} ({_range(r['p99_ms'])} ms over {addcount['ceiling_producer_performance']['p99_ms']['median']:.0f} ms),"
                f" success {r['success']['min']:.4f}, lag {_range(r['pipeline_lag_s'], 2)} s",
                _yes(met),
                "addcount",
            )
        )
    else:
        found.append((figure, "<= 2, 0 errors, lag < 2 s", missing, "", "addcount"))
    figure = "highest durable AddCount rate held 60 s with p99 < 50 ms, 0 errors, the pipeline keeping up"
    if addcount:
        held = [
            int(rate)
            for rate, r in addcount["rates"].items()
            if r["p99_ms"]["median"] < 50 and r["success"]["min"] == 1.0 and r["pipeline_lag_s"]["median"] < 2
        ]
        tried = ", ".join(f"{int(x):,}" for x in sorted(addcount["rates"], key=int))
        best = max(held) if held else 0
        found.append(
            (
                figure,
                ">= 5,000 req/s",
                f"{best:,} req/s (of {tried} tried)" if held else f"none of {tried} req/s",
                _yes(best >= 5000),
                "addcount",
            )
        )
    else:
        found.append((figure, ">= 5,000 req/s", missing, "", "addcount"))

    for report, figure, path, at_least, shown in (
        (
            "counters",
            "rollup job EVENTUAL events/s per TaskManager core (event log included)",
            ("rollup_eventual", "events_per_s_per_tm_core"),
            20_000,
            "{:,.0f} (one run)",  # a summary (median of 3, min-max) is shown as such
        ),
        (
            "timeseries",
            "TimeSeries writer events/s / raw single-row async inserts of the same rows",
            ("ratio_stored_events_per_s_to_raw_cassandra",),
            1.5,
            "{:.2f} (one run)",
        ),
        (
            "gateway",
            "gateway WriteEventRecordsSync events/s / ProducerPerformance, jobs running",
            ("ratio_events_per_s_to_ceiling",),
            0.5,
            "{:.2f}",
        ),
    ):
        found.append(_at_least(_load(out, report), report, figure, path, at_least, shown))

    fresh = (getcount or {}).get("accurate_freshness")
    figure = "ACCURATE freshness p99 (ack -> GetCount shows it)"
    if fresh:
        found.append(
            (
                figure,
                "<= 500 ms",
                f"{fresh['p99_ms']:.0f} ms ({fresh['samples']} samples)",
                _yes(fresh["p99_ms"] <= 500),
                "getcount",
            )
        )
    else:
        found.append((figure, "<= 500 ms", missing, "", "getcount"))

    reads = _load(out, "reads")
    figure = "ReadEventRecords first page of an id with 10,000 events in one bucket, 500 req/s, 20 s"
    r = (reads or {}).get("rates", {}).get("500")
    if r:
        met = r["p99_ms"]["median"] < 10 and r["success"]["min"] == 1.0
        reached = f"p99 {_range(r['p99_ms'])} ms, success {r['success']['min']:.4f}"
        by_time = (reads.get("by_time") or {}).get("rates", {}).get("500")
        if by_time:  # the same page in a namespace whose event buckets are by time (an option, not the default)
            reached += f"; event buckets by time: p99 {_range(by_time['p99_ms'])} ms"
        closed = (reads.get("closed") or {}).get("rates", {}).get("500")
        if closed:  # the same page once final, served from the gateway's memory (the current hour is not)
            reached += f"; in the closed past (the gateway's memory): p99 {_range(closed['p99_ms'])} ms"
        found.append(
            (
                figure,
                "p99 < 10 ms, 0 errors",
                reached,
                _yes(met),
                "reads",
            )
        )
    else:
        found.append((figure, "p99 < 10 ms, 0 errors", missing, "", "reads"))

    runq = _load(out, "runq")
    beside = (runq or {}).get("settings", {}).get("rate limit 10 ms, no Kafka, beside runqlat")
    for hook in ("sched_switch", "sched_wakeup"):
        figure = f"runq exporter {hook} ns per call / bcc runqlat's, same hooks, same load"
        if beside and hook in beside["ns_per_hook"] and hook in beside["runqlat"]["ns_per_hook"]:
            ours, theirs = beside["ns_per_hook"][hook], beside["runqlat"]["ns_per_hook"][hook]
            met = ours["median"] <= theirs["median"] and ours["median"] <= 600
            shown = f"{_range(ours, 0)} ns against {_range(theirs, 0)} ns (median of 3, min-max)"
            found.append((figure, "<= 1, and <= 600 ns", shown, _yes(met), "runq"))
        else:
            found.append((figure, "<= 1, and <= 600 ns", missing, "", "runq"))
    figure = "runq exporter process CPU under the benchmark's load, producing to Kafka"
    kafka = (runq or {}).get("settings", {}).get("rate limit 10 ms, producing to Kafka")
    if kafka:
        cpu = kafka["exporter_cpu_percent"]
        found.append(
            (figure, "< 1% of a core", f"{_range(cpu, 2)}% (median of 3, min-max)", _yes(cpu["median"] < 1), "runq")
        )
    else:
        found.append((figure, "< 1% of a core", missing, "", "runq"))
    return found


def _cost_rows(cost: dict | None) -> list[tuple[str, str, str, str, str]]:
    """The CPU budget of the cost issue: whole-stack µs of CPU an operation, and the idle stack."""
    found = []
    ops = (cost or {}).get("operations", {})
    floor = floor_median(cost or {})
    for op, figure, total, parts in (
        (
            "addcount_eventual",
            "durable AddCount (EVENTUAL), whole-stack CPU per increment",
            150,
            {"flink-taskmanager": 50, "gateway": 40},
        ),
        ("getcount", "GetCount, whole-stack CPU per read", 25, {}),
        ("timeseries_10", "TimeSeries event (batches of 10), whole-stack CPU per event", 80, {}),
    ):
        goal = f"<= {total} µs" + "".join(f", {c} <= {v}" for c, v in parts.items())
        o = ops.get(op)
        if not o or not o.get("runs"):
            found.append((figure, goal, "not measured yet", "", "cost"))
            continue
        met = o["us_per_op_total"]["median"] <= total and all(
            o["us_per_op"][c]["median"] <= v for c, v in parts.items()
        )
        shown = f"{_range(o['us_per_op_total'], 0)} µs" + "".join(
            f", {c} {_range(o['us_per_op'][c], 0)}" for c in parts
        )
        # a whole below one of its parts is the idle subtraction's noise (other components' idle
        # CPU fell while the operation ran), not a cost: the goal is not judged met on it
        part, most = max(((c, v["median"]) for c, v in o["us_per_op"].items()), key=lambda cv: cv[1])
        if o["us_per_op_total"]["median"] < most:
            met = False
            shown += f" (below {part}'s own {most:.0f}: noise of the idle subtraction)"
        null = (cost or {}).get("null", {})
        if op == "getcount" and null.get("runs"):  # the box's load alone, no server asked anything
            shown += f"; the null request at the same rate raised the stack's servers {_range(null['us_per_op_total'], 0)} µs"
        if floor:  # the box's speed that hour: the same code reads up to 2x apart between days
            shown += (
                f"; {o['us_per_op_total']['median'] / floor:.2f} × the floor of the same run ({floor:.0f} µs a record)"
            )
        found.append((figure, goal, shown, _yes(met), "cost"))
    figure = "the idle stack's CPU (every server up, the jobs running, nothing asked)"
    if cost and "idle_cores_total" in cost:
        idle = cost["idle_cores_total"]
        found.append((figure, "<= 0.25 cores", f"{idle:.2f} cores", _yes(idle <= 0.25), "cost"))
    else:
        found.append((figure, "<= 0.25 cores", "not measured yet", "", "cost"))
    return found


def _at_least(result: dict | None, report: str, figure: str, path: tuple[str, ...], at_least: float, shown: str):
    """A goal that one figure of a report reaches at least `at_least`."""
    goal = f">= {at_least:,g}"
    if result is None:
        return (figure, goal, "not measured yet", "", report)
    value = result
    for key in path:
        value = value[key]
    if isinstance(value, dict):  # a summary of several runs: the median decides, the range is shown
        digits = 2 if abs(value["median"]) < 10 else 0
        shown_range = f"{_range(value, digits)} (median of 3, min-max)"
        return (figure, goal, shown_range, _yes(value["median"] >= at_least), report)
    return (figure, goal, shown.format(value), _yes(value >= at_least), report)


def _yes(met: bool) -> str:
    return "met" if met else "**not met**"


def table(out: Path) -> str:
    lines = ["| figure | goal | measured | | report |", "|---|---|---|---|---|"]
    found = rows(out)
    stale = {r for r in {row[4] for row in found} if (loaded := _load(out, r)) and staleness.changed_since(r, loaded)}
    for figure, goal, measured, met, report in found:
        cited = f"`bench/out/{report}.json`" + (" (older than the code it measures)" if report in stale else "")
        lines.append(f"| {figure} | {goal} | {measured} | {met} | {cited} |")
    return "\n".join(lines)
