"""docs/deploying.md's three-node table, from bench/out/three-nodes.json: the report
`./tally test --nodes 3` writes (a broker and a Cassandra node killed mid-stream)."""

from __future__ import annotations


def table(report: dict) -> str:
    ts = report["timeseries"]
    by_endpoint = ", ".join(f"{path} {n}" for path, n in sorted(report["failed_reads_by_endpoint"].items()))
    last = report["last_failed_read_s_after_kill"]
    failed = f"{report['failed_reads_while_down']} timed out ({by_endpoint})" if by_endpoint else "none failed"
    return "\n".join(
        [
            "| what | result |",
            "|---|---|",
            f"| the run, from the first increment to every count and event checked | {report['seconds']:.0f} s |",
            f"| counter total acknowledged ({report['counters']} counters) "
            f"| {report['counter_total_acknowledged']:,}: every count and rollup exact in GetCount and Cassandra |",
            f"| TimeSeries events acknowledged | {ts['acknowledged']:,}: lost {ts['lost']}, doubled {ts['doubled']} |",
            "| TimeSeries events never acknowledged (a batch whose retries outlasted the accept window while the "
            f"broker was fenced; the client gives it up) | {ts['abandoned']}, of which {ts['abandoned_stored']} "
            "stored (once each) |",
            f"| client retries through the outage | {report['client_retries']} |",
            f"| reads while the two were down (GetCount and ReadEventRecords) | {report['reads_while_down']}, "
            f"of which {failed}" + (f", the last {last} s after the kill" if last is not None else "") + " |",
            f"| reads answering again, after the kill | {report['reads_answering_again_s_after_kill']} s |",
            f"| the two down and back (restarted by `up`, healthy) | {report['down_and_back_s']} s |",
            *schema_refusals(report),
            "",
            f"Measured {report.get('measured_at', '?')} at commit `{report.get('commit', '?')}` "
            "(`./tally test --nodes 3`, `bench/out/three-nodes.json`).",
        ]
    )


def schema_refusals(report: dict) -> list[str]:
    """The row of reads a replica refused for its schema after the nodes agreed on one (a report of
    before the test counted them has none)."""
    n = report.get("reads_refused_for_the_schema_after_agreement")
    if n is None:
        return []
    last = report.get("last_refused_s_after_agreement")
    told = f"{n}, the last {last} s after the agreement" if n else "none"
    return [f"| reads refused for the schema after the nodes agreed on one (retried up to 120 s) | {told} |"]
