"""The jobs rescaled through savepoints while load flows (`./tally jobs rescale`): the counter
rollup 1 -> 2 -> 1 and the TimeSeries writer 1 -> 2 -> 1, with the counter generator on
it_counters and TimeSeries batches written all along; every count, rollup and event exact."""

import threading
import time
import uuid

import pytest
import requests
from counter_load import fault_run
from support import now_iso
from tally.jobs import Jobs
from test_timeseries import micros, wait_keys

ROLLUP, WRITER = "tally-counter-rollup", "tally-timeseries-writer"


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
    """Batches of 20 events of one id through WriteEventRecordsSync every 0.2 s (each batch
    retried with its ids until answered 200), recording when each was written."""

    def __init__(self, gw):
        self.gw, self.tsid, self.times, self.ids = gw, f"scale-{uuid.uuid4().hex[:8]}", [], []
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
                        break
                    assert r.status_code >= 500 or r.status_code == 429, r.text
                except requests.RequestException:
                    pass
                time.sleep(0.3)
            self.times.append(micros(t))
            self.ids += [e["eventId"] for e in events]
            n += 1
            time.sleep(0.2)

    def start(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def finish(self):
        self.stop.set()
        self.thread.join(60)


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
    for one in ("Source: control-plane", "Source: heartbeat-ticks -> heartbeats: Writer -> heartbeats: Committer"):
        assert at2[one] == 1, f"{one} stays at parallelism 1 by design: {at2}"
    assert 2 in seen["writer at 2"].values(), seen["writer at 2"]
    assert vertex_parallelism(jobs, ROLLUP)["counter-rollup -> counter-event-log: Writer"] == 1

    keys, n_rows = wait_keys(cql, timeseries.tsid, timeseries.times, len(timeseries.ids), timeout=180)
    assert sorted(k[1] for k in keys) == sorted(timeseries.ids), "every acknowledged event stored"
    assert n_rows == len(timeseries.ids), "and stored once"
