import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pytest_configure(config):
    # authlib 1.9 (under confluent-kafka's registry client) deprecates its httpx module at every
    # import; nothing of Tally's uses it (tally/__init__.py says the same for the CLI)
    config.addinivalue_line("filterwarnings", "ignore:The httpx module is deprecated")
