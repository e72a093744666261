package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.tally.model.Micros;
import io.tally.model.cassandra.KeyspaceReplication;
import io.tally.model.cassandra.NamespaceKeyspace;
import io.tally.model.cassandra.SliceCatalogTable;
import io.tally.model.cassandra.SliceTable;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Creates a namespace's keyspace and slice tables (idempotently) and lists each slice in
 * tally_meta.slices; the statements are the model's ({@link SliceTable}, {@link SliceCatalogTable}).
 */
public final class SliceTables {
    private final CqlSession session;
    private final KeyspaceReplication replication;
    /** Forgets the tables of a keyspace that was dropped (a deleted namespace). */
    public void forgetKeyspace(String keyspace) {
        known.removeIf(q -> q.startsWith(keyspace + "."));
    }

    /** Forgets a table the lifecycle dropped. */
    public void forget(String keyspace, String table) {
        known.remove(keyspace + "." + table);
    }

    private final Set<String> known = ConcurrentHashMap.newKeySet();
    private final PreparedStatement catalogInsert;

    public SliceTables(CqlSession session, KeyspaceReplication replication) {
        this.session = session;
        this.replication = replication;
        this.catalogInsert = session.prepare(SliceCatalogTable.INSERT);
    }

    /** Whether the table was made sure of (and not forgotten since). */
    public boolean known(String qualified) {
        return known.contains(qualified);
    }

    /** Makes sure the slice table of row exists and is catalogued (cached after the first time). */
    public void ensure(EventRow row) {
        ensure(
                row.namespace,
                row.namespaceCreatedMicros,
                row.keyspace,
                row.table,
                row.sliceStartMicros,
                row.sliceEndMicros);
    }

    /** @return whether the slice was new to this process (its catalogue row was written now) */
    public boolean ensure(
            String namespace,
            long namespaceCreatedMicros,
            String keyspace,
            String tableName,
            long startMicros,
            long endMicros) {
        String qualified = keyspace + "." + tableName;
        if (known.contains(qualified)) {
            return false;
        }
        if (!ClusterSchema.has(session, keyspace, tableName)) {
            SchemaChanges.execute(session, NamespaceKeyspace.create(keyspace, replication));
            SchemaChanges.execute(session, SliceTable.create(keyspace, tableName, namespaceCreatedMicros));
        }
        session.execute(catalogInsert.bind(
                namespace,
                tableName,
                Micros.toInstant(startMicros),
                Micros.toInstant(endMicros),
                SliceCatalogTable.OPEN,
                SliceCatalogTable.SLICE_CONFIG));
        known.add(qualified);
        return true;
    }
}
