"""The local broker's listeners: the ordinary stack's, and the secure profile's without plaintext."""

from tally.components.kafka import Kafka
from tally.settings import Settings


def props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))


def test_the_ordinary_broker_keeps_plaintext_for_its_own_links_beside_sasl_ssl(tmp_path):
    p = props(Kafka(Settings.load({"TALLY_HOME": str(tmp_path)})).listeners())
    assert p["listeners"].startswith("PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9094")
    assert p["inter.broker.listener.name"] == "PLAINTEXT"


def test_the_secure_broker_has_no_plaintext_listener_and_logs_its_own_links_in(tmp_path):
    s = Settings.load({"TALLY_SECURE": "1", "TALLY_HOME": str(tmp_path)})
    text = Kafka(s).secure_listeners(tmp_path / "tls" / "ca.pem")
    assert "PLAINTEXT" not in text
    p = props(text)
    assert p["listeners"] == "SASL_SSL://127.0.0.1:9094,CONTROLLER://127.0.0.1:9093"
    assert p["listener.security.protocol.map"] == "SASL_SSL:SASL_SSL,CONTROLLER:SASL_SSL"
    assert p["inter.broker.listener.name"] == "SASL_SSL"
    assert p["sasl.mechanism.inter.broker.protocol"] == p["sasl.mechanism.controller.protocol"] == "PLAIN"
    assert p["listener.name.controller.sasl.enabled.mechanisms"] == "PLAIN"
    pw = s.kafka_broker_password()
    jaas = p["listener.name.controller.plain.sasl.jaas.config"]
    assert f'username="tally-broker" password="{pw}" user_tally-broker="{pw}"' in jaas
    assert p["ssl.truststore.location"] == str(tmp_path / "tls" / "ca.pem")


def test_the_nodes_share_one_cluster_id_whichever_formats_first(tmp_path):
    # `up` starts the brokers side by side: node 2 or 3 may reach its format before node 1
    s = Settings.load({"TALLY_HOME": str(tmp_path), "TALLY_NODES": "3"})
    ids = [Kafka(s, print, n).cluster_id() for n in (3, 1, 2)]
    assert len(set(ids)) == 1 and len(ids[0]) == 22
    assert [p.name for p in s.data("kafka-cluster-id").parent.iterdir() if p.name.startswith(".")] == []
