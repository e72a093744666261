package io.tally.model.cassandra;

/**
 * A time slice of a namespace's events (docs/design.md, "Storage"): one table per slice,
 * {@code events_<slice start>}, partitioned by (time_series_id, time_bucket, event_bucket) and
 * clustered newest first. (event_time, event_id, event_item_key) is the idempotency key, so a
 * replayed write is an identical upsert. event_time is microseconds since the epoch (bigint):
 * no precision of the idempotency key is lost. An event without items is one row with item key "".
 */
public final class SliceTable {
    public static final String PREFIX = "events_";

    /**
     * Unified compaction (Cassandra 5), tiered by 4: a slice is written once, newest first, so
     * its sstables only need merging in levels of growing size. The default size-tiered strategy
     * puts every sstable under 50 MiB in one bucket, so while a slice is small each few flushes
     * rewrote the whole of it (a day's scheduler summaries were rewritten 15 times an hour).
     */
    public static final String COMPACTION = "{'class': 'UnifiedCompactionStrategy', 'scaling_parameters': 'T4'}";

    private SliceTable() {}

    /** The table of the slice whose start is written as suffix (e.g. 20261122). */
    public static String name(String suffix) {
        return PREFIX + suffix;
    }

    /** The slice start part of a slice table's name. */
    public static String suffixOf(String table) {
        if (!table.startsWith(PREFIX)) {
            throw new IllegalArgumentException("'" + table + "' is not a slice table");
        }
        return table.substring(PREFIX.length());
    }

    /** The slice table, with the id its namespace's creators all give it ({@link TableIds}). */
    public static String create(String keyspace, String table, long namespaceCreatedMicros) {
        return "CREATE TABLE IF NOT EXISTS " + CqlNames.qualified(keyspace, table) + " ("
                + "time_series_id text, time_bucket int, event_bucket int, "
                + "event_time bigint, event_id text, event_item_key text, "
                + "event_item_value blob, value_metadata blob, "
                + "PRIMARY KEY ((time_series_id, time_bucket, event_bucket), event_time, event_id, event_item_key)) "
                + "WITH CLUSTERING ORDER BY (event_time DESC, event_id ASC, event_item_key ASC) "
                + "AND compaction = " + COMPACTION + " "
                + "AND " + TableIds.option(keyspace, table, namespaceCreatedMicros);
    }

    public static String drop(String keyspace, String table) {
        return "DROP TABLE IF EXISTS " + CqlNames.qualified(keyspace, table);
    }

    /**
     * Every row of a slice (a full scan, paged by the driver: retention folding a counter log's
     * slice before it drops it). Columns: time_series_id, event_time, event_item_key, event_item_value.
     */
    public static String scanAll(String keyspace, String table) {
        return "SELECT time_series_id, event_time, event_item_key, event_item_value FROM "
                + CqlNames.qualified(keyspace, table);
    }

    /** Binds: time_series_id, time_bucket, event_bucket, event_time, event_id, event_item_key, event_item_value. */
    public static String insert(String keyspace, String table) {
        return "INSERT INTO " + CqlNames.qualified(keyspace, table) + " (time_series_id, time_bucket, event_bucket, "
                + "event_time, event_id, event_item_key, event_item_value) VALUES (?, ?, ?, ?, ?, ?, ?)";
    }

    /**
     * One event's item rows (its id at its time, in its partition). Binds: time_series_id,
     * time_bucket, event_bucket, event_time, event_id. Columns: event_item_key, event_item_value.
     */
    public static String selectEvent(String keyspace, String table) {
        return "SELECT event_item_key, event_item_value FROM " + CqlNames.qualified(keyspace, table)
                + " WHERE time_series_id = ? AND time_bucket = ? AND event_bucket = ? AND event_time = ? AND event_id = ?";
    }

    /**
     * The rows of several event buckets of one time bucket in an event-time range, at most a number
     * of rows a partition (each partition's newest), partition by partition; binds:
     * time_series_id, time_bucket, the event buckets (a list), lowest and highest event_time
     * (inclusive), rows a partition. Columns: event_bucket, then those of {@link #selectRange}.
     */
    public static String selectRangeOfBuckets(String keyspace, String table) {
        return "SELECT event_bucket, event_time, event_id, event_item_key, event_item_value FROM "
                + CqlNames.qualified(keyspace, table)
                + " WHERE time_series_id = ? AND time_bucket = ? AND event_bucket IN ? AND event_time >= ? AND event_time <= ?"
                + " PER PARTITION LIMIT ?";
    }

    /**
     * One partition's rows in an event-time range, newest first; binds: time_series_id,
     * time_bucket, event_bucket, lowest and highest event_time (inclusive). Columns: event_time,
     * event_id, event_item_key, event_item_value.
     */
    public static String selectRange(String keyspace, String table) {
        return "SELECT event_time, event_id, event_item_key, event_item_value FROM "
                + CqlNames.qualified(keyspace, table)
                + " WHERE time_series_id = ? AND time_bucket = ? AND event_bucket = ? AND event_time >= ? AND event_time <= ?";
    }
}
