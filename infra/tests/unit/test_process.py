import os
import socket
import sys
import time
from pathlib import Path

import pytest
from tally import process


def test_spawned_process_is_alive_until_stopped(tmp_path):
    log = tmp_path / "p.log"
    ref = process.spawn([sys.executable, "-c", "import time; print('hello', flush=True); time.sleep(60)"], log)
    assert process.alive(ref)
    assert process.stop(ref, timeout=5)
    assert not process.alive(ref)
    assert "starting:" in log.read_text()
    # reaped: a launcher that spawned it leaves no zombie (which would keep its cgroup busy)
    assert not Path(f"/proc/{ref.pid}").exists()


def test_a_recycled_pid_is_not_our_process(tmp_path):
    ref = process.spawn(["sleep", "30"], tmp_path / "s.log")
    try:
        other = process.ProcessRef(ref.pid, ref.start_ticks + 1)
        assert not process.alive(other)
        assert not process.stop(other, timeout=1)  # never signals a process it did not start
        assert process.alive(ref)
    finally:
        process.stop(ref, timeout=5)


def test_stop_escalates_to_sigkill_when_term_is_ignored(tmp_path):
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('r', flush=True); time.sleep(60)"
    ref = process.spawn([sys.executable, "-c", code], tmp_path / "k.log")
    process.wait_until(
        "ignoring",
        lambda: "r" in (tmp_path / "k.log").read_text().splitlines()[-1],
        10,
        lambda: process.alive(ref),
        interval=0.05,
    )
    assert process.stop(ref, timeout=1)
    assert not process.alive(ref)


def test_port_free_sees_a_listener():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert not process.port_free("127.0.0.1", port)
        assert process.tcp_open("127.0.0.1", port)
    assert process.port_free("127.0.0.1", port)


def test_wait_until_fails_fast_when_the_process_died():
    import pytest

    with pytest.raises(process.NotReady, match="exited"):
        process.wait_until("x", lambda: False, 30, lambda: False)
    with pytest.raises(process.NotReady, match="not ready after"):
        process.wait_until("x", lambda: False, 0.3, lambda: True, interval=0.1)


def test_a_server_started_with_timer_slack_keeps_it_in_every_thread(tmp_path):
    # the slack survives exec and is inherited by threads made after it (a JVM's, here Python's)
    code = (
        "import threading, time, pathlib\n"
        "def show():\n"
        "    slack = pathlib.Path(f'/proc/{threading.get_native_id()}/timerslack_ns').read_text().strip()\n"
        "    print('thread', slack, flush=True)\n"
        "t = threading.Thread(target=show); t.start(); t.join(); time.sleep(30)\n"
    )
    log = tmp_path / "slack.log"
    ref = process.spawn(process.with_timer_slack([sys.executable, "-c", code], 750_000), log)
    try:
        deadline = time.monotonic() + 60  # a loaded box can take seconds to start an interpreter
        while "thread " not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "thread 750000" in log.read_text()
        assert process.timer_slack_ns(ref.pid) == 750_000
    finally:
        process.stop(ref, timeout=5)


def test_no_timer_slack_leaves_the_command_as_it_is():
    assert process.with_timer_slack(["java", "-version"], 0) == ["java", "-version"]


def test_a_server_put_in_the_background_keeps_its_nice_in_every_thread_and_its_autogroup(tmp_path):
    # set once the server runs, as the launcher does once it is ready: threads it had are set,
    # threads it starts later inherit it (a JVM's do, here Python's); the autogroup's nice is what
    # weighs against the other servers, each a session (an autogroup) of its own
    code = (
        "import os, threading, time, sys\n"
        "def show(): print('thread', os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), flush=True)\n"
        "idle = threading.Thread(target=time.sleep, args=(30,), daemon=True); idle.start()\n"
        "print('ready', flush=True)\n"
        "while not os.path.exists(sys.argv[1]): time.sleep(0.02)\n"
        "t = threading.Thread(target=show); t.start(); t.join(); time.sleep(30)\n"
    )
    log, go = tmp_path / "nice.log", tmp_path / "go"
    ref = process.spawn([sys.executable, "-c", code, str(go)], log)
    try:
        process.wait_until("sleeper", lambda: "ready" in log.read_text(), 60, lambda: process.alive(ref))
        said = process.set_background_cpu(ref.pid, 7)
        go.touch()
        deadline = time.monotonic() + 60
        while "thread " not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "thread 7" in log.read_text()  # started after: inherited
        tids = [int(t) for t in os.listdir(f"/proc/{ref.pid}/task")]
        assert {os.getpriority(os.PRIO_PROCESS, t) for t in tids} == {7}, said
        own, group = process.nice_of(ref.pid)
        assert own == 7
        if os.path.exists(f"/proc/{ref.pid}/autogroup"):
            assert group == 7 and "its autogroup and" in said, said
        else:  # a kernel without autogroups: the threads' nice only, and the log says so
            assert "not its autogroup" in said
    finally:
        process.stop(ref, timeout=5)


def test_no_server_may_be_put_before_the_others():
    for bad in (-1, 20):
        with pytest.raises(ValueError, match="0-19"):
            process.set_background_cpu(os.getpid(), bad)
