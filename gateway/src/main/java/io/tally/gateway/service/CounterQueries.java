package io.tally.gateway.service;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.tally.model.AcceptWindow;
import io.tally.model.cassandra.CounterRollupsTable;
import io.tally.namespace.CounterFold;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfig.CounterType;
import io.tally.namespace.NamespaceName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * GetCount and the read half of AddAndGetCount (read only; Recount is {@link CounterRecount}),
 * over the counter_rollups table that CounterRollupJob writes and the counter's event log:
 * <ul>
 *   <li>EVENTUAL and BEST_EFFORT: the last rollup;</li>
 *   <li>ACCURATE: the last rollup plus the stored events at or after last_rollup_ts, folded
 *       in event-time order ({@link CounterFold}), read from the recent window in which events
 *       can still wait for a rollup ({@link #scanFrom}).</li>
 * </ul>
 * GetCount asks the {@link CounterView} first (every type); AddAndGetCount reads Cassandra, as it
 * must count the write it just made, which the view may not show yet.
 */
public final class CounterQueries {
    /** Scanned before a counter's first rollup: its events cannot be older than the window. */
    private static final long FIRST_ROLLUP_SCAN_MICROS = 3_600_000_000L;
    /** How far the rollup job may lag real time for a scan from the recent window to stay exact. */
    static final long ROLLUP_LAG_MARGIN_MICROS = 300_000_000L;

    /** What the caller just wrote, counted even if the event log does not show it yet. */
    public record JustWritten(String eventId, CounterFold.Mutation mutation) {}

    /** A count as answered: lastRollupMicros is 0 before the counter's first rollup. */
    public record Count(long count, CounterType counterType, long lastRollupMicros) {}

    /** What the reads report: how far each type's rollup is behind now. */
    public interface Metrics {
        void rollupLag(CounterType type, double seconds);
    }

    /** A counter's row: count, rollup time and last write (micros; 0 when absent). */
    record Rollup(long count, long rollupMicros, long lastWriteMicros, long writeTime) {}

    private final CassandraSession cassandra;
    private final TimeSeriesQueries events;
    private final Metrics metrics;
    private final Map<String, PreparedStatement> selects = new ConcurrentHashMap<>();
    /** First connections and ACCURATE scans (they block on Cassandra). */
    private final ExecutorService pool = Executors.newFixedThreadPool(8, r -> {
        Thread t = new Thread(r, "counter-read");
        t.setDaemon(true);
        return t;
    });

    private final CounterView view;

    public CounterQueries(TimeSeriesQueries events, CassandraSession cassandra, Metrics metrics) {
        this(events, cassandra, metrics, null);
    }

    /** @param view the rollups in memory (null: every read goes to Cassandra) */
    public CounterQueries(TimeSeriesQueries events, CassandraSession cassandra, Metrics metrics, CounterView view) {
        this.cassandra = cassandra;
        this.events = events;
        this.metrics = metrics;
        this.view = view;
    }

    /**
     * Answered from the view when it holds the counter: EVENTUAL and BEST_EFFORT counts are their
     * last rollup (a BEST_EFFORT total only within its delete_after, as Cassandra's TTL would);
     * an ACCURATE count is the live total the rollup job publishes (the rollup plus the events it
     * accepted since, at most 250 ms old). Else Cassandra: the rollup, and for ACCURATE the
     * stored events since it.
     */
    private java.util.Optional<Rollup> fromView(NamespaceConfig ns, String counter) {
        if (view == null) {
            return java.util.Optional.empty();
        }
        boolean accurate = ns.counterType() == CounterType.ACCURATE;
        return view.get(ns.name(), counter)
                // a record of the other kind (the counter's type changed since): Cassandra answers until the next one
                .filter(v -> accurate ? v.live() || v.lastWriteMicros() < v.rollupMicros() : !v.live())
                .filter(v -> ns.counterType() != CounterType.BEST_EFFORT
                        || v.rollupMicros() + ns.retention().deleteAfter().toNanos() / 1000
                                > System.currentTimeMillis() * 1000)
                .map(v -> new Rollup(v.count(), v.rollupMicros(), v.lastWriteMicros(), 0));
    }

    /**
     * A cold counter read from Cassandra, kept in the view (not an ACCURATE one, whose count needs
     * the events after its rollup). An EVENTUAL counter without a rollup is kept too, as never
     * rolled up (count 0 at time 0): a read of a counter nobody wrote cost a Cassandra read every
     * time (about 330 us of CPU across gateway and Cassandra), and its first rollup, which comes
     * through the topic, replaces the entry (a later rollup time always wins in the view).
     */
    private Rollup remembered(NamespaceConfig ns, String counter, Rollup r) {
        boolean neverRolledUp = r.rollupMicros() == 0 && ns.counterType() == CounterType.EVENTUAL;
        if (view != null && (r.rollupMicros() > 0 || neverRolledUp) && !needsScan(ns, r)) {
            view.remember(
                    ns.name(),
                    counter,
                    new CounterView.Rollup(r.count(), r.rollupMicros(), r.lastWriteMicros(), false));
        }
        return r;
    }

    /**
     * GetCount without holding a thread: one asynchronous read of the rollup row once the
     * session and statement exist; only an ACCURATE count with events to scan goes to a pool.
     */
    public CompletionStage<Count> getCount(NamespaceConfig ns, String counter) {
        java.util.Optional<Rollup> held = fromView(ns, counter);
        if (held.isPresent()) { // the view's count is the answer: an ACCURATE live total needs no scan
            return CompletableFuture.completedFuture(answered(ns, held.get().count(), held.get()));
        }
        String keyspace = NamespaceName.keyspace(ns.name());
        CqlSession session = cassandra.ifOpen();
        PreparedStatement ps = selects.get(keyspace);
        CompletionStage<Rollup> rollup;
        if (session == null || ps == null) {
            rollup = CompletableFuture.supplyAsync(() -> rollup(ns, counter), pool); // first use: connect and prepare
        } else if (!cassandra.knownTable(keyspace, CounterRollupsTable.TABLE)) {
            // the driver's metadata may miss a table made while it was cut off: asked off the loop
            rollup = CompletableFuture.supplyAsync(() -> rollup(ns, counter), pool);
        } else {
            rollup = session.executeAsync(ps.bind(counter)).thenApply(rs -> toRollup(rs.one()));
        }
        rollup = rollup.thenApply(r -> remembered(ns, counter, r));
        return rollup.thenCompose(r -> needsScan(ns, r)
                ? CompletableFuture.supplyAsync(() -> count(ns, counter, null, r), pool)
                : CompletableFuture.completedFuture(count(ns, counter, null, r)));
    }

    /** Read from Cassandra, an ACCURATE count is its rollup plus the stored events since (a recent window of them). */
    private static boolean needsScan(NamespaceConfig ns, Rollup r) {
        return ns.counterType() == CounterType.ACCURATE;
    }

    /**
     * Where the scan of an ACCURATE count starts: its rollup time, but no earlier than the window
     * in which an accepted event can still be waiting for a rollup (accept + skew + two coalesce
     * intervals, plus {@link #ROLLUP_LAG_MARGIN_MICROS} for a lagging job). An event older than
     * that was rolled up already: a later rollup would show in the row. So an idle counter's read
     * scans a few recent partitions, not every bucket since its last rollup (which lands just
     * after its last write).
     */
    static long scanFrom(NamespaceConfig ns, long rollupMicros, long nowMicros) {
        if (rollupMicros == 0) {
            return nowMicros - FIRST_ROLLUP_SCAN_MICROS;
        }
        long window = (ns.acceptLimit().toMillis()
                                + ns.rollup().clockSkewMs()
                                + 2 * ns.rollup().coalesceMs())
                        * 1000
                + ROLLUP_LAG_MARGIN_MICROS;
        return Math.max(rollupMicros, nowMicros - window);
    }

    /**
     * AddAndGetCount's count from the view, without Cassandra or a thread: null when the view cannot
     * tell it (the caller then asks {@link #countAfterWrite}). An EVENTUAL or BEST_EFFORT count is
     * its rollup, as GetCount answers it. An ACCURATE live total holds every event the rollup job
     * accepted, and its lastWriteMicros is the newest of their times: a write newer than that and
     * than the rollup is not in it yet (and will be accepted: the rollup is not past it), so the
     * count is the total with the write folded in. A write at or before either may be in the total
     * already (a retried idempotency key, another writer's later clock): the event log tells, by
     * the write's id. It reads what GetCount reads, the live total at most one publishing interval
     * old; the event log's scan it replaces cost the stack about 1 ms of CPU an answer.
     */
    public Count countAfterWriteFromView(NamespaceConfig ns, String counter, JustWritten justWritten) {
        java.util.Optional<Rollup> held = fromView(ns, counter);
        if (held.isEmpty()) {
            return null;
        }
        Rollup r = held.get();
        if (!needsScan(ns, r)) {
            return answered(ns, r.count(), r);
        }
        long written = justWritten.mutation().eventTimeMicros();
        if (written <= r.lastWriteMicros() || written <= r.rollupMicros()) {
            return null;
        }
        return answered(ns, CounterFold.fold(r.count(), List.of(justWritten.mutation())), r);
    }

    /** The count including what the caller just wrote (AddAndGetCount); blocks on Cassandra. */
    public Count countAfterWrite(NamespaceConfig ns, String counter, JustWritten justWritten) {
        return count(ns, counter, justWritten, rollup(ns, counter));
    }

    private Count count(NamespaceConfig ns, String counter, JustWritten justWritten, Rollup r) {
        long now = System.currentTimeMillis() * 1000;
        long count = r.count();
        if (needsScan(ns, r)) {
            long from = scanFrom(ns, r.rollupMicros(), now);
            List<CounterFold.Mutation> since = new ArrayList<>();
            boolean sawJustWritten = false;
            for (TimeSeriesQueries.Event e :
                    events.scan(ns, counter, from, now + AcceptWindow.FUTURE_SKEW_MICROS + 1)) {
                for (Map.Entry<String, byte[]> item : e.items()) {
                    CounterFold.Mutation m = CounterFold.fromItem(e.timeMicros(), item.getKey(), item.getValue());
                    if (m != null) {
                        since.add(m);
                        sawJustWritten |= justWritten != null && e.eventId().equals(justWritten.eventId());
                    }
                }
            }
            if (justWritten != null && !sawJustWritten && justWritten.mutation().eventTimeMicros() >= from) {
                since.add(justWritten.mutation());
            }
            count = CounterFold.fold(count, since);
        }
        return answered(ns, count, r);
    }

    private Count answered(NamespaceConfig ns, long count, Rollup r) {
        if (r.rollupMicros() > 0) {
            metrics.rollupLag(ns.counterType(), (System.currentTimeMillis() * 1000 - r.rollupMicros()) / 1e6);
        }
        return new Count(count, ns.counterType(), r.rollupMicros());
    }

    Rollup rollup(NamespaceConfig ns, String counter) {
        String keyspace = NamespaceName.keyspace(ns.name());
        if (!cassandra.hasTable(keyspace, CounterRollupsTable.TABLE)) {
            return new Rollup(0, 0, 0, 0);
        }
        PreparedStatement ps =
                selects.computeIfAbsent(keyspace, k -> cassandra.prepareListed(CounterRollupsTable.select(k)));
        Row row;
        try {
            row = cassandra.get().execute(ps.bind(counter)).one();
        } catch (RuntimeException e) {
            throw new ServiceException(
                    ErrorCode.CASSANDRA_UNAVAILABLE, "the counter read failed: " + e.getMessage(), null);
        }
        return toRollup(row);
    }

    private static Rollup toRollup(Row row) {
        if (row == null) {
            return new Rollup(0, 0, 0, 0);
        }
        return new Rollup(
                row.isNull(0) ? 0 : row.getLong(0),
                micros(row.getInstant(1)),
                micros(row.getInstant(2)),
                row.isNull(3) ? 0 : row.getLong(3));
    }

    private static long micros(Instant t) {
        return t == null ? 0 : t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
    }
}
