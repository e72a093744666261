package io.tally.jobs.counter;

import io.tally.jobs.cassandra.EventRow;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.model.DeadLetterReason;
import io.tally.namespace.CounterFold;
import io.tally.namespace.NamespaceConfig;
import io.tally.namespace.NamespaceConfigParser;
import io.tally.namespace.NamespaceName;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Dedup and immutable-window rollup of one counter (keyed by namespace/counter), for the
 * EVENTUAL and ACCURATE types.
 *
 * <p>Dedup: an event id seen within the accept window plus a margin is a retry when its
 * payload matches (dropped, counted as a dedup hit) and IDEMPOTENCY_KEY_REUSE otherwise. Every
 * accepted mutation goes to the event log (side output) once.
 *
 * <p>Rollup: the watermark W comes from the broker's append times (heartbeats keep it moving
 * when a partition is quiet), and an event is accepted only when its time is at least its
 * append time minus accept_limit. So once W passes, no event older than
 * T = W - accept_limit - clock_skew can still arrive: the rollup at T folds exactly the
 * accepted events with event_time < T (CounterFold). Events wait in a MapState keyed by
 * event time; one event-time timer per counter, on a coalesce_ms grid, so a burst costs
 * one rollup write and no timer is kept per event.
 */
public class CounterRollupFunction extends KeyedProcessFunction<String, CounterMutation, RollupWrite> {
    public static final OutputTag<EventRow> EVENT_LOG = new OutputTag<>("counter-event-log") {};
    public static final OutputTag<DeadLetterRecord> DEAD_LETTERS = new OutputTag<>("counter-rollup-dead-letters") {};
    /** How long past the widest accept window an event id is remembered. */
    static final Duration DEDUP_MARGIN = Duration.ofMinutes(5);
    /** Where a bounded input's final watermark (Long.MAX_VALUE) is capped, so times stay in range. */
    static final long END_OF_INPUT_MILLIS = 253_402_300_799_000L; // 9999-12-31T23:59:59Z
    // rollup state slots
    private static final int COUNT = 0;
    private static final int ROLLUP_TS = 1;
    private static final int LAST_WRITE = 2;
    private static final int LAST_WRITE_STORED = 3;
    private static final int TIMER = 4;
    // the namespace's config at the counter's last mutation, for its timers
    private static final int ACCEPT_MS = 5;
    private static final int COALESCE_MS = 6;
    private static final int SKEW_MS = 7;
    private static final int SLOTS = 8;

    private transient MapState<String, String> seen;
    private transient MapState<Long, long[]> pending;
    private transient ValueState<long[]> rollup;
    private transient Counter dedupHits;
    private transient Counter countersTracked;
    private transient Counter rollups;
    private transient Histogram rollupLagMs;

    public CounterRollupFunction() {}

    @Override
    public void open(OpenContext ctx) throws Exception {
        // Accept windows change live, so ids are kept as long as the widest one allowed.
        Duration widest = NamespaceConfigParser.MAX_COUNTER_ACCEPT_LIMIT;
        MapStateDescriptor<String, String> seenDesc =
                new MapStateDescriptor<>("seen-event-ids", Types.STRING, Types.STRING);
        seenDesc.enableTimeToLive(StateTtlConfig.newBuilder(widest.plus(DEDUP_MARGIN))
                .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                .build());
        seen = getRuntimeContext().getMapState(seenDesc);
        pending = getRuntimeContext()
                .getMapState(new MapStateDescriptor<>(
                        "pending-by-event-time", Types.LONG, PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        rollup = getRuntimeContext()
                .getState(new ValueStateDescriptor<>("rollup", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        var metrics = getRuntimeContext().getMetricGroup().addGroup("tally");
        dedupHits = metrics.counter("dedupHits");
        countersTracked = metrics.counter("countersTracked");
        rollups = metrics.counter("rollupWrites");
        rollupLagMs = metrics.histogram("rollupLagMs", new DescriptiveStatisticsHistogram(10_000));
    }

    @Override
    public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
        String payload = m.payload() + "|" + m.eventTimeMicros;
        String before = seen.get(m.eventId);
        if (before != null) {
            if (before.equals(payload)) {
                dedupHits.inc();
            } else {
                ctx.output(
                        DEAD_LETTERS,
                        new DeadLetterRecord(
                                m.raw,
                                DeadLetterReason.IDEMPOTENCY_KEY_REUSE,
                                "event id '" + m.eventId + "' of counter '" + m.counter
                                        + "' was used before with another payload",
                                CounterEventDecoder.STAGE));
            }
            return;
        }
        long[] r = rollup.value();
        if (r == null) {
            r = new long[SLOTS];
            countersTracked.inc();
        } else if (r.length < SLOTS) {
            r = java.util.Arrays.copyOf(r, SLOTS); // state written before the control plane
        }
        r[ACCEPT_MS] = m.acceptLimitMs;
        r[COALESCE_MS] = m.coalesceMs;
        r[SKEW_MS] = m.clockSkewMs;
        if (m.eventTimeMicros < r[ROLLUP_TS]) {
            ctx.output(
                    DEAD_LETTERS,
                    new DeadLetterRecord(
                            m.raw,
                            DeadLetterReason.OUTSIDE_ACCEPT_WINDOW,
                            "event_time " + m.eventTimeMicros + " us is behind the counter's immutable rollup at "
                                    + r[ROLLUP_TS] + " us",
                            CounterEventDecoder.STAGE));
            return;
        }
        seen.put(m.eventId, payload);
        long[] slot = pending.get(m.eventTimeMicros);
        slot = slot == null ? new long[2] : slot;
        if (m.clear) {
            slot[1] = 1;
        } else {
            slot[0] += m.delta;
        }
        pending.put(m.eventTimeMicros, slot);
        ctx.output(EVENT_LOG, eventRow(m));
        if (m.eventTimeMicros > r[LAST_WRITE]) {
            r[LAST_WRITE] = m.eventTimeMicros;
            if (m.eventTimeMicros - r[LAST_WRITE_STORED] >= m.coalesceMs * 1000) {
                r[LAST_WRITE_STORED] = m.eventTimeMicros;
                out.collect(RollupWrite.lastWrite(m.namespace, m.counter, m.eventTimeMicros));
            }
        }
        long due = dueMillis(r, m.eventTimeMicros);
        if (r[TIMER] == 0 || due < r[TIMER]) {
            ctx.timerService().registerEventTimeTimer(due);
            r[TIMER] = due;
        }
        rollup.update(r);
    }

    /** The first watermark at which a rollup covers an event, on the coalesce grid. */
    static long dueMillis(NamespaceConfig ns, long eventTimeMicros) {
        return dueMillis(
                ns.acceptLimit().toMillis(),
                ns.rollup().coalesceMs(),
                ns.rollup().clockSkewMs(),
                eventTimeMicros);
    }

    static long dueMillis(long acceptMs, long coalesceMs, long skewMs, long eventTimeMicros) {
        long coalesce = Math.max(1, coalesceMs);
        long earliest = Math.floorDiv(eventTimeMicros, 1000) + 1 + acceptMs + skewMs;
        return Math.floorDiv(earliest + coalesce - 1, coalesce) * coalesce;
    }

    private static long dueMillis(long[] r, long eventTimeMicros) {
        return dueMillis(r[ACCEPT_MS], r[COALESCE_MS], r[SKEW_MS], eventTimeMicros);
    }

    /** The rollup time a watermark allows: no accepted event older than it can still arrive. */
    static long rollupMicros(NamespaceConfig ns, long watermarkMillis) {
        return rollupMicros(ns.acceptLimit().toMillis(), ns.rollup().clockSkewMs(), watermarkMillis);
    }

    static long rollupMicros(long acceptMs, long skewMs, long watermarkMillis) {
        return (watermarkMillis - acceptMs - skewMs) * 1000;
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<RollupWrite> out) throws Exception {
        long[] r = rollup.value();
        if (r == null || (r[TIMER] != 0 && r[TIMER] != timestamp)) {
            return; // a timer that an earlier one superseded
        }
        String key = ctx.getCurrentKey();
        int slash = key.indexOf('/');
        String namespace = key.substring(0, slash);
        String counter = key.substring(slash + 1);
        if (r.length < SLOTS) {
            r = java.util.Arrays.copyOf(r, SLOTS); // state written before the control plane: the defaults of DESIGN.md
            r[ACCEPT_MS] = 5_000;
            r[COALESCE_MS] = 1_000;
            r[SKEW_MS] = 500;
        }
        long t = rollupMicros(
                r[ACCEPT_MS], r[SKEW_MS], Math.min(ctx.timerService().currentWatermark(), END_OF_INPUT_MILLIS));
        long next = Long.MAX_VALUE;
        if (t > r[ROLLUP_TS]) {
            List<CounterFold.Mutation> due = new ArrayList<>();
            for (Iterator<Map.Entry<Long, long[]>> it = pending.iterator(); it.hasNext(); ) {
                Map.Entry<Long, long[]> e = it.next();
                if (e.getKey() < t) {
                    due.add(new CounterFold.Mutation(e.getKey(), e.getValue()[1] == 1, e.getValue()[0]));
                    it.remove();
                } else {
                    next = Math.min(next, e.getKey());
                }
            }
            r[COUNT] = CounterFold.fold(r[COUNT], due);
            r[ROLLUP_TS] = t;
            out.collect(RollupWrite.rollup(namespace, counter, r[COUNT], t, 0));
            rollups.inc();
            rollupLagMs.update(System.currentTimeMillis() - t / 1000);
            if (r[LAST_WRITE] > r[LAST_WRITE_STORED]) {
                r[LAST_WRITE_STORED] = r[LAST_WRITE];
                out.collect(RollupWrite.lastWrite(namespace, counter, r[LAST_WRITE]));
            }
        } else {
            for (Long time : pending.keys()) {
                next = Math.min(next, time);
            }
        }
        r[TIMER] = 0;
        if (next != Long.MAX_VALUE) {
            r[TIMER] = dueMillis(r, next);
            ctx.timerService().registerEventTimeTimer(r[TIMER]);
        }
        rollup.update(r);
    }

    private static EventRow eventRow(CounterMutation m) {
        EventRow row = new EventRow();
        row.keyspace = NamespaceName.keyspace(m.namespace);
        row.table = m.table;
        row.namespace = m.namespace;
        row.sliceStartMicros = m.sliceStartMicros;
        row.sliceEndMicros = m.sliceEndMicros;
        row.timeSeriesId = m.counter;
        row.timeBucket = m.timeBucket;
        row.eventBucket = m.eventBucket;
        row.eventTimeMicros = m.eventTimeMicros;
        row.eventId = m.eventId;
        row.itemKey = m.clear ? CounterFold.CLEAR : CounterFold.ADD;
        row.itemValue = CounterFold.itemValue(m.delta);
        return row;
    }
}
