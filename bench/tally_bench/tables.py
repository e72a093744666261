"""The docs' tables, made from the reports under bench/out/ (generated, never typed): the
benchmarks' in docs/benchmarks.md, the three-node suite's in docs/deploying.md, the goals' in the
README too."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from tally.settings import REPO

from . import host, staleness

BENCHMARKS_PAGE = REPO / "docs" / "benchmarks.md"
DEPLOYING_PAGE = REPO / "docs" / "deploying.md"
README = REPO / "README.md"
# each between <!-- table: bench/out/<name>.json --> and <!-- /table -->
TABLES = (
    "cost",
    "getcount",
    "transport",
    "reads",
    "addcount",
    "linger",
    "gateway",
    "timeseries",
    "counters",
    "runq",
    "control",
    "registry",
    "lifecycle",
)
# the page each report's table is on (a report's module is its name with - as _)
PAGES = {BENCHMARKS_PAGE: TABLES, DEPLOYING_PAGE: ("three-nodes",), README: ()}  # README: the goals only
# the reports `./tally bench all` makes before writing the tables (control and registry are quick
# and their own commands)
RUN_BY_ALL = ("cost", "getcount", "reads", "addcount", "gateway", "timeseries", "counters", "runq")


def write(out: Path, say=print) -> int:
    """Writes every page's tables from the reports."""
    for page, names in PAGES.items():
        page.write_text(render(page.read_text(), out, say, names))
    return 0


def render(text: str, out: Path, say=lambda *_: None, names: tuple[str, ...] = TABLES) -> str:
    """The page with each table between its markers made anew from its report (a test holds the
    committed pages to this)."""
    for name in names:
        table = importlib.import_module(f".{name.replace('-', '_')}", __package__).table
        start, end = f"<!-- table: bench/out/{name}.json -->", "<!-- /table -->"
        report = out / f"{name}.json"
        if not report.exists() or start not in text:
            continue
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        result = json.loads(report.read_text())
        notes = [n for n in (host.line(result), staleness.note(name, result)) if n]
        text = head + start + "\n" + table(result) + "".join("\n\n" + n for n in notes) + "\n" + end + tail
        say(f"docs: {name} table from {report}")
    from .goals import table as goals

    start = "<!-- table: bench/out/*.json (goals) -->"
    if start in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split("<!-- /table -->", 1)
        text = head + start + "\n" + goals(out) + "\n<!-- /table -->" + tail
        say("docs: the goals table from bench/out/*.json")
    return text
