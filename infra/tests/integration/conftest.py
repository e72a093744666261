"""Integration tests run against the stack that ./tally up started (./tally test starts it)."""

import re
import time

import pytest
import requests
from cassandra.cluster import Cluster
from tally.settings import Settings
from tally.stack import Stack


@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings.load()


@pytest.fixture(scope="session")
def stack(settings) -> Stack:
    stack = Stack(settings, log=lambda *_: None)
    # a probe may time out on a box still busy with the stack's start (JIT, the jobs' restore)
    deadline = time.monotonic() + 60
    down = [c for c in stack.components if not stack.healthy(c)]
    while down and time.monotonic() < deadline:
        time.sleep(2)
        down = [c for c in down if not stack.healthy(c)]
    down = [c.name for c in down]
    if down:
        pytest.fail(f"the stack is not healthy ({', '.join(down)}): run ./tally up first")
    return stack


#: the names tests give the namespaces they make (it_<what>_<random hex>[_<n>]); the seeds
#: (it_counters, bench_*, fz_*) do not match
TEST_MADE_NAMESPACE = re.compile(r"^it_[a-z_]+_[0-9a-f]{6,8}(_[0-9]+)?$")


def sweep_test_namespaces(settings, gateway_url: str) -> None:
    """Deletes every namespace a test made and left (a failed or interrupted test). Not only tidy:
    a left namespace of one-minute slices (the retention test's) makes and drops a table every
    minute, and each drop makes Cassandra flush every table (docs/performance-log.md)."""
    headers = settings.admin_headers()
    try:
        listed = requests.get(f"{gateway_url}/v1/namespaces", headers=headers, timeout=10)
        listed.raise_for_status()
        for n in listed.json()["namespaces"]:
            if TEST_MADE_NAMESPACE.match(n["name"]):
                requests.delete(f"{gateway_url}/v1/namespaces/{n['name']}", headers=headers, timeout=10)
    except requests.RequestException:
        pass  # a gateway down at the end (a disruptive test) is that test's failure, not this one's


@pytest.fixture(scope="session", autouse=True)
def no_test_namespace_left(settings, stack):
    """Test-made namespaces are deleted before the session (an earlier, interrupted one's) and after it."""
    gateway_url = stack.component("gateway").url()
    sweep_test_namespaces(settings, gateway_url)
    yield
    sweep_test_namespaces(settings, gateway_url)


@pytest.fixture(scope="session")
def host(settings) -> str:
    return settings.host


@pytest.fixture(scope="module")
def gw(stack) -> str:
    """The gateway's base URL."""
    return stack.component("gateway").url()


@pytest.fixture(scope="module")
def jobs(stack, settings):
    """Tally's jobs, deployed (a module may override it with its own)."""
    from tally.jobs import Jobs

    j = Jobs(settings, log=lambda *_: None)
    j.ensure_deployed()
    return j


@pytest.fixture(scope="module")
def cql(settings):
    """A CQL session on the stack's Cassandra (one per module: a module may restart Cassandra),
    reading at the stack's consistency level: on three nodes LOCAL_QUORUM, since a node that was
    down misses writes until hints replay, and a read at ONE could ask just that node."""
    from cassandra import ConsistencyLevel
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile

    level = getattr(ConsistencyLevel, settings.get("TALLY_CASSANDRA_CONSISTENCY"))
    cluster = Cluster(
        [settings.host],
        port=settings.port("TALLY_CASSANDRA_PORT"),
        execution_profiles={EXEC_PROFILE_DEFAULT: ExecutionProfile(consistency_level=level)},
        **settings.cassandra_connect_args(),
    )
    yield cluster.connect()
    cluster.shutdown()


def pytest_configure(config):
    config.addinivalue_line("markers", "disruptive: stops or restarts a server of the stack; runs last")


def pytest_collection_modifyitems(session, config, items):
    """Tests that stop servers run after all others, so a slow recovery cannot fail them."""
    items.sort(key=lambda item: item.get_closest_marker("disruptive") is not None)


@pytest.fixture(scope="session")
def wait_healthy(stack):
    def wait(timeout=120):
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            bad = [c.name for c in stack.components if not stack.healthy(c)]
            if not bad:
                return
            time.sleep(1)
        pytest.fail(f"the stack did not recover: {bad}")

    return wait
