"""A report older than the code it measures is said to be so: which files changed since the commit
a report names, from a git repository made for the test."""

import subprocess
from pathlib import Path

from tally_bench import staleness


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def repo_with_a_report(tmp_path: Path) -> tuple[Path, str]:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.org")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "gateway/src/main").mkdir(parents=True)
    (tmp_path / "jobs/src/main").mkdir(parents=True)
    (tmp_path / "gateway/src/main/Api.java").write_text("class Api {}\n")
    (tmp_path / "jobs/src/main/Job.java").write_text("class Job {}\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "measured here")
    return tmp_path, git(tmp_path, "rev-parse", "HEAD")


def test_a_report_is_current_until_a_file_it_measures_changes(tmp_path):
    repo, measured_at = repo_with_a_report(tmp_path)
    report = {"commit": measured_at}
    assert staleness.changed_since("getcount", report, repo) == []
    assert staleness.note("getcount", report, repo) == ""

    (repo / "jobs/src/main/Job.java").write_text("class Job { int rows; }\n")  # uncommitted counts too
    assert staleness.changed_since("getcount", report, repo) == ["jobs/src/main/Job.java"]
    # the registry's benchmark measures neither the jobs nor the gateway
    assert staleness.changed_since("registry", report, repo) == []
    git(repo, "commit", "-qam", "a change after the report")
    note = staleness.note("getcount", report, repo)
    assert "1 of the files it measures changed since" in note and "`jobs/src/main/Job.java`" in note
    assert "./tally bench getcount" in note


def test_a_report_measured_with_uncommitted_edits_counts_from_its_base(tmp_path):
    repo, measured_at = repo_with_a_report(tmp_path)
    assert staleness.changed_since("cost", {"commit": measured_at + "+changes"}, repo) == []


def test_what_cannot_be_told_is_not_claimed(tmp_path):
    repo, _ = repo_with_a_report(tmp_path)
    assert staleness.changed_since("cost", {}, repo) is None  # no commit recorded
    assert staleness.changed_since("cost", {"commit": "0" * 40}, repo) is None  # not in this clone
    assert staleness.changed_since("no-such-report", {"commit": git(repo, "rev-parse", "HEAD")}, repo) is None


def test_every_table_on_the_pages_has_its_inputs_named():
    from tally_bench import tables

    for names in tables.PAGES.values():
        for name in names:
            assert name in staleness.MEASURES, name
