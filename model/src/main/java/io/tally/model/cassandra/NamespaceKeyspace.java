package io.tally.model.cassandra;

/** A namespace's keyspace, {@code ns_<name>} (see NamespaceName.keyspace): its slice tables and counter_rollups. */
public final class NamespaceKeyspace {
    private NamespaceKeyspace() {}

    public static String create(String keyspace) {
        return "CREATE KEYSPACE IF NOT EXISTS " + CqlNames.identifier(keyspace)
                + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}";
    }

    public static String drop(String keyspace) {
        return "DROP KEYSPACE IF EXISTS " + CqlNames.identifier(keyspace);
    }
}
