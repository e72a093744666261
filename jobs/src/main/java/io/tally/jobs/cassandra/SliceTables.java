package io.tally.jobs.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Creates a namespace's keyspace and slice tables (idempotently) and lists each slice in
 * tally_meta.slices. Identifiers cannot be bind markers in CQL, so they are only ever built
 * from names that passed {@link io.tally.namespace.NamespaceName} or that the planner made
 * from digits, and are checked again here; values are always bound.
 */
public final class SliceTables {
    private static final Pattern IDENTIFIER = Pattern.compile("[a-z][a-z0-9_]{0,47}");

    private final CqlSession session;
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

    public SliceTables(CqlSession session) {
        this.session = session;
        this.catalogInsert = session.prepare("INSERT INTO tally_meta.slices (namespace, table_name, start_time, end_time, "
                + "status, config) VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS");
    }

    public static String identifier(String s) {
        if (!IDENTIFIER.matcher(s).matches()) {
            throw new IllegalArgumentException("'" + s + "' is not a safe CQL identifier");
        }
        return s;
    }

    /** Makes sure the slice table of row exists and is catalogued (cached after the first time). */
    public void ensure(EventRow row) {
        ensure(row.namespace, row.keyspace, row.table, row.sliceStartMicros, row.sliceEndMicros);
    }

    public void ensure(String namespace, String keyspace, String tableName, long startMicros, long endMicros) {
        String qualified = keyspace + "." + tableName;
        if (known.contains(qualified)) {
            return;
        }
        String ks = identifier(keyspace);
        String table = identifier(tableName);
        session.execute("CREATE KEYSPACE IF NOT EXISTS " + ks
                + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        session.execute("CREATE TABLE IF NOT EXISTS " + ks + "." + table + " ("
                + "time_series_id text, time_bucket int, event_bucket int, "
                + "event_time bigint, event_id text, event_item_key text, "
                + "event_item_value blob, value_metadata blob, "
                + "PRIMARY KEY ((time_series_id, time_bucket, event_bucket), event_time, event_id, event_item_key)) "
                + "WITH CLUSTERING ORDER BY (event_time DESC, event_id ASC, event_item_key ASC)");
        session.execute(catalogInsert.bind(namespace, table, Instant.EPOCH.plusNanos(startMicros * 1000),
                Instant.EPOCH.plusNanos(endMicros * 1000), "OPEN",
                "{\"event_time_unit\":\"microseconds\"}"));
        known.add(qualified);
    }
}
