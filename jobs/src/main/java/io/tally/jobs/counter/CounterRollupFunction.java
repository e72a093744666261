package io.tally.jobs.counter;

import io.tally.jobs.cassandra.EventRow;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.state.OneWriteStringSerializer;
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
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.flink.streaming.api.TimeDomain;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Dedup and immutable-window rollup of one counter (keyed by namespace/counter), for the
 * EVENTUAL and ACCURATE types.
 *
 * <p>Dedup: an event id seen before is a retry when its payload matches (dropped, counted as a
 * dedup hit) and IDEMPOTENCY_KEY_REUSE otherwise. Ids are remembered until the rollup passes
 * their event time (in event time, so a job down for hours still knows them); an event behind
 * the rollup is refused by its time. Every accepted mutation goes to the event log (side
 * output) once.
 *
 * <p>Rollup: the watermark W comes from the broker's append times (heartbeats keep it moving
 * when a partition is quiet), and an event is accepted only when its time is at least its
 * append time minus accept_limit. So once W passes, no event older than
 * T = W - accept_limit - clock_skew can still arrive: the rollup at T folds exactly the
 * accepted events with event_time < T (CounterFold). Events wait in a MapState keyed by
 * event time; one event-time timer per counter, on a coalesce_ms grid, so a burst costs
 * one rollup write and no timer is kept per event.
 *
 * <p>Live totals: for an ACCURATE counter, the total now (the rollup folded with every pending
 * accepted event) goes to the gateways' view at once on the first change after a quiet
 * {@link #LIVE_INTERVAL_MS}, then at most every interval while changes go on (one processing-time
 * timer per changed counter), and after each rollup, so GetCount
 * answers from memory instead of scanning the event log. A total is recomputed from state, never
 * an increment, so a restore and replay converge to the same totals.
 *
 * <p>Recount: a RECOUNT (the gateway's Recount with repair) says what the event log counts before
 * one of the counter's rollup times T. The counter's count at T (the current rollup, or one of
 * its last {@link #ROLLUP_HISTORY} rollups) is made that, and the difference carries forward to
 * every later rollup and the current count: the events after T were counted as they came. The
 * repaired rollup is written again at once, so the store, the view and the job's state agree,
 * and the next rollup builds on it. Applying the same RECOUNT twice changes nothing the second
 * time (the count at T already is the recounted one), so a replay after a restore is harmless.
 *
 * <p>A namespace deleted and created again is a new one: a counter's state remembers when its
 * namespace was created, and a mutation of a later creation starts the counter from zero.
 *
 * <p>Idle counters leave the state: the heap backend writes every counter's state into every
 * checkpoint, so a job that kept each counter ever touched paid for all of them at each checkpoint.
 * A counter rolled up with nothing pending is idle; once it has been for a while (and a checkpoint
 * has passed, so its last rollup is in the store: see {@link IdleCounters}) {@link
 * CounterRollupOperator} drops its state, and the next mutation of it carries on from the rollup
 * the {@link CounterRollupStore} holds. That rollup can be newer than a restored checkpoint's
 * (written after it, before a failure): the events it counted then come again behind it, and each
 * one the event log already holds is a retry (dropped), not a late event.
 */
public class CounterRollupFunction extends KeyedProcessFunction<String, CounterMutation, RollupWrite> {
    public static final OutputTag<EventRow> EVENT_LOG = new OutputTag<>("counter-event-log") {};
    public static final OutputTag<DeadLetterRecord> DEAD_LETTERS = new OutputTag<>("counter-rollup-dead-letters") {};
    /** How long past the widest accept window an event id is remembered. */
    static final Duration DEDUP_MARGIN = Duration.ofMinutes(5);
    /** Where a bounded input's final watermark (Long.MAX_VALUE) is capped, so times stay in range. */
    static final long END_OF_INPUT_MILLIS = 253_402_300_799_000L; // 9999-12-31T23:59:59Z
    /** An ACCURATE counter's live total is published at most this often (and only after a change). */
    static final long LIVE_INTERVAL_MS = 250;
    /** How many of a counter's latest rollups (time, count) it remembers for a RECOUNT naming one. */
    static final int ROLLUP_HISTORY = 32;
    /** How long a counter's rollup history outlives its last rollup (processing time). */
    static final Duration HISTORY_TTL = Duration.ofMinutes(10);
    /**
     * A repaired rollup is written at its rollup time plus this (and one more per repair of the same
     * rollup): above the first write of that rollup and the gateway-side repairs of earlier
     * releases (+1), below the next rollup (rollup times lie on a millisecond grid).
     */
    static final long REPAIR_WRITE_OFFSET_MICROS = 500;
    /** The names of a counter's rollup state, and of its layout up to 2026-11 (the operator lists their keys). */
    static final String ROLLUP_STATE = "rollup-state";

    static final String LEGACY_ROLLUP_STATE = "rollup";

    /**
     * Event ids seen (id to payload|event time), kept until the rollup passes their event time:
     * after that an event of that time is refused anyway, so the memory lasts exactly as long as
     * it is needed, in event time, however long the job was down.
     */
    private transient MapState<String, String> seenIds;
    /** The ids remembered until 2026-11 with a processing-time TTL; read until they expire. */
    private transient MapState<String, String> seen;

    private transient MapState<Long, PendingMutations> pending;
    private transient ValueState<CounterRollupState> rollup;
    /**
     * The counter's last rollups, oldest first: time, count, time, count, ... (read by a RECOUNT
     * naming a rollup before the current one, which can only be one the gateway read shortly
     * before). Kept {@link #HISTORY_TTL} after the counter's last rollup: every counter ever
     * touched stays in the state, and its history was four fifths of it, snapshotted whole at
     * every checkpoint. A RECOUNT of a counter quiet for longer names its current rollup.
     */
    private transient ValueState<long[]> history;

    /**
     * The layout up to 2026-11 (slot arrays), still declared so a savepoint of that time restores:
     * a counter's state moves to the POJOs the first time the counter is touched (a mutation or its
     * timer), then these are cleared.
     */
    private transient ValueState<long[]> legacyRollup;

    private transient MapState<Long, long[]> legacyPending;
    private transient Counter dedupHits;
    private transient Counter countersTracked;
    private transient Counter rollups;
    private transient Counter recounts;
    private transient Counter countersRestarted;
    private transient Counter countersEvicted;
    private transient Counter countersReloaded;
    private transient Counter retriesBehindRollup;
    private transient Histogram rollupLagMs;

    /** Where an idle counter's rollup is read back from when the counter is touched again. */
    private final CounterRollupStore store;
    /** Where a counter that went idle is reported (null: idle counters stay). */
    private transient IdleCounters idle;
    /**
     * The counters that may have been let go: only these are read back when they have no state
     * (null: every counter without state is, as when the function runs without its operator).
     */
    private transient LetGoCounters letGo;

    /** A function whose counters never leave the state (and no counter is read back). */
    public CounterRollupFunction() {
        this(CounterRollupStore.NONE);
    }

    public CounterRollupFunction(CounterRollupStore store) {
        this.store = store;
    }

    /** A counter without state is read back from the store only when `letGo` may name it. */
    void readBackOnly(LetGoCounters letGo) {
        this.letGo = letGo;
    }

    /** From now on, counters that go idle are reported to `idle` (the operator lets them go). */
    void reportIdleTo(IdleCounters idle) {
        this.idle = idle;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        // Accept windows change live, so ids are kept as long as the widest one allowed.
        Duration widest = NamespaceConfigParser.MAX_COUNTER_ACCEPT_LIMIT;
        MapStateDescriptor<String, String> seenDesc =
                new MapStateDescriptor<>("seen-event-ids", Types.STRING, Types.STRING);
        seenDesc.enableTimeToLive(StateTtlConfig.newBuilder(widest.plus(DEDUP_MARGIN))
                .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                // no incremental cleanup: on the heap backend it made a new iterator over this
                // (empty since 2026-11) map at every event (11% of the rollup thread's samples);
                // an expired id is still never returned, and never written to a checkpoint
                .disableCleanupInBackground()
                .cleanupFullSnapshot()
                .build());
        seen = getRuntimeContext().getMapState(seenDesc);
        seenIds = getRuntimeContext().getMapState(idsUntilRollup());
        pending = getRuntimeContext().getMapState(pendingMutations());
        rollup = getRuntimeContext()
                .getState(new ValueStateDescriptor<>(ROLLUP_STATE, new CounterRollupStateSerializer()));
        ValueStateDescriptor<long[]> historyDesc = new ValueStateDescriptor<>(
                "recent-rollup-history", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO);
        historyDesc.enableTimeToLive(StateTtlConfig.newBuilder(HISTORY_TTL)
                .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                .cleanupFullSnapshot() // an expired history is not written into a checkpoint
                // and none cleaned at each access: a counter's whole state leaves once it is idle
                // (IdleCounters), history included, and the cleanup walked other counters' entries
                .disableCleanupInBackground()
                .build());
        history = getRuntimeContext().getState(historyDesc);
        legacyPending = getRuntimeContext()
                .getMapState(new MapStateDescriptor<>(
                        "pending-by-event-time", Types.LONG, PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        legacyRollup = getRuntimeContext()
                .getState(new ValueStateDescriptor<>(
                        LEGACY_ROLLUP_STATE, PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        var metrics = getRuntimeContext().getMetricGroup().addGroup("tally");
        dedupHits = metrics.counter("dedupHits");
        countersTracked = metrics.counter("countersTracked");
        rollups = metrics.counter("rollupWrites");
        recounts = metrics.counter("recountsApplied");
        countersRestarted = metrics.counter("countersOfRecreatedNamespaces");
        rollupLagMs = metrics.histogram("rollupLagMs", new DescriptiveStatisticsHistogram(10_000));
        countersEvicted = metrics.counter("countersLetGo");
        countersReloaded = metrics.counter("countersReadBack");
        retriesBehindRollup = metrics.counter("loggedEventsBehindRollup");
        store.open();
    }

    @Override
    public void close() throws Exception {
        store.close();
        super.close();
    }

    @Override
    public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
        CounterRollupState r = current(m, ctx.getCurrentKey());
        if (m.recount) {
            recount(m, r, ctx, out);
            return;
        }
        String payload = m.payload() + "|" + m.eventTimeMicros;
        String before = seenIds.get(m.eventId);
        if (before == null) {
            before = seen.get(m.eventId);
        }
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
        if (r == null) {
            r = new CounterRollupState();
            r.namespaceCreatedMicros = m.namespaceCreatedMicros;
            countersTracked.inc();
        }
        r.acceptLimitMs = m.acceptLimitMs;
        r.coalesceMs = m.coalesceMs;
        r.clockSkewMs = m.clockSkewMs;
        r.accurate = m.accurate;
        if (m.eventTimeMicros < r.rollupMicros) {
            if (store.holds(eventRow(m))) { // counted by a stored rollup newer than the restored state
                retriesBehindRollup.inc();
                dedupHits.inc();
                return;
            }
            ctx.output(
                    DEAD_LETTERS,
                    new DeadLetterRecord(
                            m.raw,
                            DeadLetterReason.OUTSIDE_ACCEPT_WINDOW,
                            "event_time " + m.eventTimeMicros + " us is behind the counter's immutable rollup at "
                                    + r.rollupMicros + " us",
                            CounterEventDecoder.STAGE));
            return;
        }
        seenIds.put(m.eventId, payload);
        PendingMutations at = pending.get(m.eventTimeMicros);
        at = at == null ? new PendingMutations() : at;
        if (m.clear) {
            at.cleared = true;
        } else {
            at.delta = CounterFold.add(at.delta, m.delta);
        }
        pending.put(m.eventTimeMicros, at);
        ctx.output(EVENT_LOG, eventRow(m));
        // stored with the next rollup (one write a rollup, not one more per event)
        r.lastWriteMicros = Math.max(r.lastWriteMicros, m.eventTimeMicros);
        long due = dueMillis(r, m.eventTimeMicros);
        if (r.timerMillis == 0 || due < r.timerMillis) {
            ctx.timerService().registerEventTimeTimer(due);
            r.timerMillis = due;
        }
        if (r.accurate && r.liveTimerMillis == 0) {
            long now = ctx.timerService().currentProcessingTime();
            if (r.lastLiveMillis == 0
                    || now - r.lastLiveMillis
                            >= LIVE_INTERVAL_MS) { // the first change after a quiet spell goes at once
                out.collect(live(m.namespace, m.counter, r));
                r.lastLiveMillis = now;
            } else { // later ones at most every interval
                r.liveTimerMillis = r.lastLiveMillis + LIVE_INTERVAL_MS;
                ctx.timerService().registerProcessingTimeTimer(r.liveTimerMillis);
            }
        }
        rollup.update(r);
    }

    /**
     * An ACCURATE counter's total now, for the view: the rollup folded with every pending accepted
     * event (as the ACCURATE read folded the stored events after the rollup).
     */
    private RollupWrite live(String namespace, String counter, CounterRollupState r) throws Exception {
        List<CounterFold.Mutation> all = new ArrayList<>();
        for (Map.Entry<Long, PendingMutations> e : pending.entries()) {
            all.add(new CounterFold.Mutation(e.getKey(), e.getValue().cleared, e.getValue().delta));
        }
        RollupWrite w =
                RollupWrite.live(namespace, counter, CounterFold.fold(r.count, all), r.rollupMicros, r.lastWriteMicros);
        w.accurate = true;
        w.namespaceCreatedMicros = r.namespaceCreatedMicros;
        return w;
    }

    /**
     * The counter's state for a mutation: none when the mutation's namespace was created after the
     * one the state belongs to (deleted and created again under its name: another counter of the
     * same name, which starts from zero, with no ids remembered). State of an earlier release,
     * which does not know its namespace's creation, takes the mutation's.
     */
    private CounterRollupState current(CounterMutation m, String key) throws Exception {
        CounterRollupState r = load();
        if (r == null) {
            return letGo == null || letGo.mightContain(key) ? readBack(m) : null;
        }
        if (m.namespaceCreatedMicros == r.namespaceCreatedMicros) {
            return r;
        }
        if (m.ofLaterNamespaceThan(r.namespaceCreatedMicros)) {
            seenIds.clear();
            seen.clear();
            pending.clear();
            history.clear();
            rollup.clear();
            countersRestarted.inc();
            return null;
        }
        if (r.namespaceCreatedMicros == 0) {
            r.namespaceCreatedMicros = m.namespaceCreatedMicros;
        }
        return r;
    }

    /**
     * A counter without state: its rollup from the store (a counter that was let go), or null (a new
     * one). Kept only once the mutation changes it.
     */
    private CounterRollupState readBack(CounterMutation m) {
        CounterRollupStore.StoredRollup stored = store.rollupOf(m.namespace, m.counter);
        if (stored == null) {
            return null;
        }
        CounterRollupState r = CounterRollupState.at(m, stored.count(), stored.rollupMicros());
        r.lastWriteMicros = stored.lastWriteMicros();
        r.repairs = stored.repairs();
        countersReloaded.inc();
        return r;
    }

    /**
     * Drops the current counter's state when it is idle (rolled up, nothing pending, no timer set);
     * whether it did. Its next mutation reads its rollup back from the store.
     */
    boolean letGoIfIdle() throws Exception {
        CounterRollupState r = load();
        if (r == null || r.timerMillis != 0 || r.liveTimerMillis != 0 || !pending.isEmpty() || !seenIds.isEmpty()) {
            return false;
        }
        rollup.clear();
        history.clear();
        seen.clear();
        pending.clear();
        seenIds.clear();
        countersEvicted.inc();
        return true;
    }

    /** Reports the counter as idle when nothing waits for it (no rollup or live total due). */
    private void idleIfQuiet(String key, CounterRollupState r, long nowMillis) {
        if (idle != null && r.timerMillis == 0 && r.liveTimerMillis == 0) {
            idle.idle(key, nowMillis);
        }
    }

    /** The counter's state, moved from the slot-array layout the first time it is touched. */
    private CounterRollupState load() throws Exception {
        CounterRollupState r = rollup.value();
        if (r != null) {
            return r;
        }
        long[] old = legacyRollup.value();
        if (old == null) {
            return null;
        }
        r = CounterRollupState.fromSlots(old);
        for (Map.Entry<Long, long[]> e : legacyPending.entries()) {
            pending.put(e.getKey(), PendingMutations.fromSlots(e.getValue()));
        }
        legacyPending.clear();
        legacyRollup.clear();
        rollup.update(r);
        return r;
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

    private static long dueMillis(CounterRollupState r, long eventTimeMicros) {
        return dueMillis(r.acceptLimitMs, r.coalesceMs, r.clockSkewMs, eventTimeMicros);
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
        CounterRollupState r = load();
        String key = ctx.getCurrentKey();
        int slash = key.indexOf('/');
        String namespace = key.substring(0, slash);
        String counter = key.substring(slash + 1);
        if (ctx.timeDomain() == TimeDomain.PROCESSING_TIME) {
            if (r != null && r.liveTimerMillis == timestamp) {
                r.liveTimerMillis = 0;
                r.lastLiveMillis = timestamp;
                out.collect(live(namespace, counter, r));
                rollup.update(r);
                idleIfQuiet(key, r, timestamp);
            }
            return;
        }
        if (r == null || (r.timerMillis != 0 && r.timerMillis != timestamp)) {
            return; // a timer that an earlier one superseded
        }
        long t = rollupMicros(
                r.acceptLimitMs, r.clockSkewMs, Math.min(ctx.timerService().currentWatermark(), END_OF_INPUT_MILLIS));
        long next = Long.MAX_VALUE;
        if (t > r.rollupMicros) {
            List<CounterFold.Mutation> due = new ArrayList<>();
            for (Iterator<Map.Entry<Long, PendingMutations>> it = pending.iterator(); it.hasNext(); ) {
                Map.Entry<Long, PendingMutations> e = it.next();
                if (e.getKey() < t) {
                    due.add(new CounterFold.Mutation(e.getKey(), e.getValue().cleared, e.getValue().delta));
                    it.remove();
                } else {
                    next = Math.min(next, e.getKey());
                }
            }
            r.count = CounterFold.fold(r.count, due);
            r.rollupMicros = t;
            r.repairs = 0;
            remember(t, r.count);
            forgetIdsBefore(t);
            out.collect(stored(namespace, counter, r));
            if (r.accurate) { // the view's total moves to the new rollup time (the count it shows stays)
                out.collect(live(namespace, counter, r));
            }
            rollups.inc();
            rollupLagMs.update(System.currentTimeMillis() - t / 1000);
        } else {
            for (Long time : pending.keys()) {
                next = Math.min(next, time);
            }
        }
        if (next == Long.MAX_VALUE) {
            // removing through an iterator leaves the counter an empty map, which every checkpoint
            // would write (with the counter's key) for as long as the counter exists
            pending.clear();
        }
        r.timerMillis = 0;
        if (next != Long.MAX_VALUE) {
            r.timerMillis = dueMillis(r, next);
            ctx.timerService().registerEventTimeTimer(r.timerMillis);
        }
        rollup.update(r);
        idleIfQuiet(key, r, ctx.timerService().currentProcessingTime());
    }

    /** The counter's current rollup as a counter_rollups write (with what the view needs of it). */
    private static RollupWrite stored(String namespace, String counter, CounterRollupState r) {
        RollupWrite w = RollupWrite.rollup(namespace, counter, r.count, r.rollupMicros, 0);
        w.lastWriteMicros = r.lastWriteMicros;
        w.accurate = r.accurate;
        w.namespaceCreatedMicros = r.namespaceCreatedMicros;
        return w;
    }

    /**
     * The history as releases up to 2026-11-25 kept it, without an expiry: {@link
     * CounterRollupOperator} drops it when the job starts.
     */
    /** The ids of a counter's events its rollup has not passed yet, with each one's payload and time. */
    static MapStateDescriptor<String, String> idsUntilRollup() {
        // one write a string into a checkpoint, the same bytes as Types.STRING (which restores as is)
        return new MapStateDescriptor<>(
                "event-ids-until-rollup", OneWriteStringSerializer.INSTANCE, OneWriteStringSerializer.INSTANCE);
    }

    /** A counter's mutations waiting for a rollup, folded by event time. */
    static MapStateDescriptor<Long, PendingMutations> pendingMutations() {
        return new MapStateDescriptor<>("pending-mutations", Types.LONG, TypeInformation.of(PendingMutations.class));
    }

    static ValueStateDescriptor<long[]> untimedHistory() {
        return new ValueStateDescriptor<>("rollup-history", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO);
    }

    /** Appends a rollup to the counter's history, keeping the last {@link #ROLLUP_HISTORY}. */
    private void remember(long rollupMicros, long count) throws Exception {
        long[] h = history.value();
        int n = h == null ? 0 : h.length;
        int keep = Math.min(n, 2 * (ROLLUP_HISTORY - 1));
        long[] next = new long[keep + 2];
        if (keep > 0) {
            System.arraycopy(h, n - keep, next, 0, keep);
        }
        next[keep] = rollupMicros;
        next[keep + 1] = count;
        history.update(next);
    }

    /**
     * Applies a RECOUNT: the count at its rollup time becomes the recounted one, the difference
     * carries forward, and the repaired rollup is written again. One naming a rollup the counter
     * no longer remembers (or has not reached) is a RECOUNT_STALE dead letter and changes nothing.
     */
    private void recount(CounterMutation m, CounterRollupState r, Context ctx, Collector<RollupWrite> out)
            throws Exception {
        long at = m.eventTimeMicros;
        if (r == null) { // the job holds nothing of the counter (its state was lost): the log's count is the rollup
            r = CounterRollupState.at(m, m.delta, at);
            countersTracked.inc();
            remember(at, r.count);
        } else {
            long[] h = history.value();
            Long counted = at == r.rollupMicros ? Long.valueOf(r.count) : null;
            for (int i = 0; counted == null && h != null && i + 1 < h.length; i += 2) {
                if (h[i] == at) {
                    counted = h[i + 1];
                }
            }
            if (counted == null) {
                ctx.output(
                        DEAD_LETTERS,
                        new DeadLetterRecord(
                                m.raw,
                                DeadLetterReason.RECOUNT_STALE,
                                "counter '" + m.counter + "' has no rollup at " + at + " us among its last "
                                        + ROLLUP_HISTORY + " (its rollup is at " + r.rollupMicros
                                        + " us): nothing changed; recount again",
                                CounterEventDecoder.STAGE));
                return;
            }
            long difference = CounterFold.difference(m.delta, counted);
            r.count = CounterFold.add(r.count, difference);
            if (h != null && difference != 0) {
                for (int i = 0; i + 1 < h.length; i += 2) {
                    if (h[i] >= at) {
                        h[i + 1] = CounterFold.add(h[i + 1], difference);
                    }
                }
                history.update(h);
            }
        }
        r.repairs++;
        RollupWrite written = stored(m.namespace, m.counter, r);
        written.writeMicros = r.rollupMicros + REPAIR_WRITE_OFFSET_MICROS + Math.min(r.repairs, 499);
        out.collect(written);
        if (r.accurate) {
            out.collect(live(m.namespace, m.counter, r));
        }
        rollup.update(r);
        recounts.inc();
        idleIfQuiet(ctx.getCurrentKey(), r, ctx.timerService().currentProcessingTime());
    }

    /** Ids of events older than the rollup: a retry of one is refused by its time now, not by its id. */
    private void forgetIdsBefore(long rollupMicros) throws Exception {
        for (Iterator<Map.Entry<String, String>> it = seenIds.iterator(); it.hasNext(); ) {
            String payload = it.next().getValue();
            long eventTime = Long.parseLong(payload.substring(payload.lastIndexOf('|') + 1));
            if (eventTime < rollupMicros) {
                it.remove();
            }
        }
        if (seenIds.isEmpty()) {
            seenIds.clear(); // no empty map left behind (see onTimer)
        }
    }

    private static EventRow eventRow(CounterMutation m) {
        EventRow row = new EventRow();
        row.keyspace = NamespaceName.keyspace(m.namespace);
        row.table = m.table;
        row.namespace = m.namespace;
        row.namespaceCreatedMicros = m.namespaceCreatedMicros;
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
