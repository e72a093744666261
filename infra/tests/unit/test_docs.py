"""The reference docs: every benchmark table of docs/benchmarks.md is its report's, as
`./tally bench table` makes it (generated, never typed), and every figure there names its report."""

import json
import re
from pathlib import Path

from tally_bench import tables

REPO = Path(__file__).resolve().parents[3]
OUT = REPO / "bench" / "out"


def test_each_generated_table_is_what_its_report_gives():
    from tally_bench import staleness

    # a table says whether its report is older than the code it measures, which git tells only
    # where this clone holds the report's commit (a shallow clone may not)
    commits = {p.stem: staleness.base_commit(json.loads(p.read_text())) for p in OUT.glob("*.json")}
    missing = [name for name, commit in commits.items() if commit and not staleness.known(commit)]
    if missing:
        import pytest

        pytest.skip(f"this clone lacks the commits of {', '.join(sorted(missing))} (a shallow clone?)")
    for page, names in tables.PAGES.items():
        text = page.read_text()
        assert tables.render(text, OUT, names=names) == text, f"{page.name}: run ./tally bench table"


def test_every_table_marker_names_a_report_that_exists_and_its_commit():
    for page, names in tables.PAGES.items():
        cited = re.findall(r"<!-- table: bench/out/([\w-]+)\.json -->", page.read_text())
        assert set(cited) == set(names), page.name
        for name in cited:
            report = json.loads((OUT / f"{name}.json").read_text())
            assert report.get("commit"), f"bench/out/{name}.json names no commit: measure it again"


def test_the_readme_is_a_front_door_and_links_only_to_pages_that_exist():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    assert "./tally up" in readme and "./tally test" in readme
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (REPO / link).exists(), link


def test_no_tracked_file_cites_a_document_outside_the_repository():
    import subprocess

    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    outside = re.compile(r"\.\./shared|shared (DESIGN|PLATFORM)\.md|shared/(DESIGN|PLATFORM)")
    citing = [f for f in tracked if (REPO / f).is_file() and outside.search((REPO / f).read_text(errors="ignore"))]
    assert not citing, citing
