"""Jobs on the session cluster: which state a redeployed job restores from, which checkpoint
folders may go, and the parallelism each runs at."""

import json
import os

import pytest
from tally.jobs import Jobs
from tally.settings import Settings


def jobs_at(tmp_path) -> Jobs:
    return Jobs(Settings.load({"TALLY_HOME": str(tmp_path)}), log=lambda *_: None)


def checkpoint(j: Jobs, job_id: str, n: int, mtime: float, complete: bool = True):
    chk = j.checkpoints / job_id / f"chk-{n}"
    chk.mkdir(parents=True)
    if complete:
        (chk / "_metadata").write_bytes(b"m")
        os.utime(chk / "_metadata", (mtime, mtime))
    return chk


def test_nothing_to_restore_from_before_a_first_deployment(tmp_path):
    assert jobs_at(tmp_path).restore_point("tally-counter-rollup") is None


def test_the_newest_complete_checkpoint_of_the_last_deployment_wins(tmp_path):
    j = jobs_at(tmp_path)
    j.job_ids.write_text(json.dumps({"tally-counter-rollup": ["old", "last"]}))
    checkpoint(j, "old", 9, mtime=3000)  # an earlier deployment's state is never taken
    checkpoint(j, "last", 4, mtime=1000)
    newest = checkpoint(j, "last", 5, mtime=2000)
    checkpoint(j, "last", 6, mtime=2500, complete=False)  # being written when the cluster died
    assert j.restore_point("tally-counter-rollup") == str(newest)


def test_a_savepoint_newer_than_the_checkpoints_wins(tmp_path):
    j = jobs_at(tmp_path)
    j.job_ids.write_text(json.dumps({"tally-counter-rollup": ["last"]}))
    checkpoint(j, "last", 4, mtime=1000)
    sp = tmp_path / "savepoint-1"
    sp.mkdir()
    (sp / "_metadata").write_bytes(b"m")
    os.utime(sp / "_metadata", (1500, 1500))
    j.savepoints.write_text(json.dumps({"tally-counter-rollup": f"file:{sp}"}))
    assert j.restore_point("tally-counter-rollup") == f"file:{sp}"
    os.utime(sp / "_metadata", (500, 500))
    assert j.restore_point("tally-counter-rollup").endswith("chk-4")


def test_earlier_deployments_are_pruned_only_once_the_current_one_has_a_checkpoint(tmp_path):
    j = jobs_at(tmp_path)
    j.job_ids.write_text(json.dumps({"tally-counter-rollup": ["a", "b"], "tally-timeseries-writer": ["w"]}))
    checkpoint(j, "a", 1, mtime=1000)
    checkpoint(j, "w", 1, mtime=1000)
    j.prune_checkpoints("tally-counter-rollup")
    assert (j.checkpoints / "a").exists(), "b has no checkpoint yet: a is still the only state"
    checkpoint(j, "b", 1, mtime=2000)
    j.prune_checkpoints("tally-counter-rollup")
    assert not (j.checkpoints / "a").exists()
    assert (j.checkpoints / "b").exists() and (j.checkpoints / "w").exists()
    assert json.loads(j.job_ids.read_text())["tally-counter-rollup"] == ["b"]


def test_auto_parallelism_shares_the_slots_among_the_jobs(tmp_path):
    from tally.jobs import default_parallelism

    def at(**env):
        return default_parallelism(Settings.load({"TALLY_HOME": str(tmp_path), **env}))

    assert at(TALLY_FLINK_TASK_SLOTS="4", TALLY_FLINK_PARALLELISM="auto") == 1
    assert at(TALLY_FLINK_TASK_SLOTS="6", TALLY_FLINK_PARALLELISM="auto") == 2
    assert at(TALLY_FLINK_TASK_SLOTS="2", TALLY_FLINK_PARALLELISM="auto") == 1  # never 0
    assert at(TALLY_FLINK_TASK_SLOTS="4", TALLY_FLINK_PARALLELISM="3") == 3
    for bad in ("5", "0", "two"):
        with pytest.raises(ValueError, match="TALLY_FLINK_PARALLELISM"):
            at(TALLY_FLINK_TASK_SLOTS="4", TALLY_FLINK_PARALLELISM=bad)


def test_a_rescaled_job_keeps_its_parallelism_and_others_take_the_setting(tmp_path):
    j = jobs_at(tmp_path)
    j.scale.write_text(json.dumps({"tally-counter-rollup": 2}))
    assert j.parallelism_of("tally-counter-rollup") == 2
    assert j.parallelism_of("tally-timeseries-writer") == 1


def deployments_of(j: Jobs, monkeypatch) -> list[tuple]:
    """ensure_deployed with the cluster running no job: what it deploys (job, from, backend)."""
    calls = []
    monkeypatch.setattr(j, "running", lambda name: None)
    monkeypatch.setattr(j, "prune_checkpoints", lambda name: None)
    monkeypatch.setattr(
        j, "deploy", lambda spec, restore=None, backend=None: calls.append((spec.name, restore, backend))
    )
    monkeypatch.setattr(
        j, "deploy_all", lambda runs, backend=None: [calls.append((s.name, r, backend)) for s, r in runs]
    )
    monkeypatch.setattr(j, "stop_with_savepoint", lambda name: calls.append((name, "stopped")) or "file:/sp/canonical")
    j.ensure_deployed()
    return [c for c in calls if c[0] == "tally-counter-rollup"]


def test_a_checkpoint_of_another_state_backend_is_moved_across_through_a_savepoint(tmp_path, monkeypatch):
    j = jobs_at(tmp_path)
    assert j.backend() == "hashmap"
    j.job_ids.write_text(json.dumps({"tally-counter-rollup": ["last"]}))
    chk = checkpoint(j, "last", 4, mtime=1000)
    # a deployment recorded before the setting existed ran on RocksDB: its native checkpoint
    # restores only there, so the job runs once on RocksDB from it and stops with a savepoint
    assert deployments_of(j, monkeypatch) == [
        ("tally-counter-rollup", str(chk), "rocksdb"),
        ("tally-counter-rollup", "stopped"),
        ("tally-counter-rollup", "file:/sp/canonical", None),
    ]


def test_a_checkpoint_of_the_same_state_backend_restores_directly(tmp_path, monkeypatch):
    j = jobs_at(tmp_path)
    j.job_ids.write_text(json.dumps({"tally-counter-rollup": ["last"]}))
    j.backends.write_text(json.dumps({"last": "hashmap"}))
    chk = checkpoint(j, "last", 4, mtime=1000)
    assert deployments_of(j, monkeypatch) == [("tally-counter-rollup", str(chk), None)]


def test_the_state_backend_setting_is_checked(tmp_path):
    j = Jobs(Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_FLINK_STATE_BACKEND": "memory"}), log=lambda *_: None)
    with pytest.raises(ValueError, match="TALLY_FLINK_STATE_BACKEND='memory'"):
        j.backend()


def test_the_jobs_kafka_security_arguments_carry_a_password_file_never_a_password(tmp_path):
    from tally.jobs import JOBS, kafka_security_args

    plain = Settings.load({"TALLY_HOME": str(tmp_path)})
    assert kafka_security_args(plain) == []
    assert "--kafka.security.protocol" not in JOBS[0].args(plain)
    sasl = {
        "TALLY_HOME": str(tmp_path),
        "TALLY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
        "TALLY_KAFKA_SASL_USERNAME": "tally",
        "TALLY_KAFKA_SASL_PASSWORD": "s3cret",
    }
    with pytest.raises(ValueError, match="TALLY_KAFKA_SASL_PASSWORD_FILE"):
        kafka_security_args(Settings.load(sasl))
    args = JOBS[1].args(Settings.load({**sasl, "TALLY_KAFKA_SASL_PASSWORD_FILE": "/run/secrets/kafka"}))
    at = args.index("--kafka.sasl.password.file")
    assert args[at + 1] == "/run/secrets/kafka" and "s3cret" not in args
    assert args[args.index("--kafka.security.protocol") + 1] == "SASL_SSL"


def test_the_jobs_cassandra_login_is_a_password_file_never_a_password(tmp_path):
    from tally.jobs import JOBS, cassandra_security_args

    no_login = Settings.load({"TALLY_HOME": str(tmp_path)})
    no_login.values["TALLY_CASSANDRA_USERNAME"] = ""  # a cluster without authentication
    assert cassandra_security_args(no_login) == []
    login = {"TALLY_HOME": str(tmp_path), "TALLY_CASSANDRA_USERNAME": "tally", "TALLY_CASSANDRA_PASSWORD": "s3cret"}
    with pytest.raises(ValueError, match="TALLY_CASSANDRA_PASSWORD_FILE"):
        cassandra_security_args(Settings.load(login))
    s = Settings.load(
        {**login, "TALLY_CASSANDRA_PASSWORD_FILE": "/run/secrets/cassandra", "TALLY_CASSANDRA_SSL": "true"}
    )
    args = JOBS[0].args(s)
    assert args[args.index("--cassandra.password.file") + 1] == "/run/secrets/cassandra" and "s3cret" not in args
    assert args[args.index("--cassandra.ssl") + 1] == "true"
    assert "--cassandra.username" not in JOBS[2].args(s), "the noisy-neighbor job has no Cassandra"
