"""Where a measured figure comes from: the commit the work tree was at when it was measured
(benchmark reports and the three-node suite's report carry it, and the docs' tables cite it)."""

from __future__ import annotations

import subprocess
import time

from .settings import REPO


def commit() -> str:
    """HEAD, with "+changes" when tracked files differed from it (the figure measured uncommitted
    code); the reports and plots under bench/out/ do not count (a benchmark writes its plot, and
    one benchmark after another the earlier ones' reports, before a report records its commit)."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench/out"],
        cwd=REPO,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return (head or "unknown") + ("+changes" if dirty else "")


def stamp(report: dict) -> dict:
    """The report with when and at which commit it was measured."""
    report["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report["commit"] = commit()
    return report
