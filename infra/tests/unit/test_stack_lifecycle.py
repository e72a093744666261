"""The launcher's lifecycle rules, with small real processes standing in for servers."""

import socket
import sys

import pytest
from tally import process
from tally.components.base import Component
from tally.settings import Settings
from tally.stack import Stack, StackError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer(Component):
    """A real listener (python -m http.server) on its own port."""

    version = "test"

    def __init__(self, settings, name, port, depends=()):
        super().__init__(settings, log=lambda *_: None)
        self.name, self._port, self.depends = name, port, depends
        self.ready_timeout = 15

    def ports(self):
        return {"http": self._port}

    def command(self):
        return [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(self._port)], self.env()


class Broken(HttpServer):
    def command(self):
        return [
            sys.executable,
            "-c",
            "import sys; print('cannot open data dir: permission denied'); sys.exit(3)",
        ], self.env()


@pytest.fixture
def settings(tmp_path):
    return Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_COMPONENT_CGROUPS": "off"})


@pytest.fixture
def stacks(settings):
    made = []

    def make(components):
        st = Stack(settings, log=lambda *_: None, components=components)
        made.append(st)
        return st

    yield make
    for st in made:
        st.down()


def test_up_starts_in_order_and_a_second_up_is_a_no_op(settings, stacks):
    a, b = HttpServer(settings, "a", free_port()), HttpServer(settings, "b", free_port(), depends=("a",))
    st = stacks([a, b])
    assert st.up() == ["a", "b"]
    pids = {c.name: st.state.ref(c.name).pid for c in (a, b)}
    assert st.up() == []
    assert {c.name: st.state.ref(c.name).pid for c in (a, b)} == pids
    assert [r.health for r in st.status()] == ["healthy", "healthy"]


def test_a_busy_port_names_port_and_component_and_starts_nothing(settings, stacks):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        busy = blocker.getsockname()[1]
        a, b = HttpServer(settings, "a", free_port()), HttpServer(settings, "b", busy)
        st = stacks([a, b])
        with pytest.raises(StackError, match=f"port {busy} \\(b http\\) is already in use"):
            st.up()
        assert not st.running(a) and not st.running(b)


def test_a_port_configured_twice_is_reported(settings, stacks):
    port = free_port()
    st = stacks([HttpServer(settings, "a", port), HttpServer(settings, "b", port)])
    with pytest.raises(StackError, match=f"port {port} is configured for both a and b"):
        st.up()


def test_a_failed_start_rolls_back_and_status_and_logs_say_why(settings, stacks):
    a, bad = HttpServer(settings, "a", free_port()), Broken(settings, "bad", free_port())
    st = stacks([a, bad])
    with pytest.raises(StackError, match="bad failed to start"):
        st.up()
    assert not st.running(a), "what this up started is stopped again"
    health = {r.name: r.health for r in st.status()}
    assert health == {"a": "stopped", "bad": "failed"}
    assert "exited during start-up" in st.state.components["bad"]["error"]
    assert "permission denied" in bad.log_file.read_text()


def test_a_crashed_component_is_restarted_by_up(settings, stacks):
    a = HttpServer(settings, "a", free_port())
    st = stacks([a])
    st.up()
    ref = st.state.ref("a")
    process.os.kill(ref.pid, 9)
    process.wait_until("dead", lambda: not process.alive(ref), 5, lambda: True, interval=0.05)
    assert [r.health for r in st.status()] == ["crashed"]
    assert st.up() == ["a"]
    assert st.state.ref("a").pid != ref.pid


def test_a_component_whose_build_changed_is_restarted_by_up_and_only_it(settings, stacks):
    class Rebuilt(HttpServer):
        changed = False

        def stale(self):
            return self.changed

    a, b = Rebuilt(settings, "a", free_port()), HttpServer(settings, "b", free_port())
    st = stacks([a, b])
    st.up()
    before = {n: st.state.ref(n).pid for n in ("a", "b")}
    a.changed = True
    assert st.up() == ["a"]
    assert st.state.ref("a").pid != before["a"] and st.state.ref("b").pid == before["b"]


def test_a_java_service_runs_a_private_copy_of_its_jar(settings, tmp_path, monkeypatch):
    from tally.components import java_service

    built = tmp_path / "svc.jar"
    built.write_bytes(b"v1")
    svc = java_service.JavaService(settings, log=lambda *_: None)
    svc.name = "svc"
    monkeypatch.setattr(svc, "jar", lambda: built)
    svc.before_start()  # the copy is made just before a start, never while it runs
    argv, _ = svc.command()
    assert argv[-1] == str(svc.running_jar()) and svc.running_jar().read_bytes() == b"v1"
    assert not svc.stale()
    built.write_bytes(b"v2")  # a rebuild: the running copy is untouched, and up will restart it
    assert svc.stale() and svc.running_jar().read_bytes() == b"v1"


def test_down_with_nothing_running_is_a_no_op(settings, stacks):
    st = stacks([HttpServer(settings, "a", free_port())])
    assert st.down() == []
    assert st.down(wipe=True) == []


def test_down_wipe_removes_data_but_keeps_downloads(settings, stacks):
    (settings.home / "data" / "x").mkdir(parents=True)
    (settings.home / "dist" / "kafka").mkdir(parents=True)
    st = stacks([HttpServer(settings, "a", free_port())])
    st.up()
    assert st.down(wipe=True) == ["a"]
    assert not (settings.home / "data").exists()
    assert (settings.home / "dist" / "kafka").exists()


def test_default_stack_binds_every_port_to_the_configured_host_and_has_no_duplicates():
    s = Settings.load({})
    st = Stack(s, log=lambda *_: None)
    ports = [p for c in st.components for p in c.ports().values()]
    assert len(ports) == len(set(ports))
    names = [c.name for c in st.components]
    for c in st.components:
        for dep in c.depends:
            assert names.index(dep) < names.index(c.name), f"{c.name} starts before {dep}"
    assert names[-1] == "prometheus"
    assert set(st.components[-1].targets) >= {
        "kafka",
        "cassandra",
        "flink-jobmanager",
        "flink-taskmanager",
        "connect",
        "elasticsearch-exporter",
        "postgres-exporter",
    }


def test_a_java_service_is_stale_when_the_settings_it_runs_with_change(tmp_path, monkeypatch):
    """A new password or address restarts the gateway as a new build does (only a digest is kept)."""
    from tally import privileges
    from tally.components.gateway import Gateway

    monkeypatch.setattr(privileges, "is_root", lambda: False)
    from tally.settings import Settings

    def digest(**settings):
        s = Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_COMPONENT_CGROUPS": "off", **settings})
        gw = Gateway(s, log=lambda *_: None)
        return Stack(s, log=lambda *_: None, components=[gw]).launch_digest(gw, *gw.command())

    assert Gateway.restart_on_change
    before, same, other = digest(), digest(), digest(TALLY_CASSANDRA_PASSWORD="rotated")
    assert before == same and before != other and "rotated" not in other


class Configured(HttpServer):
    """A server whose start depends on a value Tally passes in its environment and a config file."""

    restart_on_change = True

    def __init__(self, settings, name, port):
        super().__init__(settings, name, port)
        self.value, self.conf_text = "1", "a: 1\n"

    def configure(self):
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        (self.conf_dir / "server.yaml").write_text(self.conf_text)

    def command(self):
        argv, _ = super().command()
        return argv, self.env(TALLY_TEST_VALUE=self.value)


def test_up_restarts_a_server_whose_settings_or_config_changed_and_only_then(settings, stacks):
    c, plain = Configured(settings, "c", free_port()), HttpServer(settings, "p", free_port())
    st = stacks([c, plain])
    st.up()
    first, plain_pid = st.state.ref("c").pid, st.state.ref("p").pid
    assert st.up() == [] and st.state.ref("c").pid == first  # nothing changed: kept
    c.value = "2"
    assert st.up() == ["c"] and st.state.ref("c").pid != first
    second = st.state.ref("c").pid
    c.conf_text = "a: 2\n"
    assert st.up() == ["c"] and st.state.ref("c").pid != second
    assert st.state.ref("p").pid == plain_pid  # a server that does not restart on change is left alone
    # only a digest is kept in the state, never the values Tally passed
    kept = st.state.path.read_text()
    assert "launch_digest" in kept and "TALLY_TEST_VALUE" not in kept


class WaitsFor(HttpServer):
    """Ready only once another server listens: with servers started one after another it never
    would be (the other is later in the order), so its readiness proves they start side by side."""

    def __init__(self, settings, name, port, other: HttpServer):
        super().__init__(settings, name, port)
        self.other = other
        self.ready_timeout = 20

    def ready(self):
        return super().ready() and process.tcp_open("127.0.0.1", self.other._port)


def test_servers_that_need_nothing_of_each_other_start_side_by_side(settings, stacks):
    b = HttpServer(settings, "b", free_port())
    a = WaitsFor(settings, "a", free_port(), other=b)
    st = stacks([a, b])
    assert sorted(st.up()) == ["a", "b"]


def test_one_at_a_time_starts_in_the_components_order(settings):
    settings.values["TALLY_UP_PARALLEL"] = "1"
    b = HttpServer(settings, "b", free_port())
    a = WaitsFor(settings, "a", free_port(), other=b)
    a.ready_timeout = 2
    st = Stack(settings, log=lambda *_: None, components=[a, b])
    try:
        with pytest.raises(StackError, match="a failed to start"):
            st.up()
        assert not st.running(b), "nothing starts after a failure"
    finally:
        st.down()


class SeesItsNeeds(HttpServer):
    """Fails to start unless every server it needs already listens."""

    def before_start(self):
        for n in self.stack.needs(self):
            if not process.tcp_open("127.0.0.1", n._port):
                raise RuntimeError(f"{n.name} was not listening")


def test_a_server_starts_only_after_every_instance_of_each_kind_it_depends_on(settings, stacks):
    class Node(HttpServer):
        metrics_job = "k"

    k1, k2 = Node(settings, "k", free_port()), Node(settings, "k-2", free_port())
    user = SeesItsNeeds(settings, "user", free_port(), depends=("k",))
    st = stacks([user, k1, k2])  # listed first: the order is the dependencies', not the list's
    user.stack = st
    assert [n.name for n in st.needs(user)] == ["k", "k-2"]
    st.up()
    assert all(st.running(c) for c in (user, k1, k2))


def test_nodes_that_join_one_at_a_time_wait_for_the_node_before_them(settings, stacks):
    class Ring(SeesItsNeeds):
        metrics_job = "ring"
        joins_one_at_a_time = True

        def __init__(self, settings, node):
            super().__init__(settings, "ring" if node == 1 else f"ring-{node}", free_port())
            self.node = node

    nodes = [Ring(settings, i) for i in (1, 2, 3)]
    st = stacks(list(reversed(nodes)))
    for n in nodes:
        n.stack = st
    assert [[x.name for x in st.needs(n)] for n in nodes] == [[], ["ring"], ["ring-2"]]
    st.up()
    assert all(st.running(n) for n in nodes)


def test_a_generated_secret_made_by_many_at_once_is_one_secret(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "secrets" / "s"
    with ThreadPoolExecutor(8) as pool:
        got = set(pool.map(lambda _: Settings.generated_secret(path), range(32)))
    assert len(got) == 1 and got == {path.read_text().strip()}
    assert [p.name for p in path.parent.iterdir()] == ["s"], "no temporary file is left"


def test_a_failed_start_names_the_last_lines_of_the_servers_log(tmp_path):
    from tally.stack import last_lines

    log = tmp_path / "cassandra-2.log"
    log.write_text("".join(f"INFO line {n}\n" for n in range(10)) + "\n" + "x" * 500 + "\n")
    tail = last_lines(log, n=2, width=20)
    assert tail == "\n   | INFO line 9\n   | " + "x" * 20
    assert last_lines(tmp_path / "missing.log") == ""


class PipelineServer(HttpServer):
    background_cpu = True


def nice_settings(tmp_path, nice: str) -> Settings:
    return Settings.load(
        {"TALLY_HOME": str(tmp_path), "TALLY_COMPONENT_CGROUPS": "off", "TALLY_BACKGROUND_CPU_NICE": nice}
    )


def test_a_pipeline_server_steps_back_once_ready_and_a_request_path_server_does_not(tmp_path):
    s = nice_settings(tmp_path, "6")
    st = Stack(
        s, log=lambda *_: None, components=[PipelineServer(s, "job", free_port()), HttpServer(s, "gw", free_port())]
    )
    try:
        st.up()
        assert process.nice_of(st.state.ref("job").pid)[0] == 6
        assert process.nice_of(st.state.ref("gw").pid)[0] == 0
    finally:
        st.down()


def test_a_nice_that_would_put_the_pipeline_first_is_refused_before_it_starts(tmp_path):
    s = nice_settings(tmp_path, "-5")
    st = Stack(s, log=lambda *_: None, components=[PipelineServer(s, "job", free_port())])
    try:
        with pytest.raises(StackError, match="TALLY_BACKGROUND_CPU_NICE=-5 is not in 0-19"):
            st.up()
        assert st.state.ref("job") is None
    finally:
        st.down()
