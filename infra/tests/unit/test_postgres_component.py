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


def test_script_values_go_by_environment_not_on_the_command_line(tmp_path):
    from tally.components.postgres import Postgres
    from tally.settings import Settings

    pg = Postgres(Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_POSTGRES_PASSWORD": "superpw"}), lambda *a: None)
    argv, env = pg.client()._psql("tally_control", "postgres", None, {"pw": "s3cret-value", "user": "u1"})
    assert not any("s3cret" in a or "superpw" in a for a in argv)  # `ps` shows a command line
    assert env["TALLY_PSQL_PW"] == "s3cret-value" and env["TALLY_PSQL_USER"] == "u1"
    assert env["PGPASSWORD"] == "superpw"
