package io.tally.gateway.service;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The tables of each keyspace as Cassandra's catalogue lists them, each list taken as it was for
 * a short time, so that reads over many absent slices (days before a namespace existed) ask
 * Cassandra once a keyspace, not once a slice and read.
 */
final class TableCatalogue {
    private record Listed(Set<String> tables, long atNanos) {}

    private final Function<String, Set<String>> list;
    private final long forNanos;
    private final LongSupplier nanoClock;
    private final Map<String, Listed> listed = new ConcurrentHashMap<>();

    TableCatalogue(Function<String, Set<String>> list, long forNanos, LongSupplier nanoClock) {
        this.list = list;
        this.forNanos = forNanos;
        this.nanoClock = nanoClock;
    }

    Set<String> tablesOf(String keyspace) {
        long now = nanoClock.getAsLong();
        Listed l = listed.get(keyspace);
        if (l != null && now - l.atNanos() < forNanos) {
            return l.tables();
        }
        Set<String> tables = Set.copyOf(list.apply(keyspace));
        listed.put(keyspace, new Listed(tables, now));
        return tables;
    }
}
