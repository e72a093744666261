"""Which state a redeployed job restores from, and which checkpoint folders may go."""

import json
import os

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
