package io.tally.jobs.counter;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import io.tally.jobs.cassandra.CassandraEndpoint;
import io.tally.jobs.cassandra.ClusterSchema;
import io.tally.jobs.cassandra.EventRow;
import io.tally.model.Micros;
import io.tally.model.cassandra.CounterRollupsTable;
import io.tally.model.cassandra.SliceTable;
import io.tally.namespace.NamespaceName;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * {@link CounterRollupStore} on the namespaces' counter_rollups tables and counter event logs, read
 * at the job's consistency level (the level its sinks write at, so a rollup the sink wrote is read
 * back). A keyspace or table that does not exist holds nothing; any other failure is thrown, and
 * the job restarts rather than guess a count.
 */
public final class CassandraCounterRollupStore implements CounterRollupStore {
    private static final long serialVersionUID = 1L;

    private final CassandraEndpoint cassandra;
    private transient CqlSession session;
    private transient Map<String, PreparedStatement> statements;

    public CassandraCounterRollupStore(CassandraEndpoint cassandra) {
        this.cassandra = cassandra;
    }

    @Override
    public void open() {
        session = cassandra.session();
        statements = new HashMap<>();
    }

    @Override
    public StoredRollup rollupOf(String namespace, String counter) {
        String keyspace = NamespaceName.keyspace(namespace);
        PreparedStatement select = prepared(keyspace, CounterRollupsTable.TABLE, CounterRollupsTable.select(keyspace));
        if (select == null) {
            return null;
        }
        var rows = run(select, keyspace, CounterRollupsTable.TABLE, counter).iterator();
        Row row = rows.hasNext() ? rows.next() : null;
        if (row == null) {
            return null;
        }
        Instant rolledUp = row.getInstant(1);
        Instant lastWrite = row.getInstant(2);
        long rollupMicros = rolledUp == null ? 0 : Micros.of(rolledUp);
        // a repaired rollup is written above its rollup time by the offset and its repairs
        long above =
                row.isNull(3) ? 0 : row.getLong(3) - rollupMicros - CounterRollupFunction.REPAIR_WRITE_OFFSET_MICROS;
        return new StoredRollup(
                row.isNull(0) ? 0 : row.getLong(0), rollupMicros, lastWrite == null ? 0 : Micros.of(lastWrite), (int)
                        Math.max(0, Math.min(above, 499)));
    }

    @Override
    public boolean holds(EventRow event) {
        PreparedStatement select =
                prepared(event.keyspace, event.table, SliceTable.selectEvent(event.keyspace, event.table));
        if (select == null) {
            return false;
        }
        for (Row row : run(
                select,
                event.keyspace,
                event.table,
                event.timeSeriesId,
                event.timeBucket,
                event.eventBucket,
                event.eventTimeMicros,
                event.eventId)) {
            ByteBuffer value = row.getByteBuffer(1);
            byte[] bytes = value == null ? new byte[0] : new byte[value.remaining()];
            if (value != null) {
                value.duplicate().get(bytes);
            }
            if (event.itemKey.equals(row.getString(0)) && Arrays.equals(event.itemValue, bytes)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs a read; a table dropped since it was prepared (its namespace deleted, a slice retired)
     * holds nothing, any other refusal is thrown.
     */
    private Iterable<Row> run(PreparedStatement select, String keyspace, String table, Object... values) {
        try {
            return session.execute(select.bind(values));
        } catch (InvalidQueryException e) {
            statements.remove(keyspace + "." + table);
            session.refreshSchema();
            if (prepared(keyspace, table, select.getQuery()) == null) {
                return java.util.List.of();
            }
            throw e;
        }
    }

    /** A statement on a table, or null when the table does not exist (nothing stored there). */
    private PreparedStatement prepared(String keyspace, String table, String cql) {
        String name = keyspace + "." + table;
        PreparedStatement known = statements.get(name);
        if (known != null) {
            return known;
        }
        if (!ClusterSchema.has(session, keyspace, table) && goneFromCluster(keyspace, table)) {
            return null;
        }
        PreparedStatement made = session.prepare(cql);
        statements.put(name, made);
        return made;
    }

    /**
     * Whether the table the driver's view lacks is gone from the cluster, every live node asked
     * ({@link ClusterSchema}): a view read from a node just restarted lacks what it has not pulled
     * yet, and reading "nothing stored" there would count a counter from zero. While the nodes
     * disagree this throws, and the job restarts rather than guess.
     */
    private boolean goneFromCluster(String keyspace, String table) {
        boolean gone;
        try {
            gone = ClusterSchema.of(session).agreesGoneNow(keyspace, table);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(
                    "interrupted asking Cassandra whether " + keyspace + "." + table + " exists", e);
        }
        if (gone) {
            return true;
        }
        session.refreshSchema();
        if (ClusterSchema.has(session, keyspace, table)) {
            return false;
        }
        throw new IllegalStateException(keyspace + "." + table + " is missing from the driver's view but the"
                + " Cassandra nodes do not agree it is gone (one is down or behind on the schema)");
    }

    @Override
    public void close() {
        if (session != null) {
            session.close();
        }
    }
}
