package io.tally.jobs.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tally.jobs.config.JobArgs;
import io.tally.jobs.config.JobSettings;
import io.tally.model.cassandra.KeyspaceReplication;
import java.util.List;
import org.junit.jupiter.api.Test;

class CassandraEndpointTest {
    @Test
    void theDefaultsAreOneNode() {
        CassandraEndpoint e = CassandraEndpoint.of(JobArgs.parse("t", JobSettings.CASSANDRA, new String[0]));
        assertThat(e).isEqualTo(CassandraEndpoint.oneNode("127.0.0.1", 9042));
        assertThat(e.replication()).isEqualTo(KeyspaceReplication.ONE_NODE);
        assertThat(e.batching()).isEqualTo(WriteBatching.STOCK); // a stock cluster's warning thresholds
    }

    @Test
    void batchBoundsFromTheArguments() {
        CassandraEndpoint e = CassandraEndpoint.of(JobArgs.parse("t", JobSettings.CASSANDRA, new String[] {
            "--cassandra.batch.partitions",
            "100",
            "--cassandra.batch.bytes",
            "61440",
            "--cassandra.batch.linger.ms",
            "50"
        }));
        assertThat(e.batching()).isEqualTo(new WriteBatching(100, 61440, 50));
    }

    @Test
    void batchBoundsMustBePositive() {
        assertThatThrownBy(() -> new WriteBatching(0, 5120, 5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("partitions 0");
    }

    @Test
    void aClusterOfThreeFromTheArguments() {
        CassandraEndpoint e = CassandraEndpoint.of(JobArgs.parse("t", JobSettings.CASSANDRA, new String[] {
            "--cassandra.host", "127.0.0.1, 127.0.0.2,127.0.0.3",
            "--cassandra.consistency", "LOCAL_QUORUM",
            "--cassandra.replication.strategy", "NetworkTopologyStrategy",
            "--cassandra.replication.factor", "3"
        }));
        assertThat(e.hosts()).isEqualTo(List.of("127.0.0.1", "127.0.0.2", "127.0.0.3"));
        assertThat(e.consistency()).isEqualTo("LOCAL_QUORUM");
        assertThat(e.replication().cql()).isEqualTo("{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}");
    }

    @Test
    void anUnknownConsistencyLevelIsRefused() {
        assertThatThrownBy(() -> new CassandraEndpoint(
                        List.of("h"),
                        9042,
                        "MOSTLY",
                        KeyspaceReplication.ONE_NODE,
                        WriteBatching.STOCK,
                        io.tally.common.CassandraClientSecurity.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("consistency level 'MOSTLY'");
    }

    @Test
    void aLoginAndTlsComeFromArgumentsWithThePasswordOnlyAsAFile(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path pw = java.nio.file.Files.writeString(dir.resolve("cassandra.password"), "s3cret\n");
        CassandraEndpoint e = CassandraEndpoint.of(io.tally.jobs.config.JobArgs.parse(
                io.tally.jobs.counter.CounterRollupJob.NAME,
                io.tally.jobs.counter.CounterRollupJob.SETTINGS,
                new String[] {
                    "--cassandra.username",
                    "tally",
                    "--cassandra.password.file",
                    pw.toString(),
                    "--cassandra.ssl",
                    "true"
                }));
        assertThat(e.security().login()).isTrue();
        assertThat(e.security().password()).isEqualTo("s3cret");
        assertThat(e.security().ssl()).isTrue();
        assertThatThrownBy(() -> io.tally.jobs.config.JobArgs.parse(
                        io.tally.jobs.counter.CounterRollupJob.NAME,
                        io.tally.jobs.counter.CounterRollupJob.SETTINGS,
                        new String[] {"--cassandra.password", "s3cret"}))
                .hasMessageContaining("unknown argument --cassandra.password");
    }
}
