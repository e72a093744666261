"""The ./tally command itself, against the running stack."""

import os
import signal
import socket
import subprocess

from tally import process
from tally.settings import REPO
from tally.state import State


def tally(*args, env=None, timeout=600):
    return subprocess.run(
        [str(REPO / "tally"), *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def test_second_up_is_a_no_op(stack, settings):
    before = {c.name: stack.state.ref(c.name) for c in stack.components}
    r = tally("up", "--no-build")
    assert r.returncode == 0, r.stderr
    assert "already running (nothing to do)" in r.stdout
    after = State(settings.home / "state.json")
    assert {c.name: after.ref(c.name) for c in stack.components} == before


def test_status_lists_every_component_healthy(stack):
    r = tally("status")
    assert r.returncode == 0
    for c in stack.components:
        line = next(l for l in r.stdout.splitlines() if l.startswith(c.name + " "))
        assert " healthy " in line, line


def test_a_killed_component_is_restarted_by_up(stack, settings):
    name = "postgres-exporter"
    ref = stack.state.ref(name)
    os.kill(ref.pid, signal.SIGKILL)
    process.wait_until("killed", lambda: not process.alive(ref), 10, lambda: True, interval=0.1)
    r = tally("status")
    assert any(l.startswith(name) and " crashed " in l for l in r.stdout.splitlines()), r.stdout
    r = tally("up", "--no-build")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"starting {name}" in r.stdout
    new = State(settings.home / "state.json").ref(name)
    assert new.pid != ref.pid and process.alive(new)


def test_logs_shows_a_components_log(stack):
    r = tally("logs", "kafka", "-n", "500")
    assert r.returncode == 0
    assert "Kafka" in r.stdout or "kafka" in r.stdout


def test_a_busy_port_is_named_and_nothing_starts(tmp_path):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        busy = blocker.getsockname()[1]
        home = tmp_path / "home"
        r = tally("up", "--no-build", env={"TALLY_HOME": str(home), "TALLY_PROMETHEUS_PORT": str(busy)})
    assert r.returncode == 1
    assert f"port {busy} (prometheus http) is already in use" in r.stderr
    state = State(home / "state.json")
    assert all("process" not in entry for entry in state.components.values())


def test_down_with_nothing_running_is_a_no_op(tmp_path):
    r = tally("down", env={"TALLY_HOME": str(tmp_path)})
    assert r.returncode == 0
    assert "nothing was running" in r.stdout
