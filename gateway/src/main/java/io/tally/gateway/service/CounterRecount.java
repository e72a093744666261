package io.tally.gateway.service;

import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.tally.gateway.service.ServiceException.Kind;
import io.tally.model.Micros;
import io.tally.model.cassandra.CounterRollupsTable;
import io.tally.model.cassandra.SliceCatalogTable;
import io.tally.namespace.CounterFold;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Recount (POST /v1/counter/Recount): an operator's check of a counter against its event log,
 * and its repair. Apart from {@link CounterQueries} so that the read path never writes.
 */
public final class CounterRecount {
    /**
     * @param fromMicros null: the counter's whole log, from the start of the namespace's first
     *     slice that is not deleted (a counter log is kept while its namespace lives)
     * @param toMicros null: the counter's last rollup time (the only time a recount compares)
     */
    public record Request(NamespaceConfig namespace, String counter, Long fromMicros, Long toMicros, boolean repair) {}

    /** difference is null when the recount did not end at the rollup time (nothing to compare). */
    public record Result(
            String counter,
            long fromMicros,
            long toMicros,
            long lastRollupMicros,
            long events,
            long rollupCount,
            long recounted,
            boolean compared,
            Long difference,
            boolean repaired) {}

    private final CounterQueries counters;
    private final TimeSeriesQueries events;
    private final CassandraSession cassandra;
    private final Map<String, PreparedStatement> repairs = new ConcurrentHashMap<>();
    private volatile PreparedStatement sliceList;

    public CounterRecount(CounterQueries counters, TimeSeriesQueries events, CassandraSession cassandra) {
        this.counters = counters;
        this.events = events;
        this.cassandra = cassandra;
    }

    /**
     * Recount: folds the event log from `from` (default: where the stored log starts) up to the rollup time
     * (or `to`) and compares the result with the stored rollup when it ends at the rollup time; with repair, writes the recounted value at the same rollup time,
     * one microsecond of write time above the stored one so it wins, and a newer rollup still
     * wins over it. Only durable types have an event log.
     */
    public Result recount(Request q) {
        NamespaceConfig ns = q.namespace();
        if (!ns.counterType().durable()) {
            throw ServiceException.invalid(
                    "NO_EVENT_LOG", "BEST_EFFORT counters keep no event log to recount from", "namespace");
        }
        String counter = q.counter();
        boolean repair = q.repair();
        CounterQueries.Rollup r = counters.rollup(ns, counter);
        if (r.rollupMicros() == 0) {
            throw new ServiceException(
                    Kind.NOT_FOUND, "NO_ROLLUP", "counter '" + counter + "' has no rollup yet", "counter_name");
        }
        long to = q.toMicros() != null ? q.toMicros() : r.rollupMicros();
        long from = q.fromMicros() != null ? q.fromMicros() : logStart(ns, to);
        if (from >= to) {
            throw ServiceException.invalid(
                    "INVALID_FIELD",
                    q.fromMicros() == null
                            ? "namespace '" + ns.name() + "' stores no slice before " + Micros.toInstant(to)
                            : "from must be before " + (q.toMicros() != null ? "to" : "the rollup time"),
                    "from");
        }
        if (to - from > TimeSeriesQueries.MAX_INTERVAL_MICROS) {
            // each slice in the range is planned and read: a range from year 1 exhausted the heap
            throw ServiceException.invalid(
                    "RANGE_TOO_LONG",
                    "a recount spans at most " + TimeSeriesQueries.MAX_INTERVAL_MICROS / 86_400_000_000L
                            + " days; give a later from",
                    "from");
        }
        boolean comparable = to == r.rollupMicros(); // a rollup is a count at its own time only
        List<CounterFold.Mutation> log = new ArrayList<>();
        long eventCount = 0;
        for (TimeSeriesQueries.Event e : events.scan(ns, counter, from, to)) {
            eventCount++;
            for (Map.Entry<String, byte[]> item : e.items()) {
                CounterFold.Mutation m = CounterFold.fromItem(e.timeMicros(), item.getKey(), item.getValue());
                if (m != null) {
                    log.add(m);
                }
            }
        }
        long recounted = CounterFold.fold(0, log);
        if (repair && !comparable) {
            throw ServiceException.invalid(
                    "INVALID_FIELD", "repair compares with the rollup, so it needs to = last_rollup_ts", "to");
        }
        if (repair && recounted != r.count()) {
            String keyspace = NamespaceName.keyspace(ns.name());
            PreparedStatement ps = repairs.computeIfAbsent(
                    keyspace, k -> cassandra.get().prepare(CounterRollupsTable.insertRollup(k)));
            BoundStatement write =
                    ps.bind(counter, recounted, Instant.EPOCH.plusNanos(to * 1000), Math.max(r.writeTime(), to) + 1);
            cassandra.get().execute(write);
        }
        return new Result(
                counter,
                from,
                to,
                r.rollupMicros(),
                eventCount,
                r.count(),
                recounted,
                comparable,
                comparable ? recounted - r.count() : null,
                repair && recounted != r.count());
    }

    /**
     * Where the namespace's stored log starts: the start of its first slice in tally_meta.slices
     * that is not deleted; `to` itself (an empty range, refused) when it has none.
     */
    private long logStart(NamespaceConfig ns, long to) {
        PreparedStatement list = sliceList;
        if (list == null) {
            list = sliceList = cassandra.get().prepare(SliceCatalogTable.LIST);
        }
        long first = Long.MAX_VALUE;
        for (Row row : cassandra.get().execute(list.bind(ns.name()))) {
            Instant start = row.getInstant("start_time");
            if (start != null && !SliceCatalogTable.DELETED.equals(row.getString("status"))) {
                first = Math.min(first, Micros.of(start));
            }
        }
        return first == Long.MAX_VALUE ? to : first;
    }
}
