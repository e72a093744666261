"""The control plane on the real stack: namespaces in Postgres, changed through the gateway's
admin API, streamed by Debezium (Kafka Connect) to tally.control.namespaces, applied live by
the gateway, the Flink jobs (broadcast state) and the provisioner (keyspace, slices, index).
Faults: Kafka Connect killed and restarted, Postgres stopped and started."""

import base64
import os
import signal
import time
import uuid

import pytest
import requests
from support import admin_headers, timeseries_config, until
from support import now_iso as iso
from tally import process
from tally.jobs import Jobs

ADMIN = admin_headers()


@pytest.fixture(scope="module")
def gw(stack, settings):
    Jobs(settings, log=lambda *_: None).ensure_deployed()
    return stack.component("gateway").url()


PROVISIONED_S = 180  # how long provisioning may take: Cassandra DDL costs seconds a statement here


def put(gw, name, config, version=None, auth=True):
    headers = {**(ADMIN if auth else {}), **({"If-Match": f'"{version}"'} if version is not None else {})}
    return requests.put(f"{gw}/v1/namespaces/{name}", json=config, headers=headers, timeout=10)


def write(gw, ns, offset_s=0.0, items=None, event_id=None):
    items = items or {}
    body = {
        "namespace": ns,
        "events": [
            {
                "timeSeriesId": "cp-1",
                "eventTime": iso(offset_s),
                "eventId": event_id or uuid.uuid4().hex,
                "eventItems": [
                    {"eventItemKey": k, "eventItemValue": base64.b64encode(str(v).encode()).decode()}
                    for k, v in items.items()
                ],
            }
        ],
    }
    return requests.post(f"{gw}/v1/timeseries/WriteEventRecordsSync", json=body, timeout=10)


def search_equals(gw, ns, key, value):
    return requests.post(
        f"{gw}/v1/timeseries/SearchEventRecords",
        json={
            "namespace": ns,
            "pageSize": 10,
            "timeInterval": {"start": iso(-3600), "end": iso(60)},
            "searchQuery": {
                "equals": {"eventItemKey": key, "eventItemValue": base64.b64encode(str(value).encode()).decode()}
            },
        },
        timeout=10,
    )


def tables(cql, keyspace):
    return {
        r.table_name
        for r in cql.execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = %s", (keyspace,))
    }


def es(settings, path):
    return requests.get(f"http://{settings.host}:{settings.port('TALLY_ELASTICSEARCH_PORT')}{path}", timeout=10)


def test_create_change_and_delete_apply_live(gw, cql, settings):
    name = f"it_cp_{uuid.uuid4().hex[:6]}"
    created = put(gw, name, timeseries_config())
    assert created.status_code == 201, created.text
    assert created.json()["version"] == 1 and created.headers["ETag"] == '"1"'
    t0 = time.monotonic()
    # live, without a restart; how fast is bench control's figure (a timed assert here would fail
    # on a loaded box, not on the code)
    until("the first accepted write", lambda: write(gw, name).status_code == 200, 10)
    print(f"{name} took writes {time.monotonic() - t0:.2f} s after its create")
    keyspace = f"ns_{name}"
    # the provisioner works through changes in order; on a fresh stack the seeds' Cassandra DDL comes first
    until("its slice tables", lambda: any(t.startswith("events_") for t in tables(cql, keyspace)), PROVISIONED_S)
    until(
        "its current slice index behind its alias",
        lambda: es(settings, f"/tally-{name}").status_code == 200,
        PROVISIONED_S,
    )

    # accept_limit: an event 20 s old is outside 5 s, inside 60 s; the gateway applies it at once
    late = write(gw, name, offset_s=-20)
    assert late.status_code == 400 and late.json()["error"]["code"] == "OUTSIDE_ACCEPT_WINDOW"
    changed = put(gw, name, timeseries_config(accept="60s"), version=1)
    assert changed.status_code == 200 and changed.json()["version"] == 2
    until("the wider accept window", lambda: write(gw, name, offset_s=-20).status_code == 200, 5)
    assert requests.get(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10).json()["applied_version"] == 2
    stale = put(gw, name, timeseries_config(accept="30s"), version=1)
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "VERSION_CONFLICT"

    # field_mapping: a new field is searchable once the change is applied: the gateway accepts the
    # query, the job indexes the field, the provisioner added it to the existing index's mapping
    before = search_equals(gw, name, "region", "eu")
    assert before.status_code == 400, before.text
    assert (
        put(
            gw, name, timeseries_config(accept="60s", fields={"deviceType": "KEYWORD", "region": "KEYWORD"}), version=2
        ).status_code
        == 200
    )
    until("the gateway knows the new field", lambda: search_equals(gw, name, "region", "eu").status_code == 200, 5)
    tagged = uuid.uuid4().hex
    assert write(gw, name, items={"region": "eu", "deviceType": "tv"}, event_id=tagged).status_code == 200
    found = until(
        "the event found by the new field",
        lambda: [e["eventId"] for e in search_equals(gw, name, "region", "eu").json()["events"]],
        30,
        0.5,
    )
    assert found == [tagged]
    assert "region" in es(settings, f"/tally-{name}/_mapping").text, "the existing slice index got the new field"

    # time_partition: applies to future slices only; today's data keeps its layout and reads back
    hourly = {"seconds_per_slice": 3600, "seconds_per_bucket": 600, "buckets_per_id": 2}
    relaid = put(
        gw,
        name,
        {
            **timeseries_config(accept="60s", fields={"deviceType": "KEYWORD", "region": "KEYWORD"}),
            "time_partition": hourly,
        },
        version=3,
    )
    assert relaid.status_code == 200, relaid.text
    history = relaid.json()["config"]["time_partition_history"]
    assert len(history) == 1 and history[0]["seconds_per_slice"] == 86400
    assert history[0]["until"] > iso(86400), "not before the current and the next daily slice"

    def read_back():
        r = requests.post(
            f"{gw}/v1/timeseries/ReadEventRecords",
            json={
                "namespace": name,
                "timeSeriesId": "cp-1",
                "pageSize": 100,
                "timeInterval": {"start": iso(-3600), "end": iso(60)},
            },
            timeout=10,
        )
        return r.status_code == 200 and tagged in [e["eventId"] for e in r.json()["events"]]

    until("the stored event read back after the change", read_back, 30, 0.5)

    deleted = requests.delete(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10)
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
    until("writes refused after the delete", lambda: write(gw, name).status_code == 404, 2)
    assert requests.get(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10).status_code == 404
    until("its keyspace retired", lambda: not tables(cql, keyspace), PROVISIONED_S)
    until("its indices retired", lambda: es(settings, f"/tally-{name}").status_code == 404, PROVISIONED_S)


def counter_call(gw, endpoint, body):
    return requests.post(f"{gw}/v1/counter/{endpoint}", json=body, timeout=15)


def test_a_counter_namespace_deleted_and_created_again_starts_from_zero(gw, cql):
    """A namespace deleted and created again under its name is a new one: its counters start from
    zero in the rollup job's state, the gateways' view and Cassandra, and the name is free again
    only once the old one's keyspace is gone (409 NAMESPACE_RETIRING before)."""
    name = f"it_recreate_{uuid.uuid4().hex[:8]}"
    config = {
        "kind": "counter",
        "counter_type": "EVENTUAL",
        "accept_limit": "3s",
        "rollup": {"coalesce_ms": 500, "clock_skew_ms": 200},
    }

    def add(delta):
        body = {
            "namespace": name,
            "counter_name": "c",
            "delta": delta,
            "idempotency_token": {"token": "same-token", "generation_time": iso()},
        }
        return until(f"AddCount {delta} to {name}", lambda: counter_call(gw, "AddCount", body).status_code == 200, 30)

    def count():
        r = counter_call(gw, "GetCount", {"namespace": name, "counter_name": "c"})
        return r.json()["count"] if r.status_code == 200 else None

    assert put(gw, name, config).status_code == 201
    add(5)
    until("the first namespace's count", lambda: count() == 5, 90, 0.5)

    assert requests.delete(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10).status_code == 200
    until("GetCount refused after the delete", lambda: count() is None, 10)
    keyspace = "ns_" + name
    if tables(cql, keyspace):  # the jobs retire it within a tick or a few; meanwhile the name is not free
        early = put(gw, name, config)
        assert early.status_code in (201, 409), early.text
        if early.status_code == 409:
            assert early.json()["error"]["code"] == "NAMESPACE_RETIRING"
    until("the old keyspace retired", lambda: not tables(cql, keyspace), PROVISIONED_S)
    created = until("created again", lambda: put(gw, name, config).status_code in (200, 201), 30)
    assert created
    until("the new namespace's counter at zero", lambda: count() == 0, 30, 0.5)
    # the same token again is a new event of the new namespace's counter, not a retry
    add(2)
    until("the new namespace's count", lambda: count() == 2, 90, 0.5)
    time.sleep(3)  # a rollup later, still 2: nothing of the old namespace came back
    assert count() == 2
    # the new namespace's slices are its own and OPEN: the old one's catalogue rows went with it
    statuses = {r.status for r in cql.execute("SELECT status FROM tally_meta.slices WHERE namespace = %s", (name,))}
    assert statuses == {"OPEN"}, statuses
    requests.delete(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10)


BAD = [
    ({"kind": "timeseries", "acept_limit": "5s"}, "acept_limit"),
    ({"kind": "gauge"}, "kind"),
    ({"kind": "timeseries", "accept_limit": "soon"}, "accept_limit"),
    (
        {"kind": "timeseries", "time_partition": {"seconds_per_slice": 86400, "seconds_per_bucket": 7000}},
        "time_partition.seconds_per_bucket",
    ),
    ({"kind": "timeseries", "index": {"field_mapping": {"bad-field": "KEYWORD"}}}, "index.field_mapping.bad-field"),
    ({"kind": "timeseries", "index": {"field_mapping": {"ok": "BLOB"}}}, "index.field_mapping.ok"),
    ({"kind": "counter", "counter_type": "EVENTUAL", "accept_limit": "2h"}, "accept_limit"),
    ({"kind": "counter"}, "counter_type"),
    ({"kind": "timeseries", "retention": {"close_after": "10s", "delete_after": "5s"}}, "retention.delete_after"),
    ([1, 2], "config"),
    # numbers past their bounds: before, they parsed and then crashed the decode step or the lifecycle
    (
        {"kind": "timeseries", "retention": {"close_after": "106752d", "delete_after": "106752d"}},
        "retention.close_after",
    ),
    ({"kind": "timeseries", "accept_limit": "999999999999h"}, "accept_limit"),
    (
        {"kind": "timeseries", "index": {"field_mapping": {"event_time_us": "LONG"}}},
        "index.field_mapping.event_time_us",
    ),
    (
        {"kind": "timeseries", "time_partition": {"seconds_per_slice": 5000, "seconds_per_bucket": 1000}},
        "time_partition.seconds_per_slice",
    ),
]


def test_bad_configs_are_rejected_naming_the_field_and_change_nothing(gw):
    name = f"it_cpbad_{uuid.uuid4().hex[:6]}"
    for config, field in BAD:
        r = put(gw, name, config)
        assert r.status_code == 400, (config, r.text)
        assert r.json()["error"]["code"] == "INVALID_NAMESPACE_CONFIG" and r.json()["error"]["field"] == field, (
            config,
            r.text,
        )
    assert requests.get(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10).status_code == 404, (
        "nothing was created"
    )

    bad_name = put(gw, "Bad-Name", timeseries_config())
    assert bad_name.status_code == 400 and bad_name.json()["error"]["code"] == "INVALID_NAMESPACE_NAME"
    malformed = requests.put(
        f"{gw}/v1/namespaces/{name}",
        data="{not json",
        headers={**ADMIN, "Content-Type": "application/json"},
        timeout=10,
    )
    assert malformed.status_code == 400 and malformed.json()["error"]["code"] == "MALFORMED_JSON"

    assert put(gw, name, timeseries_config()).status_code == 201
    try:
        for config, field in [({"kind": "counter", "counter_type": "EVENTUAL"}, "kind")]:
            r = put(gw, name, config)
            assert r.status_code == 400 and r.json()["error"]["field"] == field, r.text
        assert put(gw, name, timeseries_config(), version=7).status_code == 409
        bad_version = requests.put(
            f"{gw}/v1/namespaces/{name}", json=timeseries_config(), headers={**ADMIN, "If-Match": "soon"}, timeout=10
        )
        assert bad_version.status_code == 400 and bad_version.json()["error"]["code"] == "INVALID_VERSION"
        got = requests.get(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10).json()
        assert got["version"] == 1 and got["config"] == timeseries_config(), "the rejected changes left it alone"
        unchanged = put(gw, name, timeseries_config())
        assert (
            unchanged.status_code == 200 and unchanged.json()["changed"] is False and unchanged.json()["version"] == 1
        )
        # '.' and '_' name the same keyspace: the second name is refused, naming the first
        twin = put(gw, name.replace("_", ".", 1), timeseries_config())
        assert twin.status_code == 409, twin.text
        assert twin.json()["error"]["code"] == "NAMESPACE_STORAGE_TAKEN" and name in twin.json()["error"]["message"]
        assert (
            requests.get(f"{gw}/v1/namespaces/{name.replace('_', '.', 1)}", headers=ADMIN, timeout=10).status_code
            == 404
        )
        # time_partition 1d -> 2d -> 1d inside one window: the flip back cancels the pending change (a 500 before)
        for seconds in (172800, 86400):
            tp = {"seconds_per_slice": seconds, "seconds_per_bucket": 3600, "buckets_per_id": 2}
            flip = put(gw, name, {**timeseries_config(), "time_partition": tp})
            assert flip.status_code == 200, flip.text
        assert "time_partition_history" not in flip.json()["config"]
    finally:
        requests.delete(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10)


def control_plane(gw):
    return requests.get(f"{gw}/healthz", timeout=5).json()


def test_no_change_is_missed_while_kafka_connect_is_down(stack, gw, wait_healthy):
    """Connect is killed (SIGKILL, no clean shutdown); changes made meanwhile wait in the
    replication slot and arrive after its restart, from its stored offsets."""
    names = [f"it_cpc_{uuid.uuid4().hex[:6]}_{i}" for i in range(3)]
    try:
        ref = stack.state.ref("connect")
        os.kill(ref.pid, signal.SIGKILL)
        process.wait_until("connect killed", lambda: not process.alive(ref), 10, lambda: True)
        stack.state.forget_process("connect")
        until(
            "health shows the control plane degraded",
            lambda: control_plane(gw)["control_plane"]["status"] == "DEGRADED",
            10,
        )
        assert control_plane(gw)["status"] == "DEGRADED", "the data plane still serves"
        assert write(gw, "playback").status_code == 200
        for n in names:
            assert put(gw, n, timeseries_config()).status_code == 201
        assert put(gw, names[0], timeseries_config(accept="60s"), version=1).status_code == 200
        assert requests.delete(f"{gw}/v1/namespaces/{names[2]}", headers=ADMIN, timeout=10).status_code == 200
        time.sleep(1)
        assert write(gw, names[1]).status_code == 404, "not streamed while Connect is down"
        stack.up()
        wait_healthy()
        until("the changes made meanwhile", lambda: write(gw, names[1]).status_code == 200, 30)
        until(
            "the accept_limit change made meanwhile", lambda: write(gw, names[0], offset_s=-20).status_code == 200, 10
        )
        assert write(gw, names[2]).status_code == 404, "the create and the delete both arrived, in order"
        until("the control plane healthy again", lambda: control_plane(gw)["control_plane"]["status"] == "UP", 15)
    finally:
        for n in names:
            requests.delete(f"{gw}/v1/namespaces/{n}", headers=ADMIN, timeout=10)


def test_the_data_plane_keeps_serving_while_postgres_is_down(stack, gw, wait_healthy):
    name = f"it_cpp_{uuid.uuid4().hex[:6]}"
    try:
        stack.stop(stack.component("postgres"))
        until(
            "health shows the control plane degraded",
            lambda: control_plane(gw)["control_plane"]["status"] == "DEGRADED",
            10,
        )
        health = requests.get(f"{gw}/healthz", timeout=5)
        assert health.status_code == 200 and health.json()["control_plane"]["postgres"].startswith("DOWN")
        assert write(gw, "playback").status_code == 200, "writes go on with the last known configs"
        assert (
            requests.post(
                f"{gw}/v1/counter/AddCount",
                json={"namespace": "page_hits", "counter_name": "cp", "delta": 1},
                timeout=10,
            ).status_code
            == 202
        )
        refused = put(gw, name, timeseries_config())
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "CONTROL_PLANE_UNAVAILABLE"
        stack.up()
        wait_healthy()

        # Debezium reconnects (or Connect restarts its task); then changes flow again
        def created():
            r = put(gw, name, timeseries_config())
            return r.status_code in (200, 201)

        until("the admin API back", created, 30, 1)
        until("a change made after Postgres returned", lambda: write(gw, name).status_code == 200, 60, 0.5)
    finally:
        requests.delete(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10)


def test_the_admin_doors_are_closed_by_default(stack, settings, gw):
    """./tally up makes an admin token: the admin API and Recount need it, the data plane does not;
    registry writes and deletes need it, reads do not; a Tally topic's value subject cannot be
    deleted permanently even with it."""
    name = f"it_cp_token_{uuid.uuid4().hex[:6]}"
    for auth in (None, "Bearer wrong", settings.admin_token()):
        r = requests.get(f"{gw}/v1/namespaces", headers={"Authorization": auth} if auth else {}, timeout=10)
        assert r.status_code == 401 and r.json()["error"]["code"] == "UNAUTHORIZED", auth
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert put(gw, name, timeseries_config(), auth=False).status_code == 401
    recount = requests.post(
        f"{gw}/v1/counter/Recount", json={"namespace": "ad_clicks", "counter_name": "x"}, timeout=10
    )
    assert recount.status_code == 401, recount.text
    try:
        assert put(gw, name, timeseries_config()).status_code == 201
        listed = requests.get(f"{gw}/v1/namespaces", headers=ADMIN, timeout=10)
        assert listed.status_code == 200 and any(n["name"] == "playback" for n in listed.json()["namespaces"])
        assert write(gw, "playback").status_code == 200, "writes need no admin token"
    finally:
        requests.delete(f"{gw}/v1/namespaces/{name}", headers=ADMIN, timeout=10)

    registry = stack.component("registry").url()
    subject = f"it-token-{uuid.uuid4().hex[:6]}-value"
    schema = {"schema": '{"type":"record","name":"T","fields":[{"name":"a","type":"int"}]}'}
    assert requests.post(f"{registry}/subjects/{subject}/versions", json=schema, timeout=10).status_code == 401
    made = requests.post(f"{registry}/subjects/{subject}/versions", json=schema, headers=ADMIN, timeout=10)
    assert made.status_code == 200, made.text
    assert requests.get(f"{registry}/subjects/{subject}/versions", timeout=10).status_code == 200, "reads stay open"
    found = requests.post(f"{registry}/subjects/{subject}", json=schema, timeout=10)
    assert found.status_code == 200, "a lookup is a read"
    assert requests.delete(f"{registry}/subjects/{subject}", timeout=10).status_code == 401
    assert requests.delete(f"{registry}/subjects/{subject}", headers=ADMIN, timeout=10).status_code == 200
    permanent = requests.delete(f"{registry}/subjects/{subject}?permanent=true", timeout=10)
    assert permanent.status_code == 401
    assert (
        requests.delete(f"{registry}/subjects/{subject}?permanent=true", headers=ADMIN, timeout=10).status_code == 200
    )
    tally = requests.delete(
        f"{registry}/subjects/tally.timeseries.events-value?permanent=true", headers=ADMIN, timeout=10
    )
    assert tally.status_code == 409, tally.text


def test_the_launchers_sql_takes_settings_as_values_never_as_sql_text(stack, gw):
    """Role names and passwords are settings (TALLY_CDC_*, TALLY_CONTROL_ADMIN_*): the launcher
    passes them as psql variables quoted by Postgres, so a hostile one is a strange name, not SQL."""
    pg = stack.component("postgres")
    hostile = 'it_role"; DROP TABLE namespaces; --'
    create = "SELECT format('CREATE ROLE %I WITH LOGIN PASSWORD %L', :'user', :'pw') \\gexec"
    pg.psql_script(create, db="postgres", user=hostile, pw="it's; DROP")
    try:
        assert (
            pg.psql_script("SELECT count(*) FROM pg_roles WHERE rolname = :'user'", db="postgres", user=hostile) == "1"
        )
        assert requests.get(f"{gw}/v1/namespaces/playback", headers=ADMIN, timeout=10).status_code == 200
    finally:
        pg.psql_script("SELECT format('DROP ROLE %I', :'user') \\gexec", db="postgres", user=hostile)
