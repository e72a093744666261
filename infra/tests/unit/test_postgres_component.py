"""The Postgres component's pure pieces: a stale postmaster.pid after a crash."""

import os

from tally.components.postgres import stale_pid_file


def test_a_pid_file_of_a_dead_postmaster_is_removed(tmp_path):
    f = tmp_path / "postmaster.pid"
    f.write_text(f"{os.getpid()}\n/data\n")  # this PID is alive but is not postgres (python)
    stale_pid_file(f)
    assert not f.exists()


def test_garbage_in_the_pid_file_is_removed_and_no_file_is_fine(tmp_path):
    f = tmp_path / "postmaster.pid"
    f.write_text("not a pid\n")
    stale_pid_file(f)
    assert not f.exists()
    stale_pid_file(f)  # nothing there: nothing to do
