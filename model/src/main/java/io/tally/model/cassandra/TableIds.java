package io.tally.model.cassandra;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The id a namespace's table is created with ({@code CREATE TABLE ... WITH ID}). Cassandra gives
 * a table a random id at its CREATE, so two nodes that each take a CREATE ... IF NOT EXISTS of it
 * before either has the other's make it twice under two ids, and a node left with the losing id
 * refuses reads and writes of the table for good (INCOMPATIBLE_SCHEMA). A job meets that when the
 * node its DDL went to dies after applying it and the retry goes to a node that has not got it
 * (the three-node suite did). An id every creator derives from the same inputs makes the second
 * CREATE the same table. The namespace's creation time is one of the inputs: a namespace deleted
 * and made again under its name gets new ids, so to a node down across the two the new tables are
 * other tables, never the old ones with their rows.
 */
public final class TableIds {
    private TableIds() {}

    /**
     * @param namespaceCreatedMicros when the namespace was created (its control-plane created_at;
     *     0 where that is unknown, the same for every creator)
     */
    public static UUID of(String keyspace, String table, long namespaceCreatedMicros) {
        String qualified = CqlNames.qualified(keyspace, table); // checked identifiers only
        return UUID.nameUUIDFromBytes(
                ("tally table " + qualified + " of the namespace created at " + namespaceCreatedMicros)
                        .getBytes(StandardCharsets.UTF_8));
    }

    /** The table option that gives a table its id: {@code ID = <uuid>}. */
    static String option(String keyspace, String table, long namespaceCreatedMicros) {
        return "ID = " + of(keyspace, table, namespaceCreatedMicros);
    }
}
