"""docs/deploying.md's three-node table from a report: the reads refused for their schema after
the nodes agreed, when the report counts them."""

from tally_bench.three_nodes import table

REPORT = {
    "seconds": 256.2,
    "counters": 8,
    "counter_total_acknowledged": 1920,
    "timeseries": {"acknowledged": 8740, "abandoned": 20, "abandoned_stored": 20, "lost": 0, "doubled": 0},
    "client_retries": 5,
    "reads_while_down": 66,
    "failed_reads_while_down": 8,
    "failed_reads_by_endpoint": {"/v1/counter/GetCount": 4},
    "last_failed_read_s_after_kill": 20.0,
    "reads_answering_again_s_after_kill": 20.0,
    "down_and_back_s": 108.8,
    "measured_at": "2026-11-30T17:13:42Z",
    "commit": "cf7178a",
}


def refusal_row(text: str) -> list[str]:
    return [line for line in text.splitlines() if "refused for the schema" in line]


def test_a_report_of_before_the_count_has_no_such_row():
    assert refusal_row(table(REPORT)) == []


def test_none_refused_reads_none():
    report = {**REPORT, "reads_refused_for_the_schema_after_agreement": 0, "last_refused_s_after_agreement": None}
    assert refusal_row(table(report)) == [
        "| reads refused for the schema after the nodes agreed on one (retried up to 120 s) | none |"
    ]


def test_refusals_are_counted_with_the_last_ones_time():
    report = {**REPORT, "reads_refused_for_the_schema_after_agreement": 3, "last_refused_s_after_agreement": 4.1}
    assert refusal_row(table(report))[0].endswith("| 3, the last 4.1 s after the agreement |")
