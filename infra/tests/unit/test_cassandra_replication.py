"""The replication and consistency settings of Tally's keyspaces (tally_meta here; the jobs make
the namespaces' keyspaces from the same settings)."""

import pytest
from tally.components.cassandra import (
    META_CQL,
    ONE_NODE_REPLICATION,
    cql_statements,
    keyspace_replication,
    schema_agrees,
    with_replication,
)
from tally.settings import Settings


def replication(**env):
    return keyspace_replication(Settings.load(env))


def test_one_node_by_default_keeps_the_file_as_it_is():
    assert replication() == ONE_NODE_REPLICATION
    create = next(s for s in cql_statements(META_CQL) if s.startswith("CREATE KEYSPACE"))
    assert with_replication(create, replication()) == create


def test_a_cluster_of_three_replicates_in_its_datacenter():
    three = replication(
        TALLY_CASSANDRA_REPLICATION_STRATEGY="NetworkTopologyStrategy", TALLY_CASSANDRA_REPLICATION_FACTOR="3"
    )
    assert three == "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}"
    create = next(s for s in cql_statements(META_CQL) if s.startswith("CREATE KEYSPACE"))
    assert with_replication(create, three).endswith("WITH replication = " + three)


@pytest.mark.parametrize(
    "env",
    [
        {"TALLY_CASSANDRA_REPLICATION_STRATEGY": "LocalStrategy"},
        {"TALLY_CASSANDRA_REPLICATION_FACTOR": "0"},
        {"TALLY_CASSANDRA_DATACENTER": "dc1': 3, 'x"},
        {"TALLY_CASSANDRA_CONSISTENCY": "MOSTLY"},
    ],
)
def test_settings_that_would_make_bad_ddl_or_sessions_are_refused(env):
    with pytest.raises(ValueError):
        replication(**env)


def test_a_node_back_from_a_stop_is_ready_once_it_has_the_schema_of_every_peer_up():
    assert schema_agrees("v2", [("v2", True), ("v2", True)])
    assert not schema_agrees("v1", [("v2", True), ("v2", True)])  # not pulled yet
    assert schema_agrees("v2", [("v2", True), ("v1", False)])  # a peer down keeps its last version
    assert schema_agrees("v2", [("v1", None)])  # one the driver has not reached is not waited for
    assert schema_agrees("v1", [])  # the first node of a ring


def commitlog(tmp_path, **env):
    from tally.components.cassandra import Cassandra

    return Cassandra(Settings.load({"TALLY_HOME": str(tmp_path), **env}), lambda *a: None).commitlog_sync()


def test_the_commit_log_syncs_periodically_by_default_and_each_write_in_group_or_batch(tmp_path):
    assert commitlog(tmp_path) == "commitlog_sync: periodic\ncommitlog_sync_period: 10000ms"
    group = commitlog(tmp_path, TALLY_CASSANDRA_COMMITLOG_SYNC="group", TALLY_CASSANDRA_COMMITLOG_WINDOW_MS="10")
    assert group == "commitlog_sync: group\ncommitlog_sync_group_window: 10ms"
    assert commitlog(tmp_path, TALLY_CASSANDRA_COMMITLOG_SYNC="batch") == "commitlog_sync: batch"


@pytest.mark.parametrize(
    "env",
    [{"TALLY_CASSANDRA_COMMITLOG_SYNC": "sometimes"}, {"TALLY_CASSANDRA_COMMITLOG_WINDOW_MS": "0"}],
)
def test_a_commit_log_mode_cassandra_would_refuse_is_refused_first(tmp_path, env):
    with pytest.raises(ValueError):
        commitlog(tmp_path, **env)
