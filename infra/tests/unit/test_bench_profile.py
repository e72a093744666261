"""The profile command's arithmetic: CPU by thread group, and the hottest frames of collapsed stacks."""

import os

from tally_bench.profile import by_thread_frames, by_thread_group, hottest


def test_numbered_threads_of_a_pool_count_as_one_group_per_operation():
    tick = os.sysconf("SC_CLK_TCK")
    before = {"1": ("vert.x-eventloop-thread-0", 100, 10), "2": ("vert.x-eventloop-thread-1", 0, 0)}
    after = {
        "1": ("vert.x-eventloop-thread-0", 100 + tick, 10 + tick // 2),
        "2": ("vert.x-eventloop-thread-1", tick, 0),
        "3": ("kafka-producer-network-thread", tick, 0),  # started between the readings
    }
    groups = by_thread_group(before, after, ops=1000)
    per_tick = 1e6 / 1000  # one second of CPU over 1,000 operations
    as_dict = {g: (us, sys_us) for g, us, sys_us in groups}
    assert as_dict["vert.x-eventloop-thread-#"] == (2.5 * per_tick, 0.5 * per_tick)
    assert as_dict["kafka-producer-network-thread"] == (per_tick, 0)
    assert [g for g, _, _ in groups] == ["vert.x-eventloop-thread-#", "kafka-producer-network-thread"]


def test_hottest_counts_a_frame_once_a_stack_and_skips_the_thread(tmp_path):
    collapsed = tmp_path / "p.collapsed"
    collapsed.write_text("[main tid=1];a;b;a 3\n[main tid=1];a;c 1\n[other tid=2];c 4\n")
    shares = dict((f, s) for s, f in hottest(collapsed))
    assert shares == {"a": 0.5, "c": 0.625, "b": 0.375}


def test_self_counts_the_top_frame_only(tmp_path):
    collapsed = tmp_path / "p.collapsed"
    collapsed.write_text("[main tid=1];a;b;a 3\n[main tid=1];a;c 1\n[other tid=2];c 4\n")
    assert dict((f, s) for s, f in hottest(collapsed, inclusive=False)) == {"a": 0.375, "c": 0.625}


def test_frames_by_thread_group_leave_the_run_loops_out(tmp_path):
    collapsed = tmp_path / "p.collapsed"
    collapsed.write_text(
        "[worker-1 tid=7];run;read;decode 6\n"
        "[worker-2 tid=8];run;read;merge 2\n"
        "[worker-2 tid=8];run;json 2\n"
        "[io tid=9];loop;epoll 10\n"
    )
    groups = by_thread_frames(collapsed, groups=2, n=3)
    assert [(g, share) for g, share, _ in groups] == [("worker-#", 0.5), ("io", 0.5)]
    # run is on every worker stack: left out; read on 8 of 10 (80%): left out too
    assert groups[0][2] == [(0.3, "decode"), (0.1, "merge"), (0.1, "json")]
    assert groups[1][2] == []  # every io frame is on all of its stacks


def test_an_unknown_operation_is_refused_naming_every_one_it_can_profile():
    import pytest
    from tally_bench.profile import profile

    with pytest.raises(RuntimeError) as refused:
        profile(None, print, "flink-taskmanager", "nope")
    assert "idle, timeseries_drain, counters_drain, addcount_eventual" in str(refused.value)
