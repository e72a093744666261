"""A client of Flink's SQL gateway REST API (v1), as a user's program talks to it: open a
session, submit statements, page through results."""

from __future__ import annotations

import time

import requests

# how long a bounded statement may run while its job is RUNNING: a full scan of a topic that
# benchmarks filled (tens of millions of records) takes minutes on two cores
BOUNDED_JOB_LIMIT_S = 1200.0


def minutes_ago(minutes: float) -> int:
    """Epoch milliseconds: where a test's scan starts, so that its time follows what the test
    wrote, not what benchmarks left in the topic."""
    return int((time.time() - 60 * minutes) * 1000)


def bounded_since(start_ms: int) -> str:
    """A hint that reads a Kafka table from start_ms (epoch milliseconds) to the offsets at
    submission, as a user bounds a scan of a busy topic: Flink pushes no time filter down to Kafka."""
    return (
        "/*+ OPTIONS('scan.startup.mode'='timestamp', "
        f"'scan.startup.timestamp-millis'='{start_ms}', 'scan.bounded.mode'='latest-offset') */"
    )


class SqlError(AssertionError):
    pass


class SqlSession:
    def __init__(self, url: str, properties: dict[str, str] | None = None, flink_url: str | None = None):
        """flink_url (the JobManager's REST API) lets a bounded statement wait past its timeout
        while its job is still RUNNING."""
        self.url = url
        self.flink_url = flink_url
        r = requests.post(f"{url}/v1/sessions", json={"properties": properties or {}}, timeout=30)
        r.raise_for_status()
        self.handle = r.json()["sessionHandle"]

    def submit(self, statement: str) -> str:
        r = requests.post(f"{self.url}/v1/sessions/{self.handle}/statements", json={"statement": statement}, timeout=60)
        if r.status_code != 200:
            raise SqlError(f"{statement!r}: HTTP {r.status_code} {r.text[:2000]}")
        return r.json()["operationHandle"]

    def result(self, op: str, timeout: float = 120.0, until=None) -> tuple[list[dict], str | None]:
        """Every row of the operation (as {"kind", "fields"}) and its job id, once it ends, or
        (an unbounded query) once until(folded rows) holds: then the operation is closed, which
        cancels its job. A statement without until may take up to BOUNDED_JOB_LIMIT_S while its
        job runs (a scan's time follows the topic's size, not the test's)."""
        token, rows, job, start = 0, [], None, time.monotonic()
        while self._waits(start, timeout, job if until is None else None):
            r = requests.get(
                f"{self.url}/v1/sessions/{self.handle}/operations/{op}/result/{token}",
                params={"rowFormat": "JSON"},
                timeout=60,
            )
            body = r.json()
            if r.status_code != 200 or "errors" in body:
                errors = body.get("errors", [r.text])
                raise SqlError("; ".join(e.splitlines()[0] for e in errors)[:3000] + "\n" + _root_cause(errors))
            job = body.get("jobID") or job
            data = body.get("results", {}).get("data", [])
            rows += data
            if until is not None and data and until(fold(rows)):
                self.close_operation(op)
                return rows, job
            nxt = body.get("nextResultUri")
            if body["resultType"] == "EOS" or not nxt:
                return rows, job
            if not data:
                time.sleep(0.3)
            token = int(nxt.split("/result/")[1].split("?")[0])
        raise SqlError(f"operation {op} (job {job}) gave no end of results within {time.monotonic() - start:.0f} s")

    def _waits(self, start: float, timeout: float, job: str | None) -> bool:
        spent = time.monotonic() - start
        if spent < timeout:
            return True
        if job is None or self.flink_url is None or spent >= BOUNDED_JOB_LIMIT_S:
            return False
        r = requests.get(f"{self.flink_url}/jobs/{job}", timeout=10)
        return r.status_code == 200 and r.json().get("state") in ("INITIALIZING", "CREATED", "RUNNING")

    def query(self, statement: str, timeout: float = 120.0) -> list[list]:
        """The final rows of a statement: a changelog folded (UPDATE_BEFORE/DELETE remove a row)."""
        rows, _ = self.result(self.submit(statement), timeout)
        return fold(rows)

    def watch(self, statement: str, until, timeout: float = 120.0) -> list[list]:
        """The rows of an unbounded query, folded, as soon as until(rows) holds (then it is cancelled)."""
        rows, _ = self.result(self.submit(statement), timeout, until=until)
        return fold(rows)

    def close_operation(self, op: str) -> None:
        requests.delete(f"{self.url}/v1/sessions/{self.handle}/operations/{op}/close", timeout=30)

    def execute(self, statement: str, timeout: float = 120.0) -> str | None:
        """Runs a statement for its effect; returns its job id, if it made a job."""
        _, job = self.result(self.submit(statement), timeout)
        return job

    def close(self):
        requests.delete(f"{self.url}/v1/sessions/{self.handle}", timeout=30)


def fold(rows: list[dict]) -> list[list]:
    out: list[list] = []
    for row in rows:
        if row["kind"] in ("INSERT", "UPDATE_AFTER"):
            out.append(row["fields"])
        else:
            out.remove(row["fields"])
    return out


def _root_cause(errors: list[str]) -> str:
    causes = [line for e in errors for line in e.splitlines() if line.startswith("Caused by")]
    return causes[-1] if causes else ""
