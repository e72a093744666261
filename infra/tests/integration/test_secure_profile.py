"""The secure profile (`./tally test --secure`): every server of `./tally up --secure` with its
authentication and TLS on stands in for clusters a team already runs. Each refuses a client
without credentials; `./tally deploy` finds Tally whole on them (a topic deleted behind its back
is made again); and counters and TimeSeries events go end to end over the secured connections
(the gateway, registry, Connect, the jobs and the exporter all reach Kafka by SCRAM over TLS,
Cassandra by TLS with a login, and Elasticsearch by https with a login: an event is found by
SearchEventRecords, which the gateway asks Elasticsearch, after the writer job indexed it)."""

import base64
import os
import socket
import subprocess
import uuid

import pytest
import requests
from cassandra.cluster import Cluster
from confluent_kafka.admin import AdminClient
from counter_load import wait_count
from support import add_counts, kafka_refused, now_iso, stored_event_ids, until, write_canary
from tally.components.cassandra import login_refused
from tally.settings import REPO


@pytest.fixture(scope="module", autouse=True)
def secure_profile(settings):
    if not settings.secure:
        pytest.skip("the secure profile only: ./tally test --secure")


def tally(*args, **env):
    return subprocess.run(
        [str(REPO / "tally"), *args], capture_output=True, text=True, timeout=900, env={**os.environ, **env}
    )


def test_kafka_has_no_plaintext_listener_and_refuses_a_client_that_cannot_log_in(settings):
    host = settings.host
    with pytest.raises(OSError):  # nothing listens where the plaintext listener was
        socket.create_connection((host, settings.port("TALLY_KAFKA_PORT")), timeout=3).close()
    good = settings.kafka_client_config()
    assert good["security.protocol"] == "SASL_SSL"
    base = {"bootstrap.servers": good["bootstrap.servers"]}
    kafka_refused({**base, "security.protocol": "PLAINTEXT"})
    kafka_refused({**base, "security.protocol": "SSL", "ssl.ca.location": good["ssl.ca.location"]})
    wrong = kafka_refused({**good, "sasl.password": "not-" + good["sasl.password"]})
    assert "_AUTHENTICATION" in wrong, wrong
    controller = {"bootstrap.servers": f"{host}:{settings.port('TALLY_KAFKA_CONTROLLER_PORT')}"}
    kafka_refused({**controller, "security.protocol": "PLAINTEXT"})
    topics = AdminClient({**good, "log_level": 0}).list_topics(timeout=10).topics
    assert "tally.counter.events" in topics


def test_cassandra_takes_only_tls_and_a_login(settings):
    from cassandra.auth import PlainTextAuthProvider

    args = settings.cassandra_connect_args()
    assert "ssl_context" in args and "auth_provider" in args
    port = settings.port("TALLY_CASSANDRA_PORT")

    def refused(**connect) -> BaseException:
        cluster = Cluster([settings.host], port=port, connect_timeout=5, **connect)
        try:
            with pytest.raises(Exception) as e:
                cluster.connect()
            return e.value
        finally:
            cluster.shutdown()

    refused(auth_provider=args["auth_provider"])  # a login without TLS: the node speaks only TLS
    assert login_refused(refused(ssl_context=args["ssl_context"]))  # TLS without a login
    wrong = PlainTextAuthProvider(settings.get("TALLY_CASSANDRA_USERNAME"), "not-it")
    assert login_refused(refused(ssl_context=args["ssl_context"], auth_provider=wrong))
    cluster = Cluster([settings.host], port=port, **args)
    try:
        assert cluster.connect().execute("SELECT release_version FROM system.local").one()[0].startswith("5.")
    finally:
        cluster.shutdown()


def test_postgres_refuses_a_connection_without_its_password(stack, settings):
    pg = stack.component("postgres").client()
    for password in ("", "not-it"):
        argv, env = pg._psql("tally_control", "postgres", None, {})
        env["PGPASSWORD"] = password
        r = subprocess.run([*argv, "-c", "SELECT 1"], capture_output=True, text=True, env=env)
        assert r.returncode != 0 and ("password" in r.stderr), r.stderr


def test_the_admin_api_and_registry_writes_refuse_a_caller_without_the_token(stack, settings):
    gw = stack.component("gateway").url()
    assert requests.get(f"{gw}/v1/namespaces", timeout=10).status_code == 401
    registry = stack.component("registry").url()
    schema = {"schema": '{"type":"record","name":"T","fields":[{"name":"a","type":"int"}]}'}
    subject = f"it-secure-{uuid.uuid4().hex[:6]}-value"
    assert requests.post(f"{registry}/subjects/{subject}/versions", json=schema, timeout=10).status_code == 401


def test_elasticsearch_takes_only_https_and_a_login(stack, settings):
    url = settings.elasticsearch_url()
    assert url.startswith("https://")
    plain = url.replace("https://", "http://")
    with pytest.raises(requests.exceptions.ConnectionError):  # plain HTTP on the TLS port: no answer
        requests.get(f"{plain}/", timeout=10)
    good = settings.elasticsearch_requests_args()
    assert set(good) == {"auth", "verify"}
    with pytest.raises(requests.exceptions.SSLError):  # its certificate is of the stack's CA only
        requests.get(f"{url}/", timeout=10, verify=True)
    for auth in (None, (good["auth"][0], "not-it"), ("elastic", "changeme")):
        r = requests.get(f"{url}/_cluster/health", auth=auth, verify=good["verify"], timeout=10)
        assert r.status_code == 401, r.text
        assert r.json()["error"]["type"] == "security_exception"
    health = requests.get(f"{url}/_cluster/health", timeout=10, **good)
    assert health.status_code == 200 and health.json()["status"] in ("green", "yellow"), health.text
    # Tally's user has its own indices and templates, not the rest of the cluster
    assert requests.put(f"{url}/not-tally", timeout=10, **good).status_code == 403
    wrong = tally("deploy", "--check", TALLY_ELASTICSEARCH_PASSWORD="not-it")
    assert wrong.returncode == 1 and "elasticsearch: REFUSED" in wrong.stdout, wrong.stdout


def test_deploy_finds_tally_whole_and_makes_again_a_topic_deleted_behind_its_back(stack, settings):
    check = tally("deploy", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    admin = AdminClient({**settings.kafka_client_config(), "log_level": 0})
    admin.delete_topics(["tally.deadletter"])["tally.deadletter"].result(30)
    until("the topic gone", lambda: "tally.deadletter" not in admin.list_topics(timeout=10).topics, 30, 1)
    missing = tally("deploy", "--check")
    assert missing.returncode == 1 and "tally.deadletter" in missing.stdout, missing.stdout
    made = tally("deploy")
    assert made.returncode == 0, made.stdout + made.stderr
    assert tally("deploy", "--check").returncode == 0


def test_counts_and_events_go_end_to_end_over_the_secured_connections(stack, jobs):
    gw = stack.component("gateway").url()
    run = uuid.uuid4().hex[:8]
    add_counts(gw, "video_views", f"secure-{run}", [f"{run}-{i}" for i in range(3)])
    wait_count(gw, "video_views", f"secure-{run}", 3, timeout=90)
    write_canary(requests.Session(), gw, f"secure-{run}")
    until("the event stored", lambda: stored_event_ids(gw, f"secure-{run}") == ["c1"], 90, 1)
    search = {
        "namespace": "playback",
        "timeInterval": {"start": now_iso(-600), "end": now_iso(60)},
        "searchQuery": {
            "equals": {
                "eventItemKey": "deviceType",
                "eventItemValue": base64.b64encode(f"secure-{run}".encode()).decode(),
            }
        },
        "pageSize": 10,
    }

    def found():
        r = requests.post(f"{gw}/v1/timeseries/SearchEventRecords", json=search, timeout=30)
        assert r.status_code == 200, r.text  # a 503 here: the gateway could not log in to Elasticsearch
        return [e["eventId"] for e in r.json()["events"]]

    until("the event indexed and found", lambda: found() == ["c1"], 90, 1)


def test_no_password_is_on_a_command_line_or_in_a_readable_config(stack, settings):
    secrets = {
        "kafka broker": settings.kafka_broker_password(),
        "kafka scram": settings.kafka_scram_password(),
        "cassandra": settings.cassandra_password(),
        "admin token": settings.admin_token(),
        "elasticsearch": settings.elasticsearch_password(),
    }
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace")
        except OSError:
            continue
        for what, secret in secrets.items():
            assert secret not in argv, f"the {what} password is on the command line of pid {pid}"
    for conf in (
        stack.component("kafka").conf_dir / "server.properties",
        stack.component("cassandra").conf_dir / "cassandra.yaml",
        stack.component("elasticsearch").conf_dir / "elasticsearch.yml",
        stack.component("elasticsearch").conf_dir / "users",
    ):
        assert conf.stat().st_mode & 0o077 == 0, f"{conf} is readable by others"
