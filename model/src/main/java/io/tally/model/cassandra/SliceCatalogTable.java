package io.tally.model.cassandra;

/**
 * {@code tally_meta.slices} (infra/cassandra/tally_meta.cql): every slice table of every
 * namespace with its time range and status, start-inclusive and end-exclusive, without gaps.
 */
public final class SliceCatalogTable {
    public static final String TABLE = "tally_meta.slices";
    public static final String OPEN = "OPEN";
    public static final String CLOSED = "CLOSED";
    public static final String DELETED = "DELETED";
    /** The config column of every slice written here: event_time is stored in microseconds. */
    public static final String SLICE_CONFIG = "{\"event_time_unit\":\"microseconds\"}";

    /** Binds: namespace, table_name, start_time, end_time, status, config. Lightweight: the first writer wins. */
    public static final String INSERT = "INSERT INTO " + TABLE + " (namespace, table_name, start_time, end_time, "
            + "status, config) VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS";
    /** Binds: namespace. Columns: table_name, start_time, end_time, status. */
    public static final String LIST =
            "SELECT table_name, start_time, end_time, status FROM " + TABLE + " WHERE namespace = ?";
    /** Binds: status, namespace, start_time. */
    public static final String SET_STATUS =
            "UPDATE " + TABLE + " SET status = ? WHERE namespace = ? AND start_time = ?";

    /**
     * Binds: namespace. A deleted namespace's rows go with its keyspace: a namespace created again
     * under the name starts a catalogue of its own (rows left DELETED would shadow its new slices,
     * since {@link #INSERT} keeps the first writer's row).
     */
    public static final String DELETE_NAMESPACE = "DELETE FROM " + TABLE + " WHERE namespace = ?";

    private SliceCatalogTable() {}
}
