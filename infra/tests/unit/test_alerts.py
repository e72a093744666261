from datetime import UTC, datetime, timedelta

from tally.alerts import Alert, firing, report

T0 = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)


def alert(container, state, minutes):
    v = {
        "host": "vm",
        "container": container,
        "state": state,
        "window_end": T0 + timedelta(minutes=minutes),
        "runq_p99_us": 12_000,
        "baseline_p99_us": 2_000,
        "switch_outs_other_container": 40,
        "switch_outs_system": 2,
        "switch_outs_same_container": 5,
        "runq_wait_behind_same_container_us": 0,
        "runq_wait_behind_other_container_us": 900_000,
        "runq_wait_behind_system_us": 40_000,
        "reason": "p99 rose with switch-outs by other containers",
    }
    return Alert.of(v)


def test_a_container_fires_until_its_latest_alert_resolves():
    alerts = [alert("web", "FIRING", 0), alert("db", "FIRING", 1), alert("web", "RESOLVED", 2)]
    assert [a.container for a in firing(alerts)] == ["vm/db"]


def test_the_report_lists_the_firing_then_the_recent_ones():
    alerts = [alert("web", "FIRING", 0), alert("db", "FIRING", 50), alert("web", "RESOLVED", 55)]
    lines = report(alerts, timedelta(minutes=30), now=T0 + timedelta(minutes=60))
    assert lines[0] == "firing now: 1" and "vm/db" in lines[1]
    assert lines[2] == "alerts in the last 0:30:00: 2"
    assert "RESOLVED" in lines[4] and "p99 12.0 ms (baseline 2.0)" in lines[4] and "by others 42" in lines[4]
    assert "waited behind others 940 ms" in lines[4]


def test_an_alert_from_before_the_waits_reads_as_none():
    v = vars_of(alert("web", "FIRING", 0))
    assert Alert.of(v).waited_behind_others_us == 0


def test_a_window_end_in_micros_reads_as_a_time():
    a = Alert.of({**vars_of(alert("web", "FIRING", 0)), "window_end": int(T0.timestamp() * 1e6)})
    assert a.window_end == T0


def vars_of(a: Alert) -> dict:
    host, container = a.container.split("/", 1)
    return {
        "host": host,
        "container": container,
        "state": a.state,
        "window_end": a.window_end,
        "runq_p99_us": a.p99_us,
        "baseline_p99_us": a.baseline_p99_us,
        "switch_outs_other_container": a.by_others,
        "switch_outs_system": 0,
        "switch_outs_same_container": a.by_itself,
        "reason": a.reason,
    }
