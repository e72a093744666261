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
    public static String create(CqlSession session, KeyspaceReplication replication, String namespace) {
        String ks = NamespaceName.keyspace(namespace);
        if (!ClusterSchema.has(session, ks, CounterRollupsTable.TABLE)) {
            session.execute(NamespaceKeyspace.create(ks, replication));
            session.execute(CounterRollupsTable.create(ks));
        }
        return ks;
    }
}
