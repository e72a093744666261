"""`./tally deploy` against real servers: the local stack stands in for clusters someone else runs
(every step talks to its server's own API: Kafka's admin protocol, CQL, psql, Connect's and Flink's
REST, the registry)."""

import os
import subprocess

from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from tally.settings import REPO

STEPS = (
    "kafka topics",
    "cassandra tally_meta",
    "postgres control plane",
    "debezium connector",
    "registry schemas",
    "elasticsearch",
    "flink jobs",
)


def tally(*args, env=None):
    return subprocess.run(
        [str(REPO / "tally"), *args], capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}
    )


def test_a_whole_stack_has_nothing_to_deploy(stack):
    for args in (("deploy", "--check"), ("deploy",)):
        r = tally(*args)
        assert r.returncode == 0, r.stdout + r.stderr
        for step in STEPS:
            assert f"{step}: as Tally needs it" in r.stdout, r.stdout


def test_a_changed_topic_config_is_named_by_check_and_repaired_by_deploy(stack, settings):
    admin = AdminClient({"bootstrap.servers": settings.kafka_bootstrap(), "log_level": 0})

    def set_retention(ms: str):
        res = ConfigResource(
            "topic",
            "tally.deadletter",
            incremental_configs=[ConfigEntry("retention.ms", ms, incremental_operation=AlterConfigOpType.SET)],
        )
        for fut in admin.incremental_alter_configs([res]).values():
            fut.result()

    set_retention("86400000")
    try:
        r = tally("deploy", "--check")
        assert r.returncode == 1, r.stdout
        assert "topic tally.deadletter: retention.ms should be 2419200000" in r.stdout, r.stdout
        r = tally("deploy")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "set retention.ms=2419200000 on topic tally.deadletter" in r.stdout, r.stdout
        assert tally("deploy", "--check").returncode == 0
    finally:
        set_retention("2419200000")


def test_a_mismatch_that_would_move_data_is_refused_by_name(stack, settings, tmp_path):
    env = tmp_path / "other.env"
    env.write_text("TALLY_TOPIC_PARTITIONS=6\n")  # the cluster's topics have 3
    r = tally("deploy", "--env", str(env))
    assert r.returncode == 1
    assert "kafka topics: REFUSED: topic tally.counter.events has 3 partitions, Tally's layout needs 6" in r.stdout
    md = AdminClient({"bootstrap.servers": settings.kafka_bootstrap(), "log_level": 0}).list_topics(timeout=10)
    assert len(md.topics["tally.counter.events"].partitions) == 3  # nothing changed


def test_an_env_file_with_a_key_that_is_no_setting_is_refused(stack, tmp_path):
    env = tmp_path / "typo.env"
    env.write_text("TALLY_KAFKA_BOOTSTAP=elsewhere:9092\n")
    r = tally("deploy", "--check", "--env", str(env))
    assert r.returncode == 1
    assert "TALLY_KAFKA_BOOTSTAP are no settings" in r.stderr, r.stderr
