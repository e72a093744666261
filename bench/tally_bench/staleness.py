"""Whether a report is older than the code it measures: the files each benchmark's figures depend
on, and which of them changed (committed or not) since the commit the report was measured at.
The docs' tables say so beside a stale report's figures, so a figure is never cited for code it
did not measure (issue 27: "a figure whose source report is older than the code it measures says
so"). A change that alters no behaviour (a comment) counts too: git cannot tell, the reader can,
from the files listed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tally.provenance import base
from tally.settings import REPO

#: what every server of the stack runs: shared code, schemas, the launcher's server configs and
#: settings, the control plane's and Cassandra's seed files, the seeded namespaces
STACK = (
    "common/src/main",
    "model/src/main",
    "schemas",
    "infra/tally/components",
    "infra/tally.env",
    "infra/tally/jobs.py",
    "infra/cassandra",
    "infra/connect",
    "infra/postgres",
    "infra/namespaces",
)
GATEWAY = ("gateway/src/main",)
JOBS = ("jobs/src/main",)
RUNQ = ("connectors/runq-exporter",)
#: the benchmarks' Java tools: producers and the Cassandra ceiling; the transport's floor servers
TOOLS = ("bench/src/main/java/io/tally/bench/jobs", "bench/src/main/java/io/tally/bench/probe")
FLOORS = ("bench/src/main/java/io/tally/bench/http", "bench/vertx5-floor")


def _bench(name: str) -> tuple[str, ...]:
    return (f"bench/tally_bench/{name.replace('-', '_')}.py",)


#: each report's inputs: the code its figures measure and the benchmark that measures it
MEASURES: dict[str, tuple[str, ...]] = {
    # the whole stack's CPU, idle included (the runq exporter is part of the idle stack)
    "cost": STACK + GATEWAY + JOBS + RUNQ + TOOLS + FLOORS + _bench("cost") + _bench("floors"),
    "getcount": STACK + GATEWAY + JOBS + _bench("getcount"),
    "transport": STACK + GATEWAY + FLOORS + _bench("transport") + _bench("floors"),
    "reads": STACK + GATEWAY + JOBS + TOOLS + _bench("reads"),
    "addcount": STACK + GATEWAY + JOBS + _bench("addcount"),
    # Kafka's own producer against the broker: the broker's config is all of Tally it measures
    "linger": ("infra/tally/components/kafka.py", "infra/tally.env") + _bench("linger"),
    "gateway": STACK + GATEWAY + JOBS + _bench("gateway"),
    "timeseries": STACK + JOBS + TOOLS + _bench("timeseries"),
    "counters": STACK + JOBS + TOOLS + _bench("counters"),
    "runq": RUNQ + ("infra/tally/components/runq_exporter.py",) + _bench("runq"),
    "control": STACK + GATEWAY + JOBS + _bench("control"),
    "registry": ("schemas/registry", "schemas/serde", "infra/tally/components/registry.py")
    + ("bench/src/main/java/io/tally/bench/registry",)
    + _bench("registry"),
    "lifecycle": STACK + JOBS + _bench("lifecycle"),
    "three-nodes": STACK + GATEWAY + JOBS + ("infra/tests/integration/test_three_nodes.py",),
}


#: the command that measures a report anew
RERUN = {"three-nodes": "./tally test --nodes 3"}


def base_commit(report: dict) -> str | None:
    """The commit a report was measured at, uncommitted edits on it or not."""
    return base(report.get("commit"))


def known(commit: str, repo: Path = REPO) -> bool:
    """Whether this clone holds the commit (a shallow clone may not)."""
    r = subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=repo, capture_output=True)
    return r.returncode == 0


def changed_since(name: str, report: dict, repo: Path = REPO) -> list[str] | None:
    """The files a report measures that differ now (work tree) from its commit; None when that
    cannot be told (no commit recorded, a commit this clone does not hold, a report not mapped)."""
    commit, paths = base_commit(report), MEASURES.get(name)
    if not commit or not paths:
        return None
    r = subprocess.run(  # fails, as None, on a commit this clone does not hold
        ["git", "diff", "--name-only", commit, "--", *paths, ":(exclude)*.md"], cwd=repo, capture_output=True, text=True
    )
    return sorted(r.stdout.splitlines()) if r.returncode == 0 else None


def note(name: str, report: dict, repo: Path = REPO, shown: int = 4) -> str:
    """A line for under a stale report's table ("" when the report is current or it cannot be told)."""
    files = changed_since(name, report, repo)
    if not files:
        return ""
    listed = ", ".join(f"`{f}`" for f in files[:shown]) + (
        f" and {len(files) - shown} more" if len(files) > shown else ""
    )
    commit = base_commit(report)[:7]
    return (
        f"**Older than the code it measures:** {len(files)} of the files it measures changed since `{commit}`"
        f" ({listed}); re-run `{RERUN.get(name, f'./tally bench {name}')}`."
    )
