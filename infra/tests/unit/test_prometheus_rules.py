"""The stack's Prometheus alerting rules, checked and unit-tested by promtool (Debian's
prometheus package, which ./tally up installs), and loaded by the config ./tally up writes."""

import shutil
import subprocess

import pytest
import yaml
from tally.components.prometheus import RULE_FILES, RULES, render_config


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool comes with the prometheus package")
@pytest.mark.parametrize("name", RULE_FILES)
def test_each_rule_file_passes_its_promtool_test(name):
    check = subprocess.run(["promtool", "check", "rules", str(RULES / name)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    test = RULES / name.replace(".yml", ".test.yml")
    run = subprocess.run(["promtool", "test", "rules", str(test)], capture_output=True, text=True, cwd=RULES)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_rendered_config_loads_the_rules():
    cfg = yaml.safe_load(render_config({"kafka": ["127.0.0.1:9404"]}, ["/x/rules/noisy-neighbor.yml"]))
    assert cfg["rule_files"] == ["/x/rules/noisy-neighbor.yml"]
    assert cfg["scrape_configs"][0]["job_name"] == "kafka"
