package io.tally.jobs.counter;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.jobs.kafka.RawRecord;
import io.tally.model.DeadLetterReason;
import java.util.List;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The rollup function on Flink's operator harness: state, timers and watermarks driven by hand.
 * Namespace config as video_views: accept 5 s, skew 0.5 s, coalesce 1 s, so an event at t ms is
 * due at the first 1 s grid point after t + 5.5 s, and a watermark W rolls up to W - 5.5 s.
 */
class CounterRollupFunctionTest {
    static final long T0 = 1_795_000_000_000L; // ms, on the coalesce grid
    OneInputStreamOperatorTestHarness<CounterMutation, RollupWrite> h;

    @BeforeEach
    void open() throws Exception {
        h = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new CounterRollupFunction()), CounterMutation::key, Types.STRING);
        h.open();
    }

    @AfterEach
    void close() throws Exception {
        h.close();
    }

    static CounterMutation add(String id, long atMs, long delta) {
        CounterMutation m = new CounterMutation();
        m.namespace = "video_views";
        m.counter = "c1";
        m.delta = delta;
        m.eventTimeMicros = atMs * 1000;
        m.eventId = id;
        m.acceptLimitMs = 5_000;
        m.coalesceMs = 1_000;
        m.clockSkewMs = 500;
        m.table = "events_20261122";
        m.raw = new RawRecord("tally.counter.events", 0, 0, atMs, null, new byte[0]);
        return m;
    }

    static CounterMutation clear(String id, long atMs) {
        CounterMutation m = add(id, atMs, 0);
        m.clear = true;
        return m;
    }

    void send(CounterMutation m) throws Exception {
        h.processElement(new StreamRecord<>(m, m.eventTimeMicros / 1000));
    }

    List<RollupWrite> written(RollupWrite.Kind kind) {
        return h.extractOutputValues().stream().filter(w -> w.kind == kind).toList();
    }

    List<RollupWrite> rollups() {
        return written(RollupWrite.Kind.ROLLUP);
    }

    @Test
    void aRetryIsDroppedAndAReuseWithAnotherPayloadIsDeadLettered() throws Exception {
        send(add("e1", T0, 5));
        send(add("e1", T0, 5)); // the same request again
        send(add("e1", T0, 7)); // the same token, another delta
        assertThat(h.getSideOutput(CounterRollupFunction.EVENT_LOG)).hasSize(1);
        assertThat(h.getSideOutput(CounterRollupFunction.DEAD_LETTERS))
                .extracting(r -> ((DeadLetterRecord) r.getValue()).reason)
                .containsExactly(DeadLetterReason.IDEMPOTENCY_KEY_REUSE);
        h.processWatermark(T0 + 10_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(5L);
    }

    @Test
    void aBurstCostsOneRollupAtTheWindowsEnd() throws Exception {
        for (int i = 0; i < 10; i++) {
            send(add("b" + i, T0 + i * 10, 1));
        }
        assertThat(h.numEventTimeTimers()).isEqualTo(1); // one timer per counter, not per event
        h.processWatermark(T0 + 6_000); // the first grid point after T0 + 5.5 s
        assertThat(rollups()).singleElement().satisfies(w -> {
            assertThat(w.count).isEqualTo(10);
            assertThat(w.timeMicros).isEqualTo((T0 + 500) * 1000); // W - accept - skew
        });
    }

    static CounterMutation accurate(CounterMutation m) {
        m.accurate = true;
        return m;
    }

    List<RollupWrite> lives() {
        return written(RollupWrite.Kind.LIVE);
    }

    @Test
    void anAccurateCountersLiveTotalGoesAtOnceThenAtMostEveryIntervalAndOnlyAfterAChange() throws Exception {
        h.setProcessingTime(1_000);
        send(accurate(add("a", T0, 3)));
        assertThat(lives())
                .singleElement()
                .satisfies(
                        w -> { // the first change after a quiet spell: at once
                            assertThat(w.count).isEqualTo(3); // nothing rolled up yet: all of it is pending
                            assertThat(w.timeMicros).isZero();
                            assertThat(w.lastWriteMicros).isEqualTo(T0 * 1000);
                            assertThat(w.viewed()).isTrue();
                            assertThat(w.stored()).isFalse();
                        });
        send(accurate(add("b", T0 + 10, 4)));
        send(accurate(add("c", T0 + 11, 1)));
        assertThat(lives()).hasSize(1); // not per event: once the interval passed
        h.setProcessingTime(1_000 + CounterRollupFunction.LIVE_INTERVAL_MS);
        assertThat(lives()).extracting(w -> w.count).containsExactly(3L, 8L);
        h.setProcessingTime(10_000); // no change since: nothing more
        assertThat(lives()).hasSize(2);
        send(accurate(clear("d", T0 + 20)));
        send(accurate(add("e", T0 + 30, 2)));
        h.setProcessingTime(10_000 + CounterRollupFunction.LIVE_INTERVAL_MS);
        assertThat(lives()).extracting(w -> w.count).containsExactly(3L, 8L, 0L, 2L);
    }

    @Test
    void anAccurateRollupIsStoredAndTheViewGetsTheTotalWithWhatIsStillPending() throws Exception {
        send(accurate(add("a", T0, 3)));
        send(accurate(add("b", T0 + 3_000, 4))); // after the first rollup's time
        h.processWatermark(T0 + 6_000); // rolls up to T0 + 0.5 s: a is in, b still pending
        assertThat(rollups()).singleElement().satisfies(w -> {
            assertThat(w.count).isEqualTo(3);
            assertThat(w.stored()).isTrue();
            assertThat(w.viewed()).isFalse(); // the bare rollup would show the view 3, not 7
        });
        assertThat(lives())
                .last()
                .satisfies(
                        w -> { // after the first change's own live total (3)
                            assertThat(w.count).isEqualTo(7);
                            assertThat(w.timeMicros).isEqualTo((T0 + 500) * 1000);
                        });
        assertThat(lives().get(0).count).isEqualTo(3); // the first change went at once
    }

    @Test
    void anEventualCounterPublishesItsRollupsAndNoLiveTotals() throws Exception {
        send(add("a", T0, 3));
        h.setProcessingTime(60_000);
        h.processWatermark(T0 + 6_000);
        assertThat(lives()).isEmpty();
        assertThat(rollups()).singleElement().satisfies(w -> assertThat(w.viewed())
                .isTrue());
    }

    @Test
    void nothingIsRolledUpBeforeTheWindowIsImmutable() throws Exception {
        send(add("a", T0, 3));
        h.processWatermark(T0 + 5_000); // an event 5.5 s old could still arrive
        assertThat(rollups()).isEmpty();
    }

    @Test
    void aClearDropsEveryEarlierEventWhateverTheArrivalOrder() throws Exception {
        send(add("x1", T0, 5));
        send(clear("clr", T0 + 200));
        send(add("x2", T0 + 100, 3)); // older than the clear, arrives after it
        send(add("x3", T0 + 300, 2));
        h.processWatermark(T0 + 7_000);
        assertThat(rollups()).extracting(w -> w.count).last().isEqualTo(2L);
    }

    @Test
    void anEventBehindTheRollupIsDeadLetteredNotCounted() throws Exception {
        send(add("a", T0, 3));
        h.processWatermark(T0 + 7_000); // rolled up to T0 + 1.5 s
        send(add("late", T0 + 1_000, 4));
        assertThat(h.getSideOutput(CounterRollupFunction.DEAD_LETTERS))
                .extracting(r -> ((DeadLetterRecord) r.getValue()).reason)
                .containsExactly(DeadLetterReason.OUTSIDE_ACCEPT_WINDOW);
        h.processWatermark(T0 + 20_000);
        assertThat(rollups()).extracting(w -> w.count).containsOnly(3L);
    }

    @Test
    void aRetryAfterALongOutageIsStillARetry() throws Exception {
        // the job was down for two hours (processing time) while the watermark stood still:
        // the original is not rolled up yet, so its id must still be remembered
        send(add("o1", T0, 4));
        ((KeyedOneInputStreamOperatorTestHarness<?, ?, ?>) h).setStateTtlProcessingTime(T0 + 7_200_000);
        send(add("o1", T0, 4));
        h.processWatermark(T0 + 6_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(4L);
    }

    @Test
    void anIdIsForgottenOnceTheRollupPassedItsTime() throws Exception {
        send(add("f1", T0, 4));
        h.processWatermark(T0 + 7_000); // rolled up past T0
        send(add("f1", T0, 4)); // too late to be counted: refused by its time, not remembered forever
        assertThat(h.getSideOutput(CounterRollupFunction.DEAD_LETTERS))
                .extracting(r -> ((DeadLetterRecord) r.getValue()).reason)
                .containsExactly(DeadLetterReason.OUTSIDE_ACCEPT_WINDOW);
        assertThat(rollups()).extracting(w -> w.count).containsOnly(4L);
    }

    static CounterMutation recount(String id, long rollupMicros, long counted) {
        CounterMutation m = add(id, rollupMicros / 1000, counted);
        m.eventTimeMicros = rollupMicros;
        m.recount = true;
        return m;
    }

    List<DeadLetterReason> deadLetters() {
        var out = h.getSideOutput(CounterRollupFunction.DEAD_LETTERS);
        return out == null
                ? List.of()
                : out.stream()
                        .map(r -> ((DeadLetterRecord) r.getValue()).reason)
                        .toList();
    }

    @Test
    void aRecountAtTheCurrentRollupSetsTheJobsCountAndTheNextRollupKeepsIt() throws Exception {
        send(add("a", T0, 5));
        h.processWatermark(T0 + 6_000);
        long t = rollups().get(0).timeMicros;
        send(recount("r1", t, 12)); // the event log says 12 before t (the job's state had drifted)
        RollupWrite repaired = rollups().get(1);
        assertThat(repaired.count).isEqualTo(12);
        assertThat(repaired.timeMicros).isEqualTo(t);
        assertThat(repaired.writeTimestampMicros()).isGreaterThan(t + 1).isLessThan(t + 1_000);
        send(add("b", T0 + 3_000, 1));
        h.processWatermark(T0 + 20_000);
        assertThat(rollups()).extracting(w -> w.count).last().isEqualTo(13L); // built on the repair
        assertThat(h.getSideOutput(CounterRollupFunction.EVENT_LOG)).hasSize(2); // a RECOUNT is not a logged event
    }

    @Test
    void aRecountOfAnEarlierRollupCarriesItsDifferenceForwardAndTwiceIsOnce() throws Exception {
        send(add("a", T0, 5));
        h.processWatermark(T0 + 6_000);
        long first = rollups().get(0).timeMicros; // 5 there
        send(add("b", T0 + 2_000, 2));
        h.processWatermark(T0 + 9_000); // 7 now, rolled past the first
        assertThat(rollups()).extracting(w -> w.count).containsExactly(5L, 7L);
        send(recount("r1", first, 4)); // the log counts 4 before the first rollup: one too many since
        send(recount("r1", first, 4)); // the same repair again (a replay, a second run)
        assertThat(rollups()).extracting(w -> w.count).containsExactly(5L, 7L, 6L, 6L);
        assertThat(rollups().get(2).timeMicros).isEqualTo(rollups().get(1).timeMicros);
        assertThat(rollups().get(3).writeTimestampMicros())
                .isGreaterThan(rollups().get(2).writeTimestampMicros()); // a later repair's write wins
        assertThat(deadLetters()).isEmpty();
    }

    @Test
    void aRecountOfARollupTheCounterNoLongerRemembersChangesNothing() throws Exception {
        send(add("a", T0, 5));
        h.processWatermark(T0 + 6_000);
        send(recount("r1", (T0 - 60_000) * 1000, 99));
        assertThat(deadLetters()).containsExactly(DeadLetterReason.RECOUNT_STALE);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(5L);
        send(add("b", T0 + 2_000, 1));
        h.processWatermark(T0 + 20_000);
        assertThat(rollups()).extracting(w -> w.count).last().isEqualTo(6L);
    }

    @Test
    void aQuietCountersHistoryExpiresAndARecountOfItsCurrentRollupStillApplies() throws Exception {
        send(add("a", T0, 5));
        h.processWatermark(T0 + 6_000);
        long first = rollups().get(0).timeMicros;
        send(add("b", T0 + 2_000, 2));
        h.processWatermark(T0 + 9_000);
        long current = rollups().get(1).timeMicros;
        h.setStateTtlProcessingTime(CounterRollupFunction.HISTORY_TTL.toMillis() + 1);
        send(recount("r1", first, 4)); // an earlier rollup of a counter quiet for longer than the TTL
        assertThat(deadLetters()).containsExactly(DeadLetterReason.RECOUNT_STALE);
        send(recount("r2", current, 6)); // its current rollup needs no history
        assertThat(rollups()).extracting(w -> w.count).containsExactly(5L, 7L, 6L);
    }

    /** A counter's rollup (video_views' config) kept through the POJO serializer, as releases up to 2026-11-26 did. */
    static void keepAsPojo(org.apache.flink.api.common.functions.RuntimeContext rc, long count, long rollupMicros)
            throws Exception {
        CounterRollupState r = new CounterRollupState();
        r.count = count;
        r.rollupMicros = rollupMicros;
        r.acceptLimitMs = 5_000;
        r.coalesceMs = 1_000;
        r.clockSkewMs = 500;
        rc.getState(new ValueStateDescriptor<>("rollup-state", TypeInformation.of(CounterRollupState.class)))
                .update(r);
    }

    /** A counter as the release before the expiring history left it: rolled up to 7, its history untimed. */
    static final class UntimedHistoryLayout extends KeyedProcessFunction<String, CounterMutation, RollupWrite> {
        @Override
        public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
            keepAsPojo(getRuntimeContext(), 7, (T0 + 3_000) * 1000);
            getRuntimeContext()
                    .getState(new ValueStateDescriptor<>(
                            "rollup-history", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO))
                    .update(new long[] {T0 * 1000, 5, (T0 + 3_000) * 1000, 7});
        }
    }

    @Test
    void theUntimedHistoryOfAnEarlierReleaseIsDroppedWhenTheJobStarts() throws Exception {
        h.close();
        var snapshot = stateLeftBy(new UntimedHistoryLayout(), add("old", T0, 0));
        var operator = new CounterRollupOperator();
        h = new KeyedOneInputStreamOperatorTestHarness<>(operator, CounterMutation::key, Types.STRING);
        h.initializeState(snapshot);
        h.open();
        assertThat(CounterRollupOperator.dropUntimedHistory(operator.getKeyedStateBackend()))
                .isZero(); // open() dropped it already
        send(recount("r1", T0 * 1000, 4)); // names the earlier rollup, no longer remembered
        assertThat(deadLetters()).containsExactly(DeadLetterReason.RECOUNT_STALE);
        send(recount("r2", (T0 + 3_000) * 1000, 6)); // the current rollup (7 there) needs no history
        assertThat(rollups()).extracting(w -> w.count).containsExactly(6L);
    }

    @Test
    void aRecountOfAnAccurateCounterMovesItsLiveTotal() throws Exception {
        send(accurate(add("a", T0, 5)));
        h.processWatermark(T0 + 6_000);
        long t = rollups().get(0).timeMicros;
        send(accurate(add("b", T0 + 5_000, 1))); // pending, after the rollup
        send(accurate(recount("r1", t, 8)));
        assertThat(lives()).extracting(w -> w.count).last().isEqualTo(9L); // 8 at t, plus the pending 1
    }

    @Test
    void aRepairSurvivesASnapshotAndRestore() throws Exception {
        send(add("a", T0, 5));
        h.processWatermark(T0 + 6_000);
        send(recount("r1", rollups().get(0).timeMicros, 3));
        var snapshot = h.snapshot(1, T0 + 6_000);
        h.close();
        h = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new CounterRollupFunction()), CounterMutation::key, Types.STRING);
        h.initializeState(snapshot);
        h.open();
        send(add("b", T0 + 3_000, 1));
        h.processWatermark(T0 + 20_000);
        assertThat(rollups()).extracting(w -> w.count).last().isEqualTo(4L);
    }

    static CounterMutation of(long namespaceCreatedMicros, CounterMutation m) {
        m.namespaceCreatedMicros = namespaceCreatedMicros;
        return m;
    }

    @Test
    void aCounterOfANamespaceCreatedAgainStartsFromZero() throws Exception {
        send(of(100, add("a", T0, 5)));
        h.processWatermark(T0 + 6_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(5L);
        assertThat(rollups().get(0).namespaceCreatedMicros).isEqualTo(100);
        // deleted and created again: the same id is a new event of a new counter, not a retry
        send(of(200, add("a", T0 + 3_000, 2)));
        h.processWatermark(T0 + 20_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(5L, 2L);
        assertThat(rollups().get(1).namespaceCreatedMicros).isEqualTo(200);
        assertThat(deadLetters()).isEmpty();
    }

    @Test
    void stateOfAnEarlierReleaseTakesTheNamespacesCreationTime() throws Exception {
        send(of(0, add("a", T0, 5)));
        h.processWatermark(T0 + 6_000);
        send(of(100, add("b", T0 + 3_000, 2))); // the same namespace, its creation now known
        send(of(200, add("c", T0 + 4_000, 1))); // then created again
        h.processWatermark(T0 + 20_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(5L, 1L);
    }

    @Test
    void stateAndTimersSurviveASnapshotAndRestore() throws Exception {
        send(add("s1", T0, 4));
        var snapshot = h.snapshot(1, T0);
        h.close();
        h = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new CounterRollupFunction()), CounterMutation::key, Types.STRING);
        h.initializeState(snapshot);
        h.open();
        send(add("s1", T0, 4)); // a replay after the restore: still a retry
        h.processWatermark(T0 + 6_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(4L);
    }

    /** The state layout up to 2026-11 (slot arrays), as that release's function left it in a savepoint. */
    static final class LegacyLayout extends KeyedProcessFunction<String, CounterMutation, RollupWrite> {
        @Override
        public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
            ValueState<long[]> rollup = getRuntimeContext()
                    .getState(new ValueStateDescriptor<>(
                            "rollup", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
            MapState<Long, long[]> pending = getRuntimeContext()
                    .getMapState(new MapStateDescriptor<>(
                            "pending-by-event-time",
                            Types.LONG,
                            PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
            long due = CounterRollupFunction.dueMillis(5_000, 1_000, 500, m.eventTimeMicros);
            // count 40 rolled up to T0 - 10 s, one ADD of 2 pending at the mutation's time, its timer set
            rollup.update(new long[] {40, (T0 - 10_000) * 1000, m.eventTimeMicros, 0, due, 5_000, 1_000, 500});
            pending.put(m.eventTimeMicros, new long[] {2, 0});
            ctx.timerService().registerEventTimeTimer(due);
        }
    }

    /** A snapshot of the state an earlier release's function left after one mutation. */
    static org.apache.flink.runtime.checkpoint.OperatorSubtaskState stateLeftBy(
            KeyedProcessFunction<String, CounterMutation, RollupWrite> earlier, CounterMutation m) throws Exception {
        var before = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(earlier), CounterMutation::key, Types.STRING);
        before.open();
        before.processElement(new StreamRecord<>(m, T0));
        var snapshot = before.snapshot(1, T0);
        before.close();
        return snapshot;
    }

    /** Replaces the harness with one restored from a savepoint of the old layout (counter c1: 40, and 2 pending at T0). */
    void restoreFromTheSlotArrayLayout() throws Exception {
        h.close();
        var snapshot = stateLeftBy(new LegacyLayout(), add("old", T0, 2));
        h = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new CounterRollupFunction()), CounterMutation::key, Types.STRING);
        h.initializeState(snapshot);
        h.open();
    }

    @Test
    void aSavepointOfTheSlotArrayLayoutRestoresAndMovesToThePojos() throws Exception {
        restoreFromTheSlotArrayLayout();
        send(add("new", T0 + 100, 3)); // touches the counter: its state moves to the POJOs
        h.processWatermark(T0 + 6_000); // the timer the old release set
        assertThat(rollups()).extracting(w -> w.count).containsExactly(45L);
    }

    @Test
    void aCounterWhoseOnlyTouchIsItsTimerMovesToo() throws Exception {
        restoreFromTheSlotArrayLayout();
        h.processWatermark(T0 + 6_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(42L);
    }

    /** The rollup state as releases up to 2026-11-26 wrote it: through Flink's POJO serializer. */
    static class PojoStateLayout extends KeyedProcessFunction<String, CounterMutation, RollupWrite> {
        @Override
        public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
            keepAsPojo(getRuntimeContext(), 40, (T0 - 10_000) * 1000);
        }
    }

    @Test
    void aCountKeptByThePojoSerializerRestoresAndSurvivesTheNextCheckpointInTheNewFormat() throws Exception {
        h.close();
        var pojo = stateLeftBy(new PojoStateLayout(), add("old", T0 - 20_000, 0));
        h = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new CounterRollupFunction()), CounterMutation::key, Types.STRING);
        h.initializeState(pojo);
        h.open();
        send(add("new", T0, 2)); // pending, its timer set
        var next = h.snapshot(2, T0); // the state written by CounterRollupStateSerializer now
        h.close();
        h = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new CounterRollupFunction()), CounterMutation::key, Types.STRING);
        h.initializeState(next);
        h.open();
        h.processWatermark(T0 + 6_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(42L);
    }

    /** How many counters have an entry in a state of the operator's backend. */
    static long countersIn(CounterRollupOperator operator, String state) throws Exception {
        try (var keys =
                operator.getKeyedStateBackend().getKeys(state, org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
            return keys.count();
        }
    }

    @Test
    void aRolledUpCounterKeepsNoEmptyMapOfIdsOrPendingMutations() throws Exception {
        h.close();
        var operator = new CounterRollupOperator();
        h = new KeyedOneInputStreamOperatorTestHarness<>(operator, CounterMutation::key, Types.STRING);
        h.open();
        send(add("a", T0, 2));
        send(add("b", T0 + 100, 3));
        assertThat(countersIn(operator, "pending-mutations")).isEqualTo(1);
        assertThat(countersIn(operator, "event-ids-until-rollup")).isEqualTo(1);
        h.processWatermark(T0 + 7_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(5L);
        assertThat(countersIn(operator, "pending-mutations")).isZero();
        assertThat(countersIn(operator, "event-ids-until-rollup")).isZero();
        assertThat(countersIn(operator, "rollup-state")).isEqualTo(1);
    }

    /** What a rollup of releases up to 2026-11-26 left: the counter's id and pending maps emptied, not removed. */
    static final class EmptyMapsLayout extends PojoStateLayout {
        @Override
        public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
            super.processElement(m, ctx, out); // a count of 40
            MapState<String, String> ids = getRuntimeContext().getMapState(CounterRollupFunction.idsUntilRollup());
            ids.put("old", "ADD|1|0");
            for (var it = ids.iterator(); it.hasNext(); ) {
                it.next();
                it.remove();
            }
            MapState<Long, PendingMutations> pending =
                    getRuntimeContext().getMapState(CounterRollupFunction.pendingMutations());
            pending.put(1L, new PendingMutations());
            for (var it = pending.iterator(); it.hasNext(); ) {
                it.next();
                it.remove();
            }
        }
    }

    @Test
    void theEmptyMapsAnEarlierReleaseLeftAreRemovedWhenTheJobStarts() throws Exception {
        h.close();
        var snapshot = stateLeftBy(new EmptyMapsLayout(), add("old", T0 - 20_000, 0));
        var operator = new CounterRollupOperator();
        h = new KeyedOneInputStreamOperatorTestHarness<>(operator, CounterMutation::key, Types.STRING);
        h.initializeState(snapshot);
        h.open();
        assertThat(countersIn(operator, "pending-mutations")).isZero();
        assertThat(countersIn(operator, "event-ids-until-rollup")).isZero();
        send(add("new", T0, 2));
        h.processWatermark(T0 + 7_000);
        assertThat(rollups()).extracting(w -> w.count).containsExactly(42L);
    }
}
