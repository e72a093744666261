import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))  # the benchmark harness, tally_bench


def pytest_configure(config):
    # pytest resets the warning filters for each test, so the CLI's filter (tally/__init__.py)
    # does not reach them
    from tally import AUTHLIB_HTTPX_WARNING

    config.addinivalue_line("filterwarnings", f"ignore:{AUTHLIB_HTTPX_WARNING}")
