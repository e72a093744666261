package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import io.tally.common.CassandraClientSecurity;
import io.tally.common.CassandraLogin;
import io.tally.jobs.config.JobArgs;
import io.tally.jobs.config.JobSettings;
import io.tally.model.cassandra.KeyspaceReplication;
import java.io.Serializable;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The jobs' Cassandra: its contact points, the consistency level of every read and write, and
 * how the keyspaces the jobs create are replicated (their local datacenter included). One node
 * by default (ONE, SimpleStrategy 1); a cluster: NetworkTopologyStrategy 3 at LOCAL_QUORUM. And
 * how the sinks batch their writes for it (its batch warning thresholds bound them).
 */
public record CassandraEndpoint(
        List<String> hosts,
        int port,
        String consistency,
        KeyspaceReplication replication,
        WriteBatching batching,
        CassandraClientSecurity security)
        implements Serializable {
    /** The levels a write or read of the jobs may ask for (the driver's names). */
    static final Set<String> CONSISTENCY_LEVELS =
            Set.of("ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM", "EACH_QUORUM");

    public CassandraEndpoint {
        hosts = List.copyOf(hosts);
        if (hosts.isEmpty() || hosts.stream().anyMatch(String::isBlank)) {
            throw new IllegalArgumentException("no Cassandra contact point");
        }
        java.util.Objects.requireNonNull(security, "security");
        if (!CONSISTENCY_LEVELS.contains(consistency)) {
            throw new IllegalArgumentException(
                    "consistency level '" + consistency + "': one of " + String.join(", ", CONSISTENCY_LEVELS));
        }
    }

    /** One node at ONE: the local stack's, and tests'. */
    public static CassandraEndpoint oneNode(String host, int port) {
        return new CassandraEndpoint(
                List.of(host),
                port,
                "ONE",
                KeyspaceReplication.ONE_NODE,
                WriteBatching.STOCK,
                CassandraClientSecurity.NONE);
    }

    /** From a job's cassandra.* arguments. */
    public static CassandraEndpoint of(JobArgs args) {
        return new CassandraEndpoint(
                Arrays.stream(args.text(JobSettings.CASSANDRA_HOST).split(","))
                        .map(String::trim)
                        .toList(),
                args.port(JobSettings.CASSANDRA_PORT),
                args.text(JobSettings.CASSANDRA_CONSISTENCY),
                new KeyspaceReplication(
                        args.text(JobSettings.CASSANDRA_REPLICATION_STRATEGY),
                        (int) args.number(JobSettings.CASSANDRA_REPLICATION_FACTOR),
                        args.text(JobSettings.CASSANDRA_DATACENTER)),
                new WriteBatching(
                        (int) args.number(JobSettings.CASSANDRA_BATCH_PARTITIONS),
                        args.number(JobSettings.CASSANDRA_BATCH_BYTES),
                        args.number(JobSettings.CASSANDRA_BATCH_LINGER_MS)),
                CassandraClientSecurity.from(args::byName));
    }

    /**
     * A session for the jobs: requests get 20 s, not the driver's 2 s, and so does schema
     * agreement (a new keyspace or slice table), since a busy node can take longer than 2 s and
     * a timeout there would restart the job for nothing.
     */
    public CqlSession session() {
        var builder = CqlSession.builder()
                .withLocalDatacenter(replication.datacenter())
                .withConfigLoader(DriverConfigLoader.programmaticBuilder()
                        .withString(DefaultDriverOption.REQUEST_CONSISTENCY, consistency)
                        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(20))
                        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(20))
                        .build());
        for (String host : hosts) {
            builder.addContactPoint(new InetSocketAddress(host, port));
        }
        return CassandraLogin.applied(builder, security).build(); // the password read here, from its file
    }
}
