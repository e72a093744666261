package io.tally.jobs.provision;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.tally.jobs.cassandra.SchemaChanges;
import io.tally.jobs.cassandra.SliceTables;
import io.tally.jobs.elasticsearch.ElasticsearchAdmin;
import io.tally.model.cassandra.KeyspaceReplication;
import io.tally.model.cassandra.NamespaceKeyspace;
import io.tally.model.cassandra.SliceCatalogTable;
import io.tally.model.cassandra.SliceTable;
import io.tally.model.elasticsearch.IndexNames;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;
import io.tally.namespace.TimeSlicePlanner;
import io.tally.namespace.TimeSlicePlanner.Slice;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * The slice lifecycle of every namespace, one pass per call:
 * <ol>
 *   <li>the current and the next slice exist ahead of need (table + OPEN catalogue row), so the
 *       catalogue is contiguous;</li>
 *   <li>a slice that ended more than close_after ago becomes CLOSED (the writer already refuses
 *       events for it: SLICE_CLOSED);</li>
 *   <li>a slice that ended more than delete_after ago loses its table and its Elasticsearch
 *       index, and becomes DELETED: retention drops whole tables, no per-row TTL tombstones. A
 *       counter namespace's slice (its event log) is first folded into each counter's base in
 *       {@code counter_log_base} (the count before the slice's end), so the count and a recount
 *       stay whole after its events are gone.</li>
 * </ol>
 */
final class SliceLifecycle implements AutoCloseable {
    private final CqlSession session;
    private final KeyspaceReplication replication;
    private final SliceTables tables;
    private final ElasticsearchAdmin elasticsearch;
    private final PreparedStatement list;
    private final PreparedStatement setStatus;
    private final PreparedStatement forgetNamespace;
    private final CounterLogBases bases;
    /**
     * Per namespace, the config its catalogue was last read with and when its next close or drop
     * is due: until then a pass reads nothing (the local stack runs a pass every 2 s, and every
     * namespace's catalogue read each time was most of an idle Cassandra's reads). A changed
     * config, a slice made by this process, or {@link #REREAD_MICROS} read it again.
     */
    private final Map<String, Due> due = new HashMap<>();

    /** The longest a catalogue goes unread (a change by anyone else is seen within it). */
    static final long REREAD_MICROS = 60_000_000L;

    private record Due(NamespaceConfig config, long atMicros) {}

    SliceLifecycle(CqlSession session, KeyspaceReplication replication, ElasticsearchAdmin elasticsearch) {
        this.session = session;
        this.replication = replication;
        this.tables = new SliceTables(session, replication);
        this.elasticsearch = elasticsearch;
        this.list = session.prepare(SliceCatalogTable.LIST);
        this.setStatus = session.prepare(SliceCatalogTable.SET_STATUS);
        this.forgetNamespace = session.prepare(SliceCatalogTable.DELETE_NAMESPACE);
        this.bases = new CounterLogBases(session);
    }

    void run(Iterable<NamespaceConfig> namespaces, ToLongFunction<String> createdMicros, long nowMicros)
            throws Exception {
        for (NamespaceConfig ns : namespaces) {
            long nsCreated = createdMicros.applyAsLong(ns.name());
            boolean created = ensureAhead(ns, nsCreated, nowMicros);
            Due due = this.due.get(ns.name());
            if (!created && due != null && due.config().equals(ns) && nowMicros < due.atMicros()) {
                continue; // nothing of this namespace is due: its catalogue is not read again
            }
            this.due.put(ns.name(), new Due(ns, Math.min(pass(ns, nsCreated, nowMicros), nowMicros + REREAD_MICROS)));
        }
    }

    /** One namespace's pass over its catalogue: closes and drops what is due; returns when the next is. */
    private long pass(NamespaceConfig ns, long createdMicros, long nowMicros) throws Exception {
        String keyspace = NamespaceName.keyspace(ns.name());
        boolean counter = ns.kind() == NamespaceConfig.Kind.COUNTER;
        long closeMicros = ns.retention().closeAfter().toNanos() / 1000;
        long deleteMicros = ns.retention().deleteAfter().toNanos() / 1000;
        long next = Long.MAX_VALUE;
        for (Row r : session.execute(list.bind(ns.name()))) {
            String table = r.getString("table_name");
            Instant start = r.getInstant("start_time");
            long end = r.getInstant("end_time").toEpochMilli() * 1000;
            String status = r.getString("status");
            if (!SliceCatalogTable.DELETED.equals(status) && end + deleteMicros <= nowMicros) {
                if (counter) {
                    bases.fold(keyspace, createdMicros, table, end); // before the events go: the count must not
                }
                SchemaChanges.execute(session, SliceTable.drop(keyspace, table));
                tables.forget(keyspace, table);
                if (!counter) {
                    elasticsearch.delete("/" + IndexNames.sliceIndex(ns.name(), SliceTable.suffixOf(table)));
                }
                session.execute(setStatus.bind(SliceCatalogTable.DELETED, ns.name(), start));
                continue;
            }
            if (SliceCatalogTable.OPEN.equals(status) && end + closeMicros <= nowMicros) {
                session.execute(setStatus.bind(SliceCatalogTable.CLOSED, ns.name(), start));
                status = SliceCatalogTable.CLOSED;
            }
            if (!SliceCatalogTable.DELETED.equals(status)) {
                next = Math.min(next, end + deleteMicros);
                if (SliceCatalogTable.OPEN.equals(status)) {
                    next = Math.min(next, end + closeMicros);
                }
            }
        }
        return next;
    }

    /**
     * The current and the next slice of a namespace: its table and its catalogue row.
     *
     * @return whether a slice was new to this process
     */
    boolean ensureAhead(NamespaceConfig ns, long createdMicros, long nowMicros) {
        TimeSlicePlanner planner = new TimeSlicePlanner(ns);
        Slice current = planner.sliceOf(nowMicros);
        boolean created = false;
        for (Slice s : planner.slicesCovering(nowMicros, current.endMicros() + 1)) { // the current one and the next
            created |= tables.ensure(
                    ns.name(),
                    createdMicros,
                    NamespaceName.keyspace(ns.name()),
                    s.tableName(),
                    s.startMicros(),
                    s.endMicros());
        }
        return created;
    }

    /**
     * A deleted namespace's data goes: its keyspace, then its catalogue rows (so a namespace created
     * again under the name provisions OPEN slices of its own, not the old one's DELETED rows).
     */
    void retire(String namespace) {
        due.remove(namespace);
        String keyspace = NamespaceName.keyspace(namespace);
        SchemaChanges.execute(session, NamespaceKeyspace.drop(keyspace));
        tables.forgetKeyspace(keyspace);
        session.execute(forgetNamespace.bind(namespace));
    }

    CqlSession session() {
        return session;
    }

    KeyspaceReplication replication() {
        return replication;
    }

    @Override
    public void close() {
        session.close();
    }
}
