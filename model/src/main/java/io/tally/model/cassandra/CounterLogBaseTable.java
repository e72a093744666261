package io.tally.model.cassandra;

/**
 * A counter namespace's {@code counter_log_base}: what retention folded away. When a slice of
 * the counter event log passes delete_after, each counter's events in it are folded into its
 * base (the count of every event before {@code until}), then the slice table is dropped. So the
 * count of a counter is its base plus its events in the slices that are left, and a recount
 * starts from the base at the first slice left.
 */
public final class CounterLogBaseTable {
    public static final String TABLE = "counter_log_base";

    private CounterLogBaseTable() {}

    /** The table, with the id its namespace's creators all give it ({@link TableIds}). */
    public static String create(String keyspace, long namespaceCreatedMicros) {
        return "CREATE TABLE IF NOT EXISTS " + CqlNames.qualified(keyspace, TABLE)
                + " (counter text PRIMARY KEY, count bigint, until timestamp) "
                + "WITH " + TableIds.option(keyspace, TABLE, namespaceCreatedMicros);
    }

    /** Binds: counter, count, until. */
    public static String upsert(String keyspace) {
        return "INSERT INTO " + CqlNames.qualified(keyspace, TABLE) + " (counter, count, until) VALUES (?, ?, ?)";
    }

    /** Binds: counter. Columns: count, until. */
    public static String select(String keyspace) {
        return "SELECT count, until FROM " + CqlNames.qualified(keyspace, TABLE) + " WHERE counter = ?";
    }
}
