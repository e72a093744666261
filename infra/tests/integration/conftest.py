"""Integration tests run against the stack that ./tally up started (./tally test starts it)."""
import pytest

from tally.settings import Settings
from tally.stack import Stack


@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings.load()


@pytest.fixture(scope="session")
def stack(settings) -> Stack:
    stack = Stack(settings, log=lambda *_: None)
    down = [c.name for c in stack.components if not stack.healthy(c)]
    if down:
        pytest.fail(f"the stack is not healthy ({', '.join(down)}): run ./tally up first")
    return stack


@pytest.fixture(scope="session")
def host(settings) -> str:
    return settings.host
