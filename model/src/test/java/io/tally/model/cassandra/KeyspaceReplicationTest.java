package io.tally.model.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KeyspaceReplicationTest {
    @Test
    void oneNodeIsSimpleStrategyWithFactorOne() {
        assertThat(NamespaceKeyspace.create("ns_a", KeyspaceReplication.ONE_NODE))
                .isEqualTo("CREATE KEYSPACE IF NOT EXISTS ns_a WITH replication = "
                        + "{'class': 'SimpleStrategy', 'replication_factor': 1}");
    }

    @Test
    void aClusterReplicatesInTheLocalDatacenter() {
        assertThat(new KeyspaceReplication("NetworkTopologyStrategy", 3, "dc-east_1").cql())
                .isEqualTo("{'class': 'NetworkTopologyStrategy', 'dc-east_1': 3}");
    }

    @Test
    void settingsThatWouldMakeBadDdlAreRefused() {
        assertThatThrownBy(() -> new KeyspaceReplication("LocalStrategy", 1, "dc1"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("SimpleStrategy or NetworkTopologyStrategy");
        assertThatThrownBy(() -> new KeyspaceReplication("SimpleStrategy", 0, "dc1"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new KeyspaceReplication("NetworkTopologyStrategy", 3, "dc1': 3, 'x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a safe datacenter name");
    }
}
