"""Where a measured figure comes from: the commit the work tree was at when it was measured
(benchmark reports and the three-node suite's report carry it, and the docs' tables cite it)."""

from __future__ import annotations

import subprocess
import time

from .settings import REPO

#: the mark of a report measured with tracked files differing from the commit it names
UNCOMMITTED = "+changes"


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
    return (head or "unknown") + (UNCOMMITTED if dirty else "")


def base(commit: str | None) -> str | None:
    """The commit a stamp names, without its uncommitted mark (None for none or "unknown")."""
    head = (commit or "").removesuffix(UNCOMMITTED)
    return head if head and head != "unknown" else None


def stamp(report: dict) -> dict:
    """The report with when and at which commit it was measured."""
    report["measured_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report["commit"] = commit()
    return report
