package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import io.tally.model.cassandra.CounterRollupsTable;
import io.tally.model.cassandra.KeyspaceReplication;
import io.tally.model.cassandra.NamespaceKeyspace;
import io.tally.namespace.NamespaceName;

/** A counter namespace's keyspace and counter_rollups table (idempotent DDL). */
public final class CounterTables {
    private CounterTables() {}

    /** @return the namespace's keyspace */
    public static String create(
            CqlSession session, KeyspaceReplication replication, String namespace, long namespaceCreatedMicros) {
        String ks = NamespaceName.keyspace(namespace);
        if (!ClusterSchema.has(session, ks, CounterRollupsTable.TABLE)) {
            SchemaChanges.execute(session, NamespaceKeyspace.create(ks, replication));
            SchemaChanges.execute(session, CounterRollupsTable.create(ks, namespaceCreatedMicros));
        }
        return ks;
    }
}
