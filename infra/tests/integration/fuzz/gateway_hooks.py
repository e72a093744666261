"""Schemathesis hooks for the gateway run (SCHEMATHESIS_HOOKS=gateway_hooks).

They aim the generated requests at the run's own namespaces, so the fuzz reaches past "unknown
namespace" into each endpoint's validation and storage, and never writes to or deletes a real
namespace: a body's valid namespace name becomes the run's namespace of the endpoint's kind, a
valid /v1/namespaces/{name} becomes a name under the run's prefix (which the two data
namespaces do not have, so the admin calls cannot delete them either); invalid names stay as they are
(they are the negative cases). Likewise a valid event time becomes now, inside the namespace's
accept window, and a valid read interval the last hour, so writes are taken and reads find them. Every write answered 2xx is logged with its event ids (TALLY_FUZZ_LOG)
so the test can prove that only those reached Kafka."""

import json
import os
import re
from datetime import UTC, datetime, timedelta

import schemathesis

NAME = re.compile(r"^[a-z][a-z0-9_.]{0,39}$")
COUNTERS = os.environ.get("TALLY_FUZZ_COUNTERS", "fz_counters")
EVENTS = os.environ.get("TALLY_FUZZ_EVENTS", "fz_events")
PREFIX = os.environ.get("TALLY_FUZZ_PREFIX", "fzr")
LOG = os.environ.get("TALLY_FUZZ_LOG")


def _instant(v) -> bool:
    try:
        return isinstance(v, str) and datetime.fromisoformat(v).tzinfo is not None
    except ValueError:
        return False


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _retime(v):
    """Valid instants of events and tokens to now; a valid interval to the last hour."""
    if isinstance(v, list):
        return [_retime(x) for x in v]
    if not isinstance(v, dict):
        return v
    now = datetime.now(UTC)
    out = {}
    for k, x in v.items():
        if k in ("eventTime", "generation_time") and _instant(x):
            out[k] = _iso(now)
        elif k == "timeInterval" and isinstance(x, dict) and _instant(x.get("start")) and _instant(x.get("end")):
            out[k] = dict(x, start=_iso(now - timedelta(hours=1)), end=_iso(now + timedelta(minutes=1)))
        else:
            out[k] = _retime(x)
    return out


@schemathesis.hook
def before_call(context, case, kwargs):
    """Every request of every phase (the stateful one builds its own) passes here, so the aim is
    enforced where it cannot be missed: an earlier run without it deleted the stack's namespaces
    through names it had read from GET /v1/namespaces."""
    name = (case.path_parameters or {}).get("name")
    if isinstance(name, str) and NAME.match(name) and not name.startswith(PREFIX):
        case.path_parameters = dict(case.path_parameters, name=(PREFIX + name)[:40])
    body = case.body
    if isinstance(body, dict) and isinstance(body.get("namespace"), str) and NAME.match(body["namespace"]):
        body = dict(body, namespace=COUNTERS if case.operation.path.startswith("/v1/counter/") else EVENTS)
    if isinstance(body, (dict, list)):
        case.body = _retime(body)


def _ids(path: str, body, answer) -> list[str]:
    if path.startswith("/v1/counter/"):
        token = body.get("idempotency_token") if isinstance(body, dict) else None
        if isinstance(token, dict) and "token" in token:
            return [token["token"]]
        return list(answer.get("eventIds", []))
    if "eventIds" in answer:
        return list(answer["eventIds"])
    return [e["eventId"] for e in body["events"]]


@schemathesis.hook
def after_call(context, case, response):
    path = case.operation.path
    writes = ("/AddCount", "/ClearCount", "/AddAndGetCount", "/WriteEventRecords", "/WriteEventRecordsSync")
    if LOG and 200 <= response.status_code < 300 and path.endswith(writes):
        answer = response.json()
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": path, "ids": _ids(path, case.body, answer)}) + "\n")
