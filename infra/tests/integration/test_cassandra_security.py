"""Cassandra with TLS: the local node takes TLS on its native port (beside plaintext) with a
certificate of the stack's CA; a client that trusts the CA gets in, one that does not is refused
at the handshake; and a gateway started from its jar with TALLY_CASSANDRA_SSL reads through it."""

import os
import uuid

import pytest
import requests
from cassandra.cluster import Cluster, NoHostAvailable
from support import free_port, stored_event_ids, until, write_canary
from tally import process
from tally.components.base import JAVA
from tally.components.gateway import gateway_jar
from tally.settings import Settings
from tally.tls import LocalCa


def tls_settings(settings, truststore: str) -> Settings:
    return Settings.load(
        {
            **os.environ,
            "TALLY_HOME": str(settings.home),
            "TALLY_CASSANDRA_SSL": "true",
            "TALLY_CASSANDRA_SSL_TRUSTSTORE": truststore,
        }
    )


def release_version(settings, s: Settings) -> str:
    cluster = Cluster(
        settings.cassandra_hosts(), port=settings.port("TALLY_CASSANDRA_PORT"), **s.cassandra_connect_args()
    )
    try:
        return cluster.connect().execute("SELECT release_version FROM system.local").one()[0]
    finally:
        cluster.shutdown()


def test_the_native_port_speaks_tls_to_a_client_that_trusts_the_stacks_ca(stack, settings):
    assert release_version(settings, tls_settings(settings, str(LocalCa(settings).cert))).startswith("5.")
    with pytest.raises(NoHostAvailable) as e:  # the node's certificate is not one of the system's CAs
        release_version(settings, tls_settings(settings, "/etc/ssl/certs/ca-certificates.crt"))
    assert "certificate verify failed" in str(e.value), e.value


def test_a_gateway_reads_cassandra_over_tls(stack, settings, gw, tmp_path):
    run = uuid.uuid4().hex[:10]
    write_canary(requests, gw, f"tls-{run}")
    port = free_port()
    url = f"http://{settings.host}:{port}"
    env = {
        **os.environ,
        **stack.component("gateway").service_env(),
        "TALLY_GATEWAY_PORT": str(port),
        "TALLY_CASSANDRA_SSL": "true",
        "TALLY_CASSANDRA_SSL_TRUSTSTORE": str(LocalCa(settings).cert),
    }
    ref = process.spawn([JAVA, "-Xmx256m", "-jar", str(gateway_jar())], tmp_path / "gateway.log", env=env)
    try:
        process.wait_until(
            "TLS gateway", lambda: requests.get(f"{url}/healthz", timeout=2).ok, 90, lambda: process.alive(ref)
        )

        until("the event read over TLS", lambda: stored_event_ids(url, f"tls-{run}") == ["c1"], 90, 1)
        assert "TLS trusting" in (tmp_path / "gateway.log").read_text()
    finally:
        process.stop(ref, timeout=20)


def test_the_node_refuses_a_client_without_tallys_login(stack, settings):
    """PasswordAuthenticator: no login, a wrong password and the default superuser (disabled by
    `up`) are refused; Tally's role gets in."""
    from cassandra.auth import PlainTextAuthProvider
    from tally.components.cassandra import login_refused

    def refused(**login) -> bool:
        try:
            cluster = Cluster(settings.cassandra_hosts(), port=settings.port("TALLY_CASSANDRA_PORT"), **login)
            try:
                cluster.connect()
            finally:
                cluster.shutdown()
        except Exception as e:
            return login_refused(e)
        return False

    assert refused()
    assert refused(auth_provider=PlainTextAuthProvider(settings.get("TALLY_CASSANDRA_USERNAME"), "not-it"))
    assert refused(auth_provider=PlainTextAuthProvider("cassandra", "cassandra"))
    assert release_version(settings, settings).startswith("5.")
