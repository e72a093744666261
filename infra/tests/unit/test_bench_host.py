"""The host record each benchmark report carries (bench/tally_bench/host.py)."""

from tally_bench.host import booted_at, cpu, line, mitigations, selected

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC 7B13
cpu MHz\t\t: 2450.000

processor\t: 1
model name\t: another
"""


HOST = {
    "cpu": {"model_name": "AMD EPYC 7B13", "family": "25", "model": "1"},
    "cores": 2,
    "kernel": "6.18.44",
    "booted_at": "2026-11-29T22:39:00Z",
}


def test_the_cpu_is_read_from_the_first_processor():
    assert cpu(CPUINFO) == {"model_name": "AMD EPYC 7B13", "family": "25", "model": "1", "mhz": "2450.000"}


def test_the_selected_transparent_huge_page_mode_is_the_bracketed_one():
    assert selected("always [madvise] never") == "madvise"
    assert selected("") == ""


def test_the_boot_time_comes_from_btime_in_utc():
    assert booted_at("cpu  1 2 3\nbtime 1795991940\nprocesses 9\n") == "2026-11-29T22:39:00Z"


def test_a_report_names_its_host_under_its_table_and_an_old_report_says_nothing():
    report = {
        "host": {
            **HOST,
            "random_read_ns": {"256_mib": {"ns_per_read": 271.9}, "256_mib_huge_pages": {"ns_per_read": 204.7}},
        }
    }
    assert line(report) == (
        "host: AMD EPYC 7B13 (family 25 model 1), 2 cores, kernel 6.18.44, up since 2026-11-29T22:39:00Z,"
        " a random read of 256 MiB 271.9 ns (204.7 on huge pages)"
    )
    assert line({}) == ""
    failed = {**report["host"], "random_read_ns": {"256_mib": {"error": "no jar"}}}
    assert "random read" not in line({"host": failed})


def test_a_report_with_the_thread_hand_off_names_its_cpu_and_a_failed_probe_says_nothing():
    h = {**HOST, "thread_handoff": {"cpu_us_per_handoff": 2.24, "wall_us_per_round_trip": 4.54}}
    report = {"host": h}
    assert line(report).endswith("up since 2026-11-29T22:39:00Z, a thread hand-off 2.24 µs of CPU")
    failed = {**report["host"], "thread_handoff": {"error": "no jar"}}
    assert "hand-off" not in line({"host": failed})


def test_the_mitigations_are_those_the_kernel_says_it_applies_and_the_line_names_the_uncommon(tmp_path):
    (tmp_path / "spec_rstack_overflow").write_text("Mitigation: Safe RET\n")
    (tmp_path / "spectre_v2").write_text("Mitigation: Retpolines; IBPB: conditional; STIBP: disabled\n")
    (tmp_path / "spectre_v1").write_text("Mitigation: usercopy/swapgs barriers and __user pointer sanitization\n")
    (tmp_path / "meltdown").write_text("Not affected\n")
    found = mitigations(tmp_path)
    assert found == {
        "spec_rstack_overflow": "Safe RET",
        "spectre_v1": "usercopy/swapgs barriers and __user pointer sanitization",
        "spectre_v2": "Retpolines; IBPB: conditional; STIBP: disabled",
    }
    assert line({"host": {**HOST, "mitigations": found}}).endswith(
        "up since 2026-11-29T22:39:00Z, mitigating spec_rstack_overflow (Safe RET), spectre_v2 (Retpolines)"
    )
    assert mitigations(tmp_path / "absent") == {}


def test_host_shares_are_percent_of_a_core_over_the_run():
    import os

    from tally_bench.http import host_shares, host_ticks

    tick = os.sysconf("SC_CLK_TCK")
    before = {"busy": 1000, "steal": 50, "total": 5000}
    after = {"busy": 1000 + 3 * tick, "steal": 50 + tick // 2, "total": 5000 + 4 * tick}
    shares = host_shares(before, after, wall_s=2.0)
    assert shares == {"host_busy_percent_of_a_core": 150.0, "steal_percent_of_a_core": 25.0}
    now = host_ticks()
    assert 0 <= now["steal"] <= now["total"] and 0 < now["busy"] <= now["total"]
