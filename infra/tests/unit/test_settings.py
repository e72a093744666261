from pathlib import Path

import pytest
from tally.settings import DEFAULTS_FILE, REPO, Settings, read_env_file


def test_defaults_file_documents_every_key_with_a_value():
    values = read_env_file(DEFAULTS_FILE)
    assert values["TALLY_KAFKA_PORT"] == "9092"
    assert values["TALLY_POSTGRES_PORT"] == "55432"
    assert values["TALLY_HOST"] == "127.0.0.1"


def test_environment_overrides_defaults_and_empty_means_default():
    s = Settings.load({"TALLY_KAFKA_PORT": "19092", "TALLY_FLINK_PORT": ""})
    assert s.port("TALLY_KAFKA_PORT") == 19092
    assert s.port("TALLY_FLINK_PORT") == 8081


def test_home_defaults_to_repo_dot_tally_and_is_overridable(tmp_path):
    assert Settings.load({}).home == REPO / ".tally"
    assert Settings.load({"TALLY_HOME": str(tmp_path)}).home == tmp_path


@pytest.mark.parametrize("raw", ["abc", "0", "70000"])
def test_bad_ports_are_rejected_with_the_key_named(raw):
    s = Settings.load({"TALLY_KAFKA_PORT": raw})
    with pytest.raises(ValueError, match="TALLY_KAFKA_PORT"):
        s.port("TALLY_KAFKA_PORT")


def test_unknown_setting_is_an_error():
    with pytest.raises(KeyError, match="TALLY_NOPE"):
        Settings.load({}).get("TALLY_NOPE")


def test_comments_and_blank_lines_are_ignored(tmp_path):
    f = tmp_path / "x.env"
    f.write_text("# TALLY_A=1\n\nTALLY_B = two words \nnot a setting\n")
    assert read_env_file(f) == {"TALLY_B": "two words"}


def test_the_admin_token_is_made_once_private_and_kept(tmp_path):
    s = Settings.load({"TALLY_HOME": str(tmp_path)})
    token = s.admin_token()
    path = tmp_path / "admin-token"
    assert len(token) >= 32 and path.read_text() == token
    assert path.stat().st_mode & 0o777 == 0o600
    assert Settings.load({"TALLY_HOME": str(tmp_path)}).admin_token() == token, "kept across runs"
    assert s.admin_headers() == {"Authorization": f"Bearer {token}"}


def test_a_given_admin_token_wins_and_no_file_is_made(tmp_path):
    s = Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_ADMIN_TOKEN": "given"})
    assert s.admin_token() == "given"
    assert not (tmp_path / "admin-token").exists()


def test_a_kafka_cluster_id_never_reads_as_an_option():
    from tally.components.kafka import _kafka_uuid

    ids = [_kafka_uuid() for _ in range(2000)]  # one in 64 random ids starts with '-'
    assert not any(i.startswith("-") for i in ids)
    assert all(len(i) == 22 for i in ids)


def test_kafka_clients_are_plaintext_unless_security_is_set(tmp_path):
    s = Settings.load({"TALLY_HOME": str(tmp_path)})
    assert s.kafka_client_config() == {"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "PLAINTEXT"}
    assert s.kafka_client_env()["TALLY_KAFKA_SECURITY_PROTOCOL"] == "PLAINTEXT"


def test_kafka_scram_over_tls_for_librdkafka_and_java_with_the_password_from_its_file(tmp_path):
    pw = tmp_path / "kafka.pw"
    pw.write_text("s3cret\n")
    s = Settings.load(
        {
            "TALLY_HOME": str(tmp_path),
            "TALLY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "TALLY_KAFKA_SASL_USERNAME": "tally",
            "TALLY_KAFKA_SASL_PASSWORD_FILE": str(pw),
            "TALLY_KAFKA_SSL_TRUSTSTORE": "/etc/tally/ca.pem",
            "TALLY_KAFKA_SSL_VERIFY_HOSTNAME": "false",
        }
    )
    assert s.kafka_client_config() == {
        "bootstrap.servers": "127.0.0.1:9094",  # the SASL_SSL listener
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "tally",
        "sasl.password": "s3cret",
        "ssl.ca.location": "/etc/tally/ca.pem",
        "ssl.endpoint.identification.algorithm": "none",
    }
    env = s.kafka_client_env()
    assert env["TALLY_KAFKA_SASL_PASSWORD"] == "s3cret" and env["TALLY_KAFKA_SSL_TRUSTSTORE"] == "/etc/tally/ca.pem"


def test_the_local_brokers_scram_password_is_made_once_and_private(tmp_path, monkeypatch):
    from tally import privileges

    monkeypatch.setattr(privileges, "is_root", lambda: False)
    s = Settings.load({"TALLY_HOME": str(tmp_path)})
    pw = s.kafka_scram_password()
    path = tmp_path / "service-secrets" / "kafka-scram-password"
    assert len(pw) >= 32 and path.read_text() == pw and path.stat().st_mode & 0o777 == 0o600
    assert Settings.load({"TALLY_HOME": str(tmp_path)}).kafka_scram_password() == pw
    assert Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_KAFKA_SCRAM_PASSWORD": "g"}).kafka_scram_password() == "g"


def test_java_clients_get_the_password_as_a_reference_never_the_secret(tmp_path):
    s = Settings.load(
        {
            "TALLY_HOME": str(tmp_path),
            "TALLY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "TALLY_KAFKA_SASL_USERNAME": 'ta"lly',
            "TALLY_KAFKA_SASL_PASSWORD": "s3cret",
            "TALLY_KAFKA_SSL_TRUSTSTORE": "/etc/tally/ca.pem",
        }
    )
    props = s.kafka_java_properties("${env:TALLY_KAFKA_SASL_PASSWORD}")
    assert props == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required"
        ' username="ta\\"lly" password="${env:TALLY_KAFKA_SASL_PASSWORD}";',
        "ssl.truststore.location": "/etc/tally/ca.pem",
        "ssl.truststore.type": "PEM",
        "ssl.endpoint.identification.algorithm": "https",
    }
    assert Settings.load({"TALLY_HOME": str(tmp_path)}).kafka_java_properties("x") == {}


def test_clients_dial_the_secure_listener_once_their_security_is_on(tmp_path):
    plain = Settings.load({"TALLY_HOME": str(tmp_path)})
    assert plain.kafka_bootstrap() == plain.kafka_plaintext_bootstrap() == "127.0.0.1:9092"
    secure = Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL"})
    assert secure.kafka_bootstrap() == secure.kafka_secure_bootstrap() == "127.0.0.1:9094"
    assert secure.kafka_plaintext_bootstrap() == "127.0.0.1:9092"


def test_the_python_driver_logs_in_and_speaks_tls_as_configured(tmp_path):
    no_login = Settings.load({"TALLY_HOME": str(tmp_path)})
    no_login.values["TALLY_CASSANDRA_USERNAME"] = ""  # a cluster without authentication
    assert no_login.cassandra_connect_args() == {}
    ca = "/etc/ssl/certs/ca-certificates.crt"
    s = Settings.load(
        {
            "TALLY_HOME": str(tmp_path),
            "TALLY_CASSANDRA_USERNAME": "tally",
            "TALLY_CASSANDRA_PASSWORD": "s3cret",
            "TALLY_CASSANDRA_SSL": "true",
            "TALLY_CASSANDRA_SSL_TRUSTSTORE": ca,
            "TALLY_CASSANDRA_SSL_VERIFY_HOSTNAME": "false",
        }
    )
    args = s.cassandra_connect_args()
    assert args["auth_provider"].username == "tally" and args["auth_provider"].password == "s3cret"
    assert args["ssl_context"].check_hostname is False
    assert s.cassandra_client_env()["TALLY_CASSANDRA_PASSWORD"] == "s3cret"
    with pytest.raises(ValueError, match="TALLY_CASSANDRA_SSL="):
        Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_CASSANDRA_SSL": "yes"}).cassandra_connect_args()


def test_the_local_cassandra_password_is_made_once_for_the_jobs_to_read(tmp_path, monkeypatch):
    from tally import privileges

    monkeypatch.setattr(privileges, "is_root", lambda: False)  # no service user to hand it to here
    s = Settings.load({"TALLY_HOME": str(tmp_path)})
    path = Path(s.cassandra_password_file())
    assert path == tmp_path / "service-secrets" / "cassandra-password"
    assert path.read_text() == s.cassandra_password() and len(s.cassandra_password()) >= 32
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert s.cassandra_client_env()["TALLY_CASSANDRA_PASSWORD"] == s.cassandra_password()
    given = Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_CASSANDRA_PASSWORD": "g"})
    assert given.cassandra_password() == "g" and given.cassandra_password_file() == ""


def test_the_secure_profile_sets_every_client_for_tls_and_a_login_in_its_own_home(monkeypatch):
    from tally import privileges

    monkeypatch.setattr(privileges, "is_root", lambda: False)
    s = Settings.load({"TALLY_SECURE": "1"})
    home = REPO / ".tally" / "secure"
    assert s.secure and s.home == home
    assert s.get("TALLY_KAFKA_SECURITY_PROTOCOL") == "SASL_SSL"
    assert s.get("TALLY_KAFKA_SASL_USERNAME") == s.get("TALLY_KAFKA_SCRAM_USER") == "tally"
    assert s.get("TALLY_KAFKA_SASL_PASSWORD_FILE") == f"{home}/service-secrets/kafka-scram-password"
    assert s.get("TALLY_KAFKA_SSL_TRUSTSTORE") == s.get("TALLY_CASSANDRA_SSL_TRUSTSTORE") == f"{home}/tls/ca.pem"
    assert s.get("TALLY_CASSANDRA_SSL") == "true"
    assert s.kafka_bootstrap() == "127.0.0.1:9094"
    # the environment still wins, and the ordinary stack is untouched
    assert (
        Settings.load({"TALLY_SECURE": "1", "TALLY_KAFKA_SASL_USERNAME": "me"}).get("TALLY_KAFKA_SASL_USERNAME") == "me"
    )
    assert not Settings.load({}).secure
    with pytest.raises(ValueError, match="one node"):
        _ = Settings.load({"TALLY_SECURE": "1", "TALLY_NODES": "3"}).secure


def test_the_launcher_administers_a_secure_broker_as_its_own_plain_identity(tmp_path):
    s = Settings.load({"TALLY_SECURE": "1", "TALLY_HOME": str(tmp_path)})
    conf = s.kafka_admin_config()
    assert conf["bootstrap.servers"] == "127.0.0.1:9094" and conf["security.protocol"] == "SASL_SSL"
    assert conf["sasl.mechanism"] == "PLAIN" and conf["sasl.username"] == "tally-broker"
    assert conf["sasl.password"] == (tmp_path / "secrets" / "kafka-broker-password").read_text()
    assert conf["ssl.ca.location"] == str(tmp_path / "tls" / "ca.pem")
    plain = Settings.load({"TALLY_HOME": str(tmp_path)}).kafka_admin_config()
    assert plain == {"bootstrap.servers": "127.0.0.1:9092", "log_level": 0}
