"""The gateway's OpenAPI document is usable: a Python client generated from the document the running
gateway serves (openapi-python-client, a maintained generator from PyPI) drives a counter and a
TimeSeries end to end: writes, idempotent retries, reads, paging, search and a refusal, each answer
parsed into the generated models."""

import base64
import importlib
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
from support import until

PACKAGE = "tally_gateway_client"


@pytest.fixture(scope="module")
def api(gw, tmp_path_factory):
    """The generated package, from the document the gateway serves."""
    root = tmp_path_factory.mktemp("client")
    doc = root / "openapi.json"
    doc.write_bytes(requests.get(f"{gw}/openapi.json", timeout=10).content)
    bin_dir = Path(sys.executable).parent
    gen = subprocess.run(
        [str(bin_dir / "openapi-python-client"), "generate", "--path", str(doc), "--meta", "none"]
        + ["--output-path", str(root / PACKAGE)],
        capture_output=True,
        text=True,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},  # its post-processing runs ruff, from the venv
        timeout=300,
    )
    assert gen.returncode == 0 and "Warning" not in gen.stdout + gen.stderr, gen.stdout + gen.stderr
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def test_counters_end_to_end_through_the_generated_client(api, gw):
    from tally_gateway_client.api.counters import add_and_get_count, add_count, get_count
    from tally_gateway_client.models import AddCountRequest, Count, Error, GetCountRequest, IdempotencyToken

    client = api.Client(base_url=gw, raise_on_unexpected_status=True)
    counter = f"client-{uuid.uuid4().hex[:10]}"
    tokens = [IdempotencyToken(token=f"{counter}-{i}", generation_time=datetime.now(UTC)) for i in range(5)]
    for token in tokens + tokens[:2]:  # the last two are retries (same token and time): counted once
        body = AddCountRequest(namespace="video_views", counter_name=counter, delta=2, idempotency_token=token)
        r = add_count.sync_detailed(client=client, body=body)
        assert r.status_code == 200, r.content
        assert r.parsed.accepted == 1

    def count():
        got = get_count.sync(client=client, body=GetCountRequest(namespace="video_views", counter_name=counter))
        assert isinstance(got, Count), got
        return got if got.count == 10 else None

    got = until("the EVENTUAL count rolled up", count, timeout=60, every=1)
    assert got.counter_type.value == "EVENTUAL" and isinstance(got.last_rollup_ts, datetime)

    # ACCURATE: the answer holds the write just made
    accurate = f"{counter}-accurate"
    answers = [
        add_and_get_count.sync(
            client=client,
            body=AddCountRequest(
                namespace="ad_clicks",
                counter_name=accurate,
                delta=1,
                idempotency_token=IdempotencyToken(token=f"{accurate}-{i}", generation_time=datetime.now(UTC)),
            ),
        )
        for i in range(3)
    ]
    # each answer counts its own write, and the earlier ones once Flink stored them
    assert [a.count for a in answers][0] == 1 and all(1 <= a.count <= i + 1 for i, a in enumerate(answers))

    def accurate_total():
        got = get_count.sync(client=client, body=GetCountRequest(namespace="ad_clicks", counter_name=accurate))
        return got.count == 3

    until("the ACCURATE count", accurate_total, timeout=30, every=0.5)

    # a refusal parses into the Error model with its code and field
    refused = get_count.sync_detailed(client=client, body=GetCountRequest(namespace="no_such_ns", counter_name="x"))
    assert refused.status_code == 404 and isinstance(refused.parsed, Error)
    assert refused.parsed.error.code.value == "UNKNOWN_NAMESPACE" and refused.parsed.error.field == "namespace"


def test_timeseries_end_to_end_through_the_generated_client(api, gw):
    from tally_gateway_client.api.timeseries import (
        aggregate_event_records,
        read_event_records,
        search_event_records,
        write_event_records_sync,
    )
    from tally_gateway_client.models import (
        AggregateEventRecordsRequest,
        AggregateEventRecordsRequestAggregationQuery,
        AggregateEventRecordsRequestAggregationQueryDistinct,
        Equals,
        Event,
        EventItem,
        ReadEventRecordsRequest,
        SearchEventRecordsRequest,
        SearchQuery,
        TimeInterval,
        WriteEventRecordsRequest,
    )

    client = api.Client(base_url=gw, raise_on_unexpected_status=True)
    tsid = f"client-{uuid.uuid4().hex[:10]}"
    device = uuid.uuid4().hex[:12]  # a value no other test writes, so the search finds just these
    value = base64.b64encode(device.encode()).decode()
    start = datetime.now(UTC)
    events = [
        Event(
            time_series_id=tsid,
            event_time=start + timedelta(milliseconds=i),
            event_id=f"{tsid}-{i}",
            event_items=[EventItem(event_item_key="deviceType", event_item_value=value)],
        )
        for i in range(25)
    ]
    written = write_event_records_sync.sync(
        client=client, body=WriteEventRecordsRequest(namespace="playback", events=events)
    )
    assert written.accepted == 25
    again = write_event_records_sync.sync(
        client=client, body=WriteEventRecordsRequest(namespace="playback", events=events[:3])
    )
    assert again.accepted == 3  # a retry of stored events: taken, stored once

    interval = TimeInterval(start=start - timedelta(minutes=1), end=start + timedelta(minutes=1))

    def all_pages():
        ids, token = [], None
        while True:
            page = read_event_records.sync(
                client=client,
                body=ReadEventRecordsRequest(
                    namespace="playback", time_series_id=tsid, time_interval=interval, page_size=10, page_token=token
                ),
            )
            ids += [e.event_id for e in page.events]
            token = page.next_page_token if isinstance(page.next_page_token, str) else None
            if token is None:
                return ids

    def read_back():
        ids = all_pages()
        return ids if len(ids) == 25 else None

    ids = until("25 events read back", read_back, timeout=60, every=1)
    assert ids == [f"{tsid}-{i}" for i in reversed(range(25))]  # newest first, each once

    query = SearchQuery(equals=Equals(event_item_key="deviceType", event_item_value=value))

    def searched():
        page = search_event_records.sync(
            client=client,
            body=SearchEventRecordsRequest(
                namespace="playback", time_interval=interval, search_query=query, page_size=100
            ),
        )
        return page if len(page.events) == 25 else None

    hits = until("the events searchable", searched, timeout=60, every=1)
    assert {e.time_series_id for e in hits.events} == {tsid}
    distinct = aggregate_event_records.sync(
        client=client,
        body=AggregateEventRecordsRequest(
            namespace="playback",
            time_interval=interval,
            search_query=query,
            aggregation_query=AggregateEventRecordsRequestAggregationQuery(
                distinct=AggregateEventRecordsRequestAggregationQueryDistinct(event_item_key="deviceType")
            ),
        ),
    )
    assert [(v.event_item_value, v.count) for v in distinct.distinct.values] == [(value, 25)]
