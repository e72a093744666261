package io.tally.jobs.counter;

import io.tally.namespace.CounterFold;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * BEST_EFFORT counters: a processing-time running total per counter, no dedup and no event
 * log (retries count twice; it is approximate by design). The total is flushed at most
 * FLUSH_MS (or coalesce_ms, if shorter) after a change, and the Cassandra row expires after the
 * namespace's retention.delete_after without writes. A counter's state expires sooner, once it has
 * been idle for the job's idle time: its next mutation carries on from the total in the store (the
 * heap backend writes every counter's state into every checkpoint, so state kept a week cost every
 * checkpoint all of them). A total flushed just before it expired and not yet stored would be
 * read back short; with an idle time of minutes against a flush of milliseconds, that is within
 * what BEST_EFFORT promises. Only counters whose total was flushed ({@link LetGoCounters}) are read
 * back, so a new counter costs no read.
 */
public class BestEffortAggregator extends KeyedProcessFunction<String, CounterMutation, RollupWrite>
        implements CheckpointedFunction {
    static final long FLUSH_MS = 250;
    /** How long an idle counter's total is kept (its rollup row outlives it by the namespace's delete_after). */
    static final Duration IDLE_TTL = Duration.ofDays(7);

    private transient ValueState<BestEffortTotal> total;
    /** The layout up to 2026-11, read once per counter after an upgrade from such a savepoint. */
    private transient ValueState<long[]> legacyTotal;

    /** Where an expired counter's total is read back from. */
    private final CounterRollupStore store;
    /** How long an idle counter's state is kept (0: {@link #IDLE_TTL}). */
    private final long idleMs;
    /** The counters with a total in the store (flushed at least once): only these are read back. */
    private transient LetGoCounters.Kept flushed;

    /** An aggregator that keeps an idle counter's total {@link #IDLE_TTL} (and reads none back). */
    public BestEffortAggregator() {
        this(CounterRollupStore.NONE, 0);
    }

    public BestEffortAggregator(CounterRollupStore store, long idleMs) {
        this.store = store;
        this.idleMs = idleMs;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        // at least a second: the state must outlive its pending flush
        Duration ttl = idleMs > 0 ? Duration.ofMillis(Math.max(1_000, idleMs)) : IDLE_TTL;
        store.open();
        ValueStateDescriptor<BestEffortTotal> desc =
                new ValueStateDescriptor<>("best-effort-state", TypeInformation.of(BestEffortTotal.class));
        desc.enableTimeToLive(ttl(ttl));
        total = getRuntimeContext().getState(desc);
        ValueStateDescriptor<long[]> legacy =
                new ValueStateDescriptor<>("best-effort-total", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO);
        legacy.enableTimeToLive(ttl(ttl));
        legacyTotal = getRuntimeContext().getState(legacy);
    }

    @Override
    public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
        BestEffortTotal t = load();
        if (t != null && m.ofLaterNamespaceThan(t.namespaceCreatedMicros)) {
            t = null; // the namespace was deleted and created again: another counter of that name
        }
        if (t == null) {
            t = new BestEffortTotal();
            t.namespaceCreatedMicros = m.namespaceCreatedMicros;
            CounterRollupStore.StoredRollup stored =
                    flushed.filter.mightContain(ctx.getCurrentKey()) ? store.rollupOf(m.namespace, m.counter) : null;
            t.total = stored == null ? 0 : stored.count();
        } else if (t.namespaceCreatedMicros == 0) {
            t.namespaceCreatedMicros = m.namespaceCreatedMicros; // state of an earlier release
        }
        t.total = m.clear ? 0 : CounterFold.add(t.total, m.delta);
        t.deleteAfterSeconds = m.deleteAfterSeconds;
        if (t.flushAtMillis == 0) {
            t.flushAtMillis =
                    ctx.timerService().currentProcessingTime() + Math.min(FLUSH_MS, Math.max(1, m.coalesceMs));
            ctx.timerService().registerProcessingTimeTimer(t.flushAtMillis);
        }
        total.update(t);
    }

    /**
     * Expired totals are left out of checkpoints (the heap backend's are full snapshots) and removed
     * from the heap a few at each state access, not only when their counter is read again.
     */
    private static StateTtlConfig ttl(Duration ttl) {
        return StateTtlConfig.newBuilder(ttl)
                .cleanupFullSnapshot()
                .cleanupIncrementally(10, false)
                .build();
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        flushed = LetGoCounters.Kept.restore(context.getOperatorStateStore(), "flushed-best-effort-counters");
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        flushed.snapshot();
    }

    @Override
    public void close() throws Exception {
        store.close();
        super.close();
    }

    private BestEffortTotal load() throws Exception {
        BestEffortTotal t = total.value();
        long[] old = t == null ? legacyTotal.value() : null;
        if (old != null) {
            t = BestEffortTotal.fromSlots(old);
            legacyTotal.clear();
            total.update(t);
        }
        return t;
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<RollupWrite> out) throws Exception {
        BestEffortTotal t = load();
        if (t == null) {
            return;
        }
        String key = ctx.getCurrentKey();
        int slash = key.indexOf('/');
        String namespace = key.substring(0, slash);
        long ttlSeconds = t.deleteAfterSeconds > 0 ? t.deleteAfterSeconds : IDLE_TTL.toSeconds();
        RollupWrite w = RollupWrite.rollup(namespace, key.substring(slash + 1), t.total, timestamp * 1000, (int)
                Math.min(Integer.MAX_VALUE, ttlSeconds));
        w.namespaceCreatedMicros = t.namespaceCreatedMicros;
        out.collect(w);
        flushed.filter.add(key);
        t.flushAtMillis = 0;
        total.update(t);
    }
}
