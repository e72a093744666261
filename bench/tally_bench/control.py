"""The docs' control-plane table, from bench/out/control.json (`./tally bench control`)."""

from __future__ import annotations


def table(report: dict) -> str:
    def pct(part: str) -> str:
        p = report[part]
        return f"p50 {p['p50_ms']:.0f} ms, p99 {p['p99_ms']:.0f} ms"

    rows = [
        "| step | latency |",
        "|---|---|",
        f"| admin PUT answered (Postgres commit, a JDBC connection a call) | {pct('admin_put')} |",
        f"| change event in Kafka (Debezium: the ceiling) | {pct('in_kafka')} |",
        f"| applied by the gateway (its answers change) | {pct('applied_by_gateway')} |",
        f"| applied / in Kafka, p50 | **{report['ratio_applied_over_in_kafka_p50']:.2f}x** |",
    ]
    return "\n".join(rows) + (
        f"\n\n{report['changes']} accept_limit flips with the whole stack running, measured "
        f"{report.get('measured_at', '?')} at commit `{report.get('commit', '?')}` (`./tally bench control`, "
        "`bench/out/control.json`)."
    )
