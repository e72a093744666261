"""The HTTP APIs' OpenAPI documents against the running gateway and registry.

The documents are written once (gateway/.../openapi.json, schemas/registry/.../openapi.json); the
Java tests hold their routes and error codes to the code. Here, on the real stack: each service
serves its document; the gateway reads every field its document gives a request (a wrong-typed
value in each is refused naming that field) and its namespace parser knows every documented config
field; and Schemathesis, a fuzzer nobody here wrote, runs every operation of both documents,
seeded and bounded (infra/tests/integration/fuzz/schemathesis.toml): no 5xx, every answer and
status as documented, schema-invalid requests refused, auth enforced. The gateway's run writes only
to two namespaces of its own, and only what it was answered 2xx for reaches Kafka."""

import copy
import json
import os
import subprocess
from pathlib import Path

import pytest
import requests
from kafka_tail import KafkaTail
from support import admin_headers, now_iso, until

REPO = Path(__file__).resolve().parents[3]
FUZZ = Path(__file__).parent / "fuzz"
GATEWAY_DOC = REPO / "gateway/src/main/resources/io/tally/gateway/openapi.json"
REGISTRY_DOC = REPO / "schemas/registry/src/main/resources/io/tally/registry/openapi.json"
COUNTERS, EVENTS = "fz_counters", "fz_events"
RUN_PREFIX = "fzr"  # the namespaces the fuzz may create through the admin API


def test_the_gateway_and_the_registry_serve_their_documents(stack, gw):
    for url, doc in ((gw, GATEWAY_DOC), (stack.component("registry").url(), REGISTRY_DOC)):
        r = requests.get(f"{url}/openapi.json", timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
        assert r.json() == json.loads(doc.read_text())


def put_namespace(gw: str, name: str, config: dict) -> requests.Response:
    return requests.put(f"{gw}/v1/namespaces/{name}", json=config, headers=admin_headers(), timeout=30)


@pytest.fixture(scope="module")
def fuzz_namespaces(gw):
    """The fuzz's namespaces, made (or kept) through the admin API and applied by the gateway."""
    configs = {
        COUNTERS: {"kind": "counter", "counter_type": "EVENTUAL", "accept_limit": "5s"},
        EVENTS: {
            "kind": "timeseries",
            "accept_limit": "5s",
            "index": {"enabled": True, "field_mapping": {"deviceType": "KEYWORD", "duration": "INTEGER"}},
        },
    }
    for name, config in configs.items():
        # a namespace deleted moments ago is refused until the jobs retired its storage
        until(f"{name} created", lambda n=name, c=config: put_namespace(gw, n, c).status_code in (200, 201), 120, 2)

        def applied(n=name):
            got = requests.get(f"{gw}/v1/namespaces/{n}", headers=admin_headers(), timeout=10).json()
            return got["applied_version"] == got["version"]

        until(f"{name} applied by the gateway", applied, 60)
    return configs


# Requests with every field each POST operation's document gives (several where a field excludes
# another): a field added to the document must be added here, and is then probed.
def full_requests() -> dict[str, list[dict]]:
    t = now_iso()
    interval = {"start": now_iso(-3600), "end": now_iso(60)}
    token = {"token": "probe-token", "generation_time": t}
    item = {"eventItemKey": "deviceType", "eventItemValue": "aW9z"}
    event = {"timeSeriesId": "probe", "eventTime": t, "eventId": "probe-1", "eventItems": [item]}
    page = {"pageSize": 10, "totalRecordLimit": 10, "pageToken": "x"}
    equals = {"equals": {"eventItemKey": "deviceType", "eventItemValue": "aW9z"}}
    bound = {"eventItemValue": "MQ==", "inclusive": True}
    ranged = {"range": {"eventItemKey": "duration", "lowerBound": bound, "upperBound": dict(bound)}}
    boolean = {"booleanQuery": {"operator": "AND", "searchQuery": [equals]}}
    add = {"namespace": COUNTERS, "counter_name": "probe", "delta": 1, "idempotency_token": token}
    return {
        "AddCount": [add],
        "AddAndGetCount": [add],
        "ClearCount": [{"namespace": COUNTERS, "counter_name": "probe", "idempotency_token": token}],
        "GetCount": [{"namespace": COUNTERS, "counter_name": "probe"}],
        "Recount": [
            {"namespace": COUNTERS, "counter_name": "probe", "from": interval["start"], "to": t, "repair": False}
        ],
        "WriteEventRecords": [{"namespace": EVENTS, "events": [event]}],
        "WriteEventRecordsSync": [{"namespace": EVENTS, "events": [event]}],
        "ReadEventRecords": [
            {
                "namespace": EVENTS,
                "timeSeriesId": "probe",
                "timeInterval": interval,
                "eventFilters": [{"matchEventItemKey": "deviceType", "matchEventItemValue": "aW9z"}],
                "pageSizeBytes": 4096,
                **page,
            }
        ],
        "SearchEventRecords": [
            {"namespace": EVENTS, "timeInterval": interval, "searchQuery": q, **page} for q in (equals, ranged, boolean)
        ],
        "AggregateEventRecords": [
            {
                "namespace": EVENTS,
                "timeInterval": interval,
                "searchQuery": q,
                "aggregationQuery": {"distinct": {"eventItemKey": "deviceType", "pageSize": 5}},
            }
            for q in (equals, ranged, boolean)
        ],
    }


def deref(doc: dict, schema: dict) -> dict:
    """A schema with its $ref, a lone allOf wrapper and a nullable anyOf [schema, null] followed."""
    while True:
        if "$ref" in schema:
            node = doc
            for part in schema["$ref"].lstrip("#/").split("/"):
                node = node[part]
            schema = node
        elif "anyOf" in schema:
            schema = next(a for a in schema["anyOf"] if a.get("type") != "null")
        elif "allOf" in schema and "properties" not in schema and "type" not in schema:
            schema = schema["allOf"][0]
        else:
            return schema


def refs_of(schema: dict) -> set[str]:
    """The named schemas a property goes through ($ref, nullable or not)."""
    return {
        a["$ref"] for a in [schema, *schema.get("anyOf", []), *schema.get("items", {}).get("anyOf", [])] if "$ref" in a
    } | ({schema["items"]["$ref"]} if "$ref" in schema.get("items", {}) else set())


def field_paths(doc: dict, schema: dict, prefix: str = "", seen: frozenset = frozenset()) -> dict[str, str]:
    """Every property path a schema gives ("events[0].eventItems[0].eventItemKey"), with its type;
    a recursive schema (booleanQuery's searchQuery) is walked once."""
    schema = deref(doc, schema)
    out: dict[str, str] = {}
    for name, raw in schema.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        sub = deref(doc, raw)
        kind = sub.get("type", "string")
        out[path] = kind if isinstance(kind, str) else kind[0]
        if refs_of(raw) & seen:
            continue
        inner = seen | refs_of(raw)
        if out[path] == "object":
            out.update(field_paths(doc, sub, path, inner))
        elif out[path] == "array" and "items" in sub:
            items = deref(doc, sub["items"])
            if items.get("type") == "object" or "properties" in items:
                out.update(field_paths(doc, items, f"{path}[0]", inner | refs_of(sub)))
    return out


def at(body, path: str):
    """The parent container of a path and the last key (or index) in it."""
    parts = []
    for chunk in path.split("."):
        name, _, rest = chunk.partition("[")
        parts.append(name)
        while rest:
            index, _, rest = rest.partition("]")
            parts.append(int(index))
            rest = rest.lstrip("[")
    node = body
    for p in parts[:-1]:
        node = node[p]
    return node, parts[-1]


def has_path(body, path: str) -> bool:
    try:
        node, key = at(body, path)
        return key in node if isinstance(node, dict) else key < len(node)
    except (KeyError, IndexError, TypeError):
        return False


WRONG = {"string": 12345, "integer": "x", "boolean": "x", "object": "x", "array": "x", "number": "x"}


def test_the_gateway_reads_every_field_its_document_gives_a_request(gw, fuzz_namespaces):
    doc = json.loads(GATEWAY_DOC.read_text())
    full = full_requests()
    probed = 0
    for path, ops in doc["paths"].items():
        post = ops.get("post")
        if post is None:
            continue
        op = post["operationId"]
        schema = post["requestBody"]["content"]["application/json"]["schema"]
        fields = field_paths(doc, schema)
        bodies = full[op]
        missing = [f for f in fields if not any(has_path(b, f) for b in bodies)]
        assert not missing, f"{op}: documented fields this test does not send yet: {missing}"
        for field, kind in fields.items():
            body = copy.deepcopy(next(b for b in bodies if has_path(b, field)))
            node, key = at(body, field)
            node[key] = WRONG[kind]
            r = requests.post(f"{gw}{path}", json=body, headers=admin_headers(), timeout=30)
            assert r.status_code in (400, 413), (op, field, r.status_code, r.text[:300])
            assert r.json()["error"].get("field") == field, (op, field, r.text[:300])
            probed += 1
    assert probed > 50


def test_the_namespace_parser_knows_every_documented_config_field(gw):
    doc = json.loads(GATEWAY_DOC.read_text())
    fields = field_paths(doc, doc["components"]["schemas"]["NamespaceConfig"])
    counter = {
        "kind": "counter",
        "counter_type": "EVENTUAL",
        "time_partition": {
            "seconds_per_slice": 86400,
            "seconds_per_bucket": 3600,
            "buckets_per_id": 2,
            "event_buckets_by": "event_id",
        },
        "accept_limit": "5s",
        "retention": {"close_after": "6d", "delete_after": "7d"},
        "index": {"enabled": False, "field_mapping": {}, "refresh_interval": "1s"},
        "rollup": {"coalesce_ms": 1000, "clock_skew_ms": 500},
        "time_partition_history": [
            {
                "until": "2026-01-01T00:00:00Z",
                "seconds_per_slice": 86400,
                "seconds_per_bucket": 3600,
                "buckets_per_id": 1,
                "event_buckets_by": "event_id",
            }
        ],
    }
    assert not [f for f in fields if not has_path(counter, f)], "a documented config field is not sent"
    name = RUN_PREFIX + "_configprobe"
    r = put_namespace(gw, name, counter)
    try:
        assert r.status_code in (200, 201), r.text[:300]
        unknown = put_namespace(gw, name, dict(counter, retention={"close_after": "6d", "keep": "1d"}))
        assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "retention.keep", unknown.text
    finally:
        requests.delete(f"{gw}/v1/namespaces/{name}", headers=admin_headers(), timeout=30)


def schemathesis(url: str, hooks: str, env: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    token = admin_headers()["Authorization"]
    return subprocess.run(
        [
            str(Path(os.sys.executable).parent / "schemathesis"),
            "--config-file",
            str(FUZZ / "schemathesis.toml"),
            "run",
            f"{url}/openapi.json",
            "--url",
            url,
            "-H",
            f"Authorization: {token}",
            "--report",
            "junit",
            "--report-junit-path",
            str(tmp_path / f"{hooks}.xml"),
        ],
        env={**os.environ, "SCHEMATHESIS_HOOKS": hooks, "PYTHONPATH": str(FUZZ), **env},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=1200,
    )


def summary(run: subprocess.CompletedProcess) -> str:
    """The failures' headings and the summary (a full report can be megabytes of request bodies)."""
    keep = [
        line[:300]
        for line in run.stdout.splitlines()
        if line.startswith(("___", "- ", "    Expected", "[", "    `{")) or "SUMMARY" in line
    ]
    return "\n".join(keep[:200]) + "\n" + run.stdout[-3000:] + run.stderr[-2000:]


def test_schemathesis_finds_no_fault_in_the_gateway_and_rejected_requests_write_nothing(
    stack, gw, settings, fuzz_namespaces, tmp_path
):
    registry = stack.component("registry").url()
    tail = KafkaTail(
        settings.kafka_bootstrap(), registry, ["tally.counter.events", "tally.timeseries.events"], ignore_keys=()
    )
    log = tmp_path / "accepted.jsonl"
    try:
        run = schemathesis(gw, "gateway_hooks", {"TALLY_FUZZ_LOG": str(log), "TALLY_FUZZ_PREFIX": RUN_PREFIX}, tmp_path)
        assert run.returncode == 0, summary(run)
        accepted = set()
        for line in log.read_text().splitlines() if log.exists() else []:
            accepted.update(json.loads(line)["ids"])
        assert accepted, "the fuzz had no write accepted: it never reached the write path"

        def ours(seen):
            return [v["event_id"] for _, _, v in seen if v.get("namespace") in (COUNTERS, EVENTS)]

        # every write answered 2xx reached Kafka (the asynchronous ones within the wait) ...
        seen = tail.records_until(lambda s: accepted <= set(ours(s)), timeout=60)
        assert accepted <= set(ours(seen)), sorted(accepted - set(ours(seen)))[:20]
        # ... and nothing else did: no refused request wrote an event
        stray = set(ours(tail.records(0, timeout=5))) - accepted
        assert not stray, sorted(stray)[:20]
    finally:
        tail.close()
        for n in requests.get(f"{gw}/v1/namespaces", headers=admin_headers(), timeout=30).json()["namespaces"]:
            if n["name"].startswith(RUN_PREFIX):
                requests.delete(f"{gw}/v1/namespaces/{n['name']}", headers=admin_headers(), timeout=30)


def test_schemathesis_finds_no_fault_in_the_registry(stack, tmp_path):
    registry = stack.component("registry").url()
    level = requests.get(f"{registry}/config", timeout=10).json()["compatibilityLevel"]
    subjects = set(requests.get(f"{registry}/subjects", timeout=10).json())
    try:
        run = schemathesis(registry, "registry_hooks", {}, tmp_path)
        assert run.returncode == 0, summary(run)
    finally:
        # the run may set the global level (PUT /config is an operation like any other)
        requests.put(f"{registry}/config", json={"compatibility": level}, headers=admin_headers(), timeout=10)
    assert requests.get(f"{registry}/config", timeout=10).json()["compatibilityLevel"] == level
    left = set(requests.get(f"{registry}/subjects", timeout=10).json())
    assert subjects <= left, f"the run removed subjects it was not aimed at: {sorted(subjects - left)}"
