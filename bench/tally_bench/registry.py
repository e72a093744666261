"""The docs' serde and registry table, from bench/out/registry.json (`./tally bench registry`:
the Java SerdeBenchmark's lines)."""

from __future__ import annotations

import re


def table(report: dict) -> str:
    rows = ["| what | plain Avro | Tally serde (cached id) | ratio |", "|---|---|---|---|"]
    calls = ["| call | p50 | p99 |", "|---|---|---|"]
    for line in report["report"]:
        m = re.match(r"(encode|decode): plain Avro (\d+) ns/record, Tally serde (\d+) ns/record, ratio ([\d.]+)", line)
        if m:
            what, plain, serde, ratio = m.groups()
            rows.append(f"| {what} | {int(plain):,} ns/record | {int(serde):,} ns/record | {ratio} |")
        m = re.match(r"(.+): p50 ([\d.]+) ms, p99 ([\d.]+) ms over (\d+) calls", line)
        if m:
            what, p50, p99, n = m.groups()
            calls.append(f"| {what} ({int(n):,} calls) | {p50} ms | {p99} ms |")
    record = next((line for line in report["report"] if line.startswith("record:")), "")
    return (
        "\n".join(rows)
        + ("\n\n" + "\n".join(calls) if len(calls) > 2 else "")
        + f"\n\n{record.removeprefix('record: ')}; measured {report.get('measured_at', '?')} at commit "
        f"`{report.get('commit', '?')}` (`./tally bench registry`, `bench/out/registry.json`)."
    )
