"""Tally on more than one of each: the jobs rescaled through savepoints while load flows
(`./tally jobs rescale`: the counter rollup 1 -> 2 -> 1, the TimeSeries writer 1 -> 2 -> 1, with
the counter generator on it_counters and TimeSeries batches written all along), two gateways
taking the same stream of requests (TALLY_GATEWAY_INSTANCES=2), and two TaskManagers of which
one is killed mid-stream (TALLY_FLINK_TASKMANAGERS=2): every count, rollup and event exact."""

import os
import threading
import time
import uuid

import pytest
import requests
from counter_load import fault_run
from support import admin_headers, kill_9, now_iso, until
from tally.jobs import Jobs
from tally.settings import Settings
from tally.stack import Stack
from test_timeseries import micros, wait_keys

ROLLUP, WRITER = "tally-counter-rollup", "tally-timeseries-writer"
ADMIN = admin_headers()


@pytest.fixture(scope="module")
def jobs(stack, settings):
    j = Jobs(settings, log=lambda *_: None)
    j.ensure_deployed()
    recorded = j.scale.read_text() if j.scale.exists() else None
    yield j
    # leave the jobs at the parallelism the stack's settings give them
    if recorded is None:
        j.scale.unlink(missing_ok=True)
    else:
        j.scale.write_text(recorded)
    j.ensure_deployed()


def vertex_parallelism(jobs: Jobs, name: str) -> dict[str, int]:
    job = jobs.running(name)
    assert job is not None, f"{name} is not running"
    return {v["name"]: v["parallelism"] for v in jobs.rest.call("GET", f"/jobs/{job['jid']}")["vertices"]}


class TimeSeriesLoad:
    """Batches of 20 events of one id through WriteEventRecordsSync every 0.2 s, each retried
    with its ids until answered 200, recording when each acknowledged batch was written. A batch
    whose retries outlast the namespace's accept window is refused (400 OUTSIDE_ACCEPT_WINDOW)
    and abandoned, as a client would: never acknowledged, its events may be stored once or not."""

    def __init__(self, gw):
        self.gw, self.tsid, self.times, self.ids = gw, f"scale-{uuid.uuid4().hex[:8]}", [], []
        self.abandoned: list[str] = []
        self.lost: list[str] = []  # what check_stored found missing
        self.stop = threading.Event()

    def _run(self):
        n = 0
        while not self.stop.is_set():
            t = now_iso()
            events = [
                {"timeSeriesId": self.tsid, "eventTime": t, "eventId": f"s{n}-{i}", "eventItems": []} for i in range(20)
            ]
            while True:
                try:
                    r = requests.post(
                        f"{self.gw}/v1/timeseries/WriteEventRecordsSync",
                        json={"namespace": "playback", "events": events},
                        timeout=15,
                    )
                    if r.status_code == 200:
                        self.times.append(micros(t))
                        self.ids += [e["eventId"] for e in events]
                        break
                    if r.status_code == 400 and r.json()["error"]["code"] == "OUTSIDE_ACCEPT_WINDOW":
                        self.abandoned += [e["eventId"] for e in events]
                        self.times.append(micros(t))  # its bucket is read too: what it stored counts
                        break
                    assert r.status_code >= 500 or r.status_code == 429, r.text
                except requests.RequestException:
                    pass
                time.sleep(0.3)
            n += 1
            time.sleep(0.2)

    def start(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def finish(self):
        self.stop.set()
        self.thread.join(60)

    def check_stored(self, cql, timeout=180) -> dict:
        """Every acknowledged event stored, none twice; an abandoned one at most once."""
        t0 = time.monotonic()
        keys, n_rows = wait_keys(cql, self.tsid, self.times, set(self.ids), timeout=timeout)
        stored = [k[1] for k in keys]
        lost = self.lost = sorted(set(self.ids) - set(stored))
        waited = round(time.monotonic() - t0, 1)
        assert lost == [], f"{len(lost)} acknowledged events not stored after {waited} s: {lost[:5]}"
        assert n_rows == len(keys), f"{n_rows - len(keys)} events stored twice"
        assert set(stored) <= set(self.ids) | set(self.abandoned), "only events that were written"
        return {
            "acknowledged": len(self.ids),
            "abandoned": len(self.abandoned),
            "abandoned_stored": len(set(stored) & set(self.abandoned)),
            "lost": len(lost),
            "doubled": n_rows - len(keys),
        }


@pytest.mark.disruptive
def test_counts_rollups_and_events_stay_exact_while_the_jobs_are_rescaled(stack, gw, cql, jobs):
    timeseries = TimeSeriesLoad(gw).start()
    seen = {}

    def rescale_both():
        jobs.rescale(ROLLUP, 2)
        seen["rollup at 2"] = vertex_parallelism(jobs, ROLLUP)
        time.sleep(3)
        jobs.rescale(ROLLUP, 1)
        jobs.rescale(WRITER, 2)
        seen["writer at 2"] = vertex_parallelism(jobs, WRITER)
        time.sleep(3)
        jobs.rescale(WRITER, 1)

    fault_run(gw, cql, rescale_both, rounds=120, pause_s=0.15)
    timeseries.finish()

    at2 = seen["rollup at 2"]
    assert at2["counter-rollup -> counter-event-log: Writer"] == 2, at2
    assert at2["counter-decode -> (durable-counters, best-effort-counters)"] == 2, at2
    heartbeats = "Source: heartbeat-ticks -> heartbeat-rounds -> heartbeats: Writer -> heartbeats: Committer"
    for one in ("Source: control-plane", heartbeats):
        assert at2[one] == 1, f"{one} stays at parallelism 1 by design: {at2}"
    assert 2 in seen["writer at 2"].values(), seen["writer at 2"]
    assert vertex_parallelism(jobs, ROLLUP)["counter-rollup -> counter-event-log: Writer"] == 1

    timeseries.check_stored(cql)


def widened(**settings) -> Stack:
    """The stack as `./tally up` makes it with these settings changed (e.g. a second gateway)."""
    return Stack(Settings.load({**os.environ, **settings}), log=lambda *_: None)


@pytest.fixture
def two_gateways(stack):
    wide = widened(TALLY_GATEWAY_INSTANCES="2")
    wide.up()  # starts gateway-2 beside the running stack and adds it to Prometheus's targets
    second = wide.component("gateway-2")
    yield [stack.component("gateway").url(), second.url()]
    wide.stop(second)
    stack.up()  # Prometheus back to the stack's own targets


def test_two_gateways_take_any_request_and_each_applies_the_control_plane(stack, cql, jobs, two_gateways):
    first, second = two_gateways
    # every instance applies control-plane changes: one made through either is applied by both
    name = f"it_two_gw_{uuid.uuid4().hex[:8]}"
    config = {
        "kind": "counter",
        "counter_type": "EVENTUAL",
        "accept_limit": "3s",
        "rollup": {"coalesce_ms": 500, "clock_skew_ms": 200},
    }
    created = requests.put(f"{first}/v1/namespaces/{name}", json=config, headers=ADMIN, timeout=10)
    assert created.status_code == 201, created.text

    def applied(gw, version):
        r = requests.get(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10)
        return r.status_code == 200 and r.json().get("applied_version") == version

    until("both gateways apply the new namespace", lambda: applied(first, 1) and applied(second, 1), 30)
    changed = requests.put(
        f"{second}/v1/namespaces/{name}",
        json={**config, "accept_limit": "4s"},
        headers={**ADMIN, "If-Match": '"1"'},
        timeout=10,
    )
    assert changed.status_code == 200, changed.text
    until("both gateways apply the change", lambda: applied(first, 2) and applied(second, 2), 30)
    assert requests.delete(f"{second}/v1/namespaces/{name}", headers=ADMIN, timeout=10).status_code == 200

    # requests spread over both, every retry and duplicate on the other one than the first try:
    # one logical event each (the job's dedup), the counts exact in both gateways' views
    gen = fault_run([first, second], cql, lambda: None, rounds=30, pause_s=0.1)
    assert gen.rejected == []

    # Prometheus scrapes both instances under one job
    prom = stack.component("prometheus")
    until("Prometheus scrapes both gateways", lambda: len(prom.query('up{job="gateway"} == 1')) == 2, 60)


@pytest.mark.disruptive
def test_counts_stay_exact_when_one_of_two_taskmanagers_is_killed(stack, gw, cql, jobs, wait_healthy):
    from tally import process

    wide = widened(TALLY_FLINK_TASKMANAGERS="2")
    wide.up()  # starts flink-taskmanager-2: 4 more free slots
    overview = jobs.rest.call("GET", "/overview")
    assert overview["taskmanagers"] == 2, overview

    def kill_the_first():
        kill_9(stack, "flink-taskmanager")
        # the JobManager notices (heartbeat RPCs fail), and the jobs come back on the survivor's
        # slots, the only ones left, before the killed one is restarted
        until("the JobManager drops the killed TaskManager", lambda: "flink-taskmanager" not in taskmanagers(jobs), 120)
        for name in (ROLLUP, WRITER):
            until(f"{name} running again", lambda name=name: restarted(jobs, name), 180)
        assert not process.alive(stack.state.ref("flink-taskmanager"))
        wide.up()
        wait_healthy()

    try:
        fault_run(gw, cql, kill_the_first)
    finally:
        wide.stop(wide.component("flink-taskmanager-2"))  # its tasks fail over to the first one
        for name in (ROLLUP, WRITER):
            until(f"{name} back on one TaskManager", lambda name=name: restarted(jobs, name), 180)
        stack.up()  # Prometheus back to the stack's own targets


def restarted(jobs: Jobs, name: str) -> bool:
    job = jobs.running(name)
    if job is None:
        return False
    detail = jobs.rest.call("GET", f"/jobs/{job['jid']}")
    return detail["state"] == "RUNNING" and all(v["status"] == "RUNNING" for v in detail["vertices"])


def taskmanagers(jobs: Jobs) -> set[str]:
    return {tm["id"] for tm in jobs.rest.call("GET", "/taskmanagers")["taskmanagers"]}
