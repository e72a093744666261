"""The counter load the integration tests share: a deterministic AddCount generator with
its ground truth, and the checks that every count and rollup equals it (after a fault)."""

import threading
import time
import uuid
from datetime import UTC, datetime

import requests
from cassandra import InvalidRequest
from support import admin_headers, iso


def call(gw, endpoint, body, timeout=30):
    headers = admin_headers() if endpoint == "Recount" else {}  # an operator's call
    return requests.post(f"{gw}/v1/counter/{endpoint}", json=body, headers=headers, timeout=timeout)


def get_count(gw, ns, counter) -> dict:
    r = call(gw, "GetCount", {"namespace": ns, "counter_name": counter})
    assert r.status_code == 200, r.text
    return r.json()


def wait_count(gw, ns, counter, expected, timeout=60.0) -> dict:
    deadline, got = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        got = get_count(gw, ns, counter)
        if got["count"] == expected:
            return got
        time.sleep(0.25)
    raise AssertionError(f"{ns}/{counter}: count {got} after {timeout}s, expected {expected}")


def wait_rollup(cql, ns, counter, expected, after_us, timeout=90.0):
    """The rollup row alone (what EVENTUAL answers) reaches the count once T passes after_us."""
    keyspace = "ns_" + ns.replace(".", "_")
    deadline, row, unserved = time.monotonic() + timeout, None, None
    while time.monotonic() < deadline:
        try:
            row = cql.execute(
                f"SELECT last_rollup_count, last_rollup_ts FROM {keyspace}.counter_rollups WHERE counter = %s",
                (counter,),
            ).one()
        except InvalidRequest as e:
            # a Cassandra node just back from kill -9 answers "does not exist" as coordinator for
            # tables it has not pulled the schema of yet (docs/deploying.md); another try may pick
            # another coordinator, or find it caught up. A table truly missing fails at the deadline.
            if "does not exist" not in str(e):
                raise
            unserved = e
            time.sleep(0.5)
            continue
        if row is not None and row.last_rollup_ts is not None:
            t_us = int(row.last_rollup_ts.replace(tzinfo=UTC).timestamp() * 1e6)
            if t_us > after_us:
                assert row.last_rollup_count == expected, (
                    f"{ns}/{counter}: rollup {row.last_rollup_count}, expected {expected}"
                )
                return row
        time.sleep(0.5)
    raise AssertionError(
        f"{ns}/{counter}: no rollup past the last event after {timeout}s (last: {row}; last refusal: {unserved})"
    )


class Generator:
    """Deterministic load, as in Flink's operations playground: `rounds` AddCounts per counter
    with delta 1 + (round * 7 + counter) % 5; every tenth request is sent twice with the same
    token. A client retries a failed request (5xx, 429, connection error) with the same token
    until it gets an answer; the ground truth is the sum of the deltas that were answered 2xx.
    Given several gateways, request i and each of its copies and retries go to the next one in
    turn, so a copy or a retry lands on another instance than the first try."""

    def __init__(self, gw: str | list[str], ns, counters: list[str], rounds: int, pause_s: float = 0.0):
        self.gws = [gw] if isinstance(gw, str) else list(gw)
        self.ns, self.counters, self.rounds, self.pause = ns, counters, rounds, pause_s
        self.truth = {c: 0 for c in counters}
        self.rejected: list[tuple[str, int, int]] = []
        self.retries = 0
        self.last_event_us = {c: 0 for c in counters}  # a counter's rollup time moves only while it has events
        self.lock = threading.Lock()
        self.run = uuid.uuid4().hex[:8]

    def send(self, counter: str, i: int, delta: int) -> None:
        gen_time = datetime.now(UTC)
        body = {
            "namespace": self.ns,
            "counter_name": counter,
            "delta": delta,
            "idempotency_token": {"token": f"{self.run}-{counter}-{i}", "generation_time": iso(gen_time)},
        }
        copies = 2 if i % 10 == 3 else 1
        answered = None
        attempt = i
        for _ in range(copies):
            while True:
                gw = self.gws[attempt % len(self.gws)]
                attempt += 1
                try:
                    r = requests.post(f"{gw}/v1/counter/AddCount", json=body, timeout=15)
                    if r.status_code < 500 and r.status_code != 429:
                        answered = r
                        break
                except requests.RequestException:
                    pass
                with self.lock:
                    self.retries += 1
                time.sleep(0.3)
        with self.lock:
            if answered.status_code == 200:
                self.truth[counter] += delta
                self.last_event_us[counter] = max(self.last_event_us[counter], int(gen_time.timestamp() * 1e6))
            else:
                self.rejected.append((counter, i, answered.status_code))

    def _worker(self, counters: list[str]) -> None:
        for i in range(self.rounds):
            for c in counters:
                self.send(c, i, 1 + (i * 7 + self.counters.index(c)) % 5)
            time.sleep(self.pause)

    def start(self, workers: int = 8) -> "Generator":
        groups = [self.counters[w::workers] for w in range(workers)]
        self.threads = [threading.Thread(target=self._worker, args=(g,), daemon=True) for g in groups if g]
        for t in self.threads:
            t.start()
        return self

    def join(self, timeout=300) -> "Generator":
        for t in self.threads:
            t.join(timeout)
            assert not t.is_alive(), "the generator did not finish"
        return self


def fault_run(gw: str | list[str], cql, fault, rounds=40, pause_s=0.15, on_counters=None):
    """Runs the generator on it_counters (30 s accept window: clients retry through the
    fault with their tokens), applies `fault` mid-stream, then checks every count exactly."""
    counters = [f"f-{uuid.uuid4().hex[:6]}-{n}" for n in range(8)]
    if on_counters:
        on_counters(counters)  # a caller that reads them during the fault
    gen = Generator(gw, "it_counters", counters, rounds=rounds, pause_s=pause_s).start(workers=4)
    time.sleep(2)
    fault()
    gen.join()
    assert gen.rejected == [], f"answered 4xx: {gen.rejected[:5]}"
    for each in gen.gws:  # every gateway's view agrees
        for c in counters:
            wait_count(each, "it_counters", c, gen.truth[c], timeout=120)
    for c in counters:
        wait_rollup(cql, "it_counters", c, gen.truth[c], gen.last_event_us[c], timeout=120)
    return gen
