package io.tally.model.cassandra;

/**
 * A counter namespace's {@code counter_rollups} (docs/design.md, "Storage"): the last rollup
 * of each counter. Rollups are written {@code USING TIMESTAMP <rollup time>} so an older rollup
 * (a replay, a slow writer) never overwrites a newer one; last_write_ts is written with each rollup
 * (the newest accepted event's time then, which may be after the rollup time).
 */
public final class CounterRollupsTable {
    public static final String TABLE = "counter_rollups";

    private CounterRollupsTable() {}

    /** The table, with the id its namespace's creators all give it ({@link TableIds}). */
    public static String create(String keyspace, long namespaceCreatedMicros) {
        return "CREATE TABLE IF NOT EXISTS " + CqlNames.qualified(keyspace, TABLE) + " (counter text PRIMARY KEY, "
                + "last_rollup_count bigint, last_rollup_ts timestamp, last_write_ts timestamp) "
                + "WITH " + TableIds.option(keyspace, TABLE, namespaceCreatedMicros);
    }

    /** Binds: counter, last_rollup_count, last_rollup_ts, write time (microseconds). */
    public static String insertRollup(String keyspace) {
        return "INSERT INTO " + CqlNames.qualified(keyspace, TABLE)
                + " (counter, last_rollup_count, last_rollup_ts) VALUES (?, ?, ?) USING TIMESTAMP ?";
    }

    /** Binds: counter, last_rollup_count, last_rollup_ts, write time (microseconds), TTL (seconds). */
    public static String insertRollupWithTtl(String keyspace) {
        return "INSERT INTO " + CqlNames.qualified(keyspace, TABLE)
                + " (counter, last_rollup_count, last_rollup_ts) VALUES (?, ?, ?) USING TIMESTAMP ? AND TTL ?";
    }

    /**
     * A rollup with its counter's newest accepted event time, in one write (the job's: last_write_ts
     * moves with the rollup, not by a write of its own per event). Binds: counter,
     * last_rollup_count, last_rollup_ts, last_write_ts, write time (microseconds).
     */
    public static String insertRollupAndLastWrite(String keyspace) {
        return "INSERT INTO " + CqlNames.qualified(keyspace, TABLE)
                + " (counter, last_rollup_count, last_rollup_ts, last_write_ts) VALUES (?, ?, ?, ?) USING TIMESTAMP ?";
    }

    /** Binds: counter. Columns: last_rollup_count, last_rollup_ts, last_write_ts, the rollup's write time. */
    public static String select(String keyspace) {
        return "SELECT last_rollup_count, last_rollup_ts, last_write_ts, WRITETIME(last_rollup_count) AS wt FROM "
                + CqlNames.qualified(keyspace, TABLE) + " WHERE counter = ?";
    }
}
