import math
from datetime import UTC, datetime

from tally.runq_plot import matrix

START = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)


def series(container, points):
    t0 = START.timestamp()
    return {"metric": {"container": container}, "values": [[t0 + i * 15, str(v)] for i, v in points]}


def test_rows_are_containers_slowest_first_in_ms_with_gaps_where_no_samples():
    result = [
        series("kafka", [(0, 0.001), (1, 0.002)]),
        series("victim", [(1, 0.050), (3, "NaN")]),
        series("idle", [(0, "NaN")]),
    ]
    names, rows = matrix(result, START, 15, 4)
    assert names == ["victim", "kafka"]  # a container without a single value is left out
    assert math.isnan(rows[0][0]) and rows[0][1] == 50.0 and math.isnan(rows[0][3])
    assert rows[1][:2] == [1.0, 2.0]
