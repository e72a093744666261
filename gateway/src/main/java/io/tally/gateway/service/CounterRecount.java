package io.tally.gateway.service;

import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.tally.gateway.service.WriteBatch.Outgoing;
import io.tally.model.Micros;
import io.tally.model.Topics;
import io.tally.model.cassandra.CounterLogBaseTable;
import io.tally.model.cassandra.SliceCatalogTable;
import io.tally.namespace.CounterFold;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.ToLongFunction;
import tally.v1.CounterEvent;
import tally.v1.CounterOp;

/**
 * Recount (POST /v1/counter/Recount): an operator's check of a counter against its event log,
 * and its repair. Apart from {@link CounterQueries} so that the read path never writes.
 *
 * <p>A repair goes through the pipeline, not around it: a RECOUNT CounterEvent (the recounted
 * count at the rollup time) on the counter's topic and key, which CounterRollupJob applies to its
 * state and writes as the rollup at once. Written into Cassandra alone, a repair was overwritten
 * by the job's next rollup, and the job's state (what the view shows) stayed wrong.
 */
public final class CounterRecount {
    /**
     * @param fromMicros null: the counter's whole log: its base (what retention folded away) and
     *     every slice that is not deleted
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
            boolean repaired,
            String repairEventId,
            long logBase) {}

    /** How long a repair waits for Kafka to acknowledge its RECOUNT. */
    static final long REPAIR_ACK_TIMEOUT_MS = 10_000;

    /** The RECOUNT's source field. */
    static final String SOURCE = "gateway-recount";

    private final CounterQueries counters;
    private final TimeSeriesQueries events;
    private final CassandraSession cassandra;
    private final WriteService.RecordSink repairs;
    private final ToLongFunction<String> namespaceVersions;
    private final ToLongFunction<String> namespaceCreated;
    private volatile PreparedStatement sliceList;
    private final Map<String, PreparedStatement> baseSelects = new ConcurrentHashMap<>();

    /**
     * @param repairs where a repair's RECOUNT goes (the gateway's producer)
     * @param namespaceVersions the config version of a namespace, sent with the RECOUNT as with every write
     * @param namespaceCreated when a namespace was created, sent likewise
     */
    public CounterRecount(
            CounterQueries counters,
            TimeSeriesQueries events,
            CassandraSession cassandra,
            WriteService.RecordSink repairs,
            ToLongFunction<String> namespaceVersions,
            ToLongFunction<String> namespaceCreated) {
        this.counters = counters;
        this.events = events;
        this.cassandra = cassandra;
        this.repairs = repairs;
        this.namespaceVersions = namespaceVersions;
        this.namespaceCreated = namespaceCreated;
    }

    /**
     * Recount: folds the event log from `from` (default: the counter's base, what retention folded away, then every slice left) up to the rollup time
     * (or `to`) and compares the result with the stored rollup when it ends at the rollup time;
     * with repair (the whole log only: a sum from a later `from` is not a count), sends the
     * recounted count at the rollup time as a RECOUNT for the rollup job to apply. Only durable
     * types have an event log.
     */
    public Result recount(Request q) {
        NamespaceConfig ns = q.namespace();
        if (!ns.counterType().durable()) {
            throw new ServiceException(
                    ErrorCode.NO_EVENT_LOG, "BEST_EFFORT counters keep no event log to recount from", "namespace");
        }
        String counter = q.counter();
        boolean repair = q.repair();
        CounterQueries.Rollup r = counters.rollup(ns, counter);
        if (r.rollupMicros() == 0) {
            throw new ServiceException(
                    ErrorCode.NO_ROLLUP, "counter '" + counter + "' has no rollup yet", "counter_name");
        }
        long to = q.toMicros() != null ? q.toMicros() : r.rollupMicros();
        if (repair && q.fromMicros() != null) {
            throw new ServiceException(
                    ErrorCode.INVALID_FIELD,
                    "repair recounts the counter's whole stored log; leave from out (a sum from a later from is"
                            + " not the counter's count)",
                    "from");
        }
        long firstSlice = q.fromMicros() == null ? logStart(ns) : 0;
        long from = q.fromMicros() != null ? q.fromMicros() : Math.min(firstSlice, to);
        // the whole log: what retention folded away before its first slice, then the slices left
        LogBase logBase = q.fromMicros() == null ? logBase(ns, counter, firstSlice) : LogBase.NONE;
        long base = logBase.count();
        // Retention has dropped every slice up to the rollup time: the base alone is the count
        // there. It may cover a little past the rollup time (a slice is folded whole), but
        // retention drops only slices far older than the accept window, whose every event was
        // rolled up long ago: a rollup time inside them means the counter had no event since.
        boolean baseAlone = q.fromMicros() == null && q.toMicros() == null && from >= to && logBase.untilMicros() >= to;
        if (baseAlone) {
            from = to;
        } else if (from >= to) {
            throw new ServiceException(
                    ErrorCode.INVALID_FIELD,
                    q.fromMicros() == null
                            ? "namespace '" + ns.name() + "' stores no slice before " + Micros.toInstant(to)
                            : "from must be before " + (q.toMicros() != null ? "to" : "the rollup time"),
                    "from");
        }
        if (to - from > TimeSeriesQueries.MAX_INTERVAL_MICROS) {
            // each slice in the range is planned and read: a range from year 1 exhausted the heap
            throw new ServiceException(
                    ErrorCode.RANGE_TOO_LONG,
                    "a recount spans at most " + TimeSeriesQueries.MAX_INTERVAL_MICROS / 86_400_000_000L
                            + " days; give a later from",
                    "from");
        }
        boolean comparable = to == r.rollupMicros(); // a rollup is a count at its own time only
        List<CounterFold.Mutation> log = new ArrayList<>();
        long eventCount = 0;
        for (TimeSeriesQueries.Event e :
                baseAlone ? List.<TimeSeriesQueries.Event>of() : events.scan(ns, counter, from, to)) {
            eventCount++;
            for (Map.Entry<String, byte[]> item : e.items()) {
                CounterFold.Mutation m = CounterFold.fromItem(e.timeMicros(), item.getKey(), item.getValue());
                if (m != null) {
                    log.add(m);
                }
            }
        }
        long recounted = CounterFold.fold(base, log);
        if (repair && !comparable) {
            throw new ServiceException(
                    ErrorCode.INVALID_FIELD, "repair compares with the rollup, so it needs to = last_rollup_ts", "to");
        }
        String repairId = null;
        if (repair && recounted != r.count()) {
            repairId = sendRecount(ns, counter, to, recounted);
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
                repairId != null,
                repairId,
                base);
    }

    /** A counter's count up to {@code untilMicros}, folded from the slices retention dropped. */
    record LogBase(long count, long untilMicros) {
        static final LogBase NONE = new LogBase(0, 0);
    }

    /**
     * The counter's count before the first slice left (retention folds a slice into the base
     * before it drops it; none when none was dropped). A base past that slice's start means
     * retention is between folding and dropping right now: UNAVAILABLE, recount again.
     */
    private LogBase logBase(NamespaceConfig ns, String counter, long logStart) {
        String keyspace = NamespaceName.keyspace(ns.name());
        if (!cassandra.hasTable(keyspace, CounterLogBaseTable.TABLE)) {
            return LogBase.NONE;
        }
        PreparedStatement ps =
                baseSelects.computeIfAbsent(keyspace, k -> cassandra.prepareListed(CounterLogBaseTable.select(k)));
        Row row = cassandra.get().execute(ps.bind(counter)).one();
        if (row == null || row.getInstant("until") == null) {
            return LogBase.NONE;
        }
        long until = Micros.of(row.getInstant("until"));
        if (until > logStart) {
            throw ServiceException.unavailable(
                    ErrorCode.LOG_RETENTION_RUNNING,
                    "retention is folding the log of '" + ns.name() + "' before " + row.getInstant("until")
                            + " into the counters' bases right now; recount again in a few seconds");
        }
        return new LogBase(row.getLong("count"), until);
    }

    /** Sends the RECOUNT and waits for Kafka's acknowledgement; its event id. */
    private String sendRecount(NamespaceConfig ns, String counter, long rollupMicros, long recounted) {
        String id = "recount-" + UUID.randomUUID();
        CounterEvent recount = new CounterEvent(
                ns.name(), counter, CounterOp.RECOUNT, recounted, Micros.toInstant(rollupMicros), id, SOURCE);
        Outgoing out = new Outgoing(
                Topics.COUNTER_EVENTS,
                ns.name() + "/" + counter,
                recount,
                0,
                0,
                namespaceVersions.applyAsLong(ns.name()),
                namespaceCreated.applyAsLong(ns.name()),
                rollupMicros,
                "to");
        try {
            repairs.send(List.of(out)).get(REPAIR_ACK_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ServiceException.unavailable(
                    ErrorCode.KAFKA_UNAVAILABLE, "interrupted before the repair was acknowledged");
        } catch (ExecutionException | TimeoutException | WriteService.Backpressure | WriteService.Unavailable e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            throw ServiceException.unavailable(
                    ErrorCode.KAFKA_UNAVAILABLE,
                    "the repair was not acknowledged by Kafka ("
                            + cause.getClass().getSimpleName()
                            + "); nothing is repaired unless it arrives: recount again");
        }
        return id;
    }

    /**
     * Where the namespace's stored log starts: the start of its first slice in tally_meta.slices
     * that is not deleted; Long.MAX_VALUE when it has none (retention dropped them all).
     */
    private long logStart(NamespaceConfig ns) {
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
        return first;
    }
}
