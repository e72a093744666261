"""The replication and consistency settings of Tally's keyspaces (tally_meta here; the jobs make
the namespaces' keyspaces from the same settings)."""

import pytest
from tally.components.cassandra import (
    META_CQL,
    ONE_NODE_REPLICATION,
    cql_statements,
    keyspace_replication,
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
