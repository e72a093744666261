package io.tally.model.cassandra;

/** A namespace's keyspace, {@code ns_<name>} (see NamespaceName.keyspace): its slice tables and counter_rollups. */
public final class NamespaceKeyspace {
    private NamespaceKeyspace() {}

    public static String create(String keyspace, KeyspaceReplication replication) {
        return "CREATE KEYSPACE IF NOT EXISTS " + CqlNames.identifier(keyspace) + " WITH replication = "
                + replication.cql();
    }

    public static String drop(String keyspace) {
        return "DROP KEYSPACE IF EXISTS " + CqlNames.identifier(keyspace);
    }
}
