"""`./tally deploy`'s pure pieces: where the targets are, what the connector is given, how the
deployment's env file is read."""

import pytest
from tally.deploy import Connector, Targets, _same_replication
from tally.settings import Settings


def settings(tmp_path, **values) -> Settings:
    env = tmp_path / "deploy.env"
    env.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return Settings.load({"TALLY_HOME": str(tmp_path)}, overlay=env)


def test_without_addresses_the_targets_are_the_local_stack(tmp_path):
    t = Targets.of(settings(tmp_path))
    assert t.kafka == "127.0.0.1:9092"
    assert t.cassandra == (("127.0.0.1", 9042),)
    assert t.postgres == ("127.0.0.1", 55432)
    assert (t.registry, t.connect, t.flink) == (
        "http://127.0.0.1:8085",
        "http://127.0.0.1:8083",
        "http://127.0.0.1:8081",
    )
    assert t.replication == 1


def test_an_env_file_names_someone_elses_clusters(tmp_path):
    t = Targets.of(
        settings(
            tmp_path,
            TALLY_KAFKA_BOOTSTRAP="k1:9093,k2:9093",
            TALLY_CASSANDRA_CONTACT="c1:19042,c2:19042",
            TALLY_POSTGRES_ADDRESS="pg.internal:5432",
            TALLY_FLINK_URL="https://flink.internal:8443/",
            TALLY_TOPIC_REPLICATION="3",
        )
    )
    assert t.kafka == "k1:9093,k2:9093"
    assert t.cassandra == (("c1", 19042), ("c2", 19042))
    assert t.postgres == ("pg.internal", 5432)
    assert t.flink == "https://flink.internal:8443"
    assert t.replication == 3


def test_a_key_of_the_env_file_that_is_no_setting_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="TALLY_KAFKA_BOOTSTAP"):
        settings(tmp_path, TALLY_KAFKA_BOOTSTAP="typo:9092")


def test_the_environment_overrides_the_env_file(tmp_path):
    env = tmp_path / "deploy.env"
    env.write_text("TALLY_KAFKA_BOOTSTRAP=from-file:9092\n")
    s = Settings.load({"TALLY_KAFKA_BOOTSTRAP": "from-env:9092"}, overlay=env)
    assert Targets.of(s).kafka == "from-env:9092"


def test_a_secret_comes_from_its_file_when_one_is_named(tmp_path):
    pw = tmp_path / "cdc.pw"
    pw.write_text("s3cret\n")
    s = settings(tmp_path, TALLY_CDC_PASSWORD_FILE=str(pw))
    assert s.secret("TALLY_CDC_PASSWORD") == "s3cret"
    assert settings(tmp_path).secret("TALLY_CDC_PASSWORD") == "tally_cdc"


def test_the_connector_gets_the_targets_addresses_and_only_a_reference_to_its_password(tmp_path):
    s = settings(
        tmp_path,
        TALLY_POSTGRES_ADDRESS="pg.internal:5432",
        TALLY_CDC_USER="cdc",
        TALLY_CDC_PASSWORD="never-sent",
        TALLY_CONNECT_CDC_PASSWORD_REF="${file:/etc/connect/cdc.properties:password}",
    )
    cfg = Connector().wanted(Targets.of(s), s)
    assert (cfg["database.hostname"], cfg["database.port"], cfg["database.user"]) == ("pg.internal", "5432", "cdc")
    assert cfg["database.password"] == "${file:/etc/connect/cdc.properties:password}"
    assert "never-sent" not in str(cfg)
    assert cfg["slot.name"] == "tally_control"


def test_a_replication_map_is_compared_by_meaning():
    asked = "{'class': 'NetworkTopologyStrategy', 'dc1': 3}"
    assert _same_replication({"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3"}, asked)
    assert not _same_replication({"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "1"}, asked)
    assert _same_replication(
        {"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"},
        "{'class': 'SimpleStrategy', 'replication_factor': 1}",
    )
