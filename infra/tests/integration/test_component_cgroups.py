"""The stack's own servers as containers: `./tally up` starts each in its own cgroup
(tally.containers/<component>), so with no setting the runq exporter reports per-component
run-queue latency and switch-outs by cause, into Prometheus and into Tally (sched.runq events
through ReadEventRecords, sched.switchout counts through GetCount)."""

import base64
import socket
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
from counter_load import Generator, get_count
from support import until

HOST = socket.gethostname()
# what the Done-when of the noisy-neighbor issue names; the rest of the stack is there too
WATCHED = ("kafka", "cassandra", "flink-taskmanager", "gateway")


@pytest.fixture
def cgroups(stack):
    cg = stack.cgroups
    if cg.mount is None or not cg.enabled or not (cg.mount / cg.root / "kafka").is_dir():
        pytest.skip("the stack's servers run without their own cgroups here (see TALLY_COMPONENT_CGROUPS)")
    return cg


def own_cgroup(pid: int) -> str:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return line[3:]
    return ""


def test_every_server_runs_in_its_own_cgroup(stack, cgroups):
    for c in stack.components:
        ref = stack.state.ref(c.name)
        if not stack.running(c):
            continue
        assert own_cgroup(ref.pid) == f"/{cgroups.root}/{c.name}", c.name
        assert ref.pid in cgroups.members(c.name), c.name


def read_runq(gw: str, container: str, start: datetime | None = None, end: datetime | None = None, page=5) -> list:
    now = datetime.now(UTC)
    start = start or now - timedelta(minutes=10)
    end = end or now + timedelta(minutes=1)
    body = {
        "namespace": "sched.runq",
        "timeSeriesId": f"{HOST}/{container}",
        "pageSize": page,
        "timeInterval": {
            "start": start.isoformat().replace("+00:00", "Z"),
            "end": end.isoformat().replace("+00:00", "Z"),
        },
    }
    r = requests.post(f"{gw}/v1/timeseries/ReadEventRecords", json=body, timeout=30)
    assert r.status_code == 200, r.text
    return r.json().get("events", [])


def decoded(event: dict) -> dict[str, str]:
    return {i["eventItemKey"]: base64.b64decode(i["eventItemValue"]).decode() for i in event["eventItems"]}


def test_the_exporter_reports_the_stacks_components_in_prometheus_and_tally(stack, cgroups, gw):
    prom = stack.component("prometheus")

    def containers_in_prometheus() -> set[str]:
        rows = prom.query('count by (container) (tally_runq_latency_seconds_bucket{runtime="tally"})')
        return {r["metric"]["container"] for r in rows}

    until(f"run-queue histograms of {WATCHED} in Prometheus", lambda: set(WATCHED) <= containers_in_prometheus(), 90)
    for container in WATCHED:
        until(f"sched.runq events of {container} through ReadEventRecords", lambda c=container: read_runq(gw, c), 90)
    events = read_runq(gw, "kafka", page=50)
    assert {e["timeSeriesId"] for e in events} == {f"{HOST}/kafka"}
    for event in events:
        items = decoded(event)
        assert int(items["runq_lat_us"]) >= 0
        # a wait that ended on an idle CPU displaced no one: such a sample names no task and no cause
        if "prev_container" in items:
            assert items["cause"] in ("same_container", "other_container", "system"), items
        else:
            assert "cause" not in items, items


def test_loading_the_gateway_raises_its_neighbors_other_container_switch_outs(stack, cgroups, gw):
    prom = stack.component("prometheus")
    neighbors = ("kafka", "cassandra", "flink-taskmanager")
    promql = 'sum(tally_sched_switch_out_total{{container="{c}", cause="other_container"}})'

    def in_prometheus(c: str) -> float:
        rows = prom.query(promql.format(c=c))
        return float(rows[0]["value"][1]) if rows else 0.0

    def counted(c: str) -> int:
        return get_count(gw, "sched.switchout", f"{HOST}/{c}/other_container")["count"]

    before = {c: (in_prometheus(c), counted(c)) for c in neighbors}
    # the counters generator on the gateway: it works, and its neighbors lose the CPU to it
    counters = [f"cg-{uuid.uuid4().hex[:6]}-{n}" for n in range(8)]
    start = datetime.now(UTC)
    gen = Generator(gw, "it_counters", counters, rounds=300).start(workers=8).join()
    end = datetime.now(UTC)
    assert gen.rejected == []
    # the cause is in the data: samples of the gateway getting the CPU while it displaced a
    # neighbor (prev_container), in the window of the load
    until(
        "a sched.runq event of the gateway displacing a neighbor during the load",
        lambda: any(decoded(e).get("prev_container") in neighbors for e in read_runq(gw, "gateway", start, end, 200)),
        90,
    )
    for c in neighbors:
        until(
            f"{c}'s other_container switch-outs rise in Prometheus",
            lambda c=c: in_prometheus(c) > before[c][0],
            60,
        )
        until(f"{c}'s other_container switch-outs rise in GetCount", lambda c=c: counted(c) > before[c][1], 90)
