package io.tally.jobs.counter;

import static io.tally.jobs.counter.CounterRollupFunctionTest.T0;
import static io.tally.jobs.counter.CounterRollupFunctionTest.add;
import static io.tally.jobs.counter.CounterRollupFunctionTest.countersIn;
import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.cassandra.EventRow;
import io.tally.jobs.kafka.DeadLetterRecord;
import io.tally.model.DeadLetterReason;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Counters leaving the rollup state when idle, and carrying on from the store when touched again,
 * on Flink's operator harness with a store that keeps what the harness's sinks would have written.
 */
class CounterIdleStateTest {
    static final long IDLE_MS = 60_000;

    /** What the sinks wrote: each counter's last rollup and the event log's rows (a fake of the tables). */
    static final class WrittenStore implements CounterRollupStore {
        final Map<String, StoredRollup> rollups = new HashMap<>();
        final List<EventRow> log = new ArrayList<>();
        int reads;

        @Override
        public StoredRollup rollupOf(String namespace, String counter) {
            reads++;
            return rollups.get(namespace + "/" + counter);
        }

        @Override
        public boolean holds(EventRow row) {
            return log.stream()
                    .anyMatch(r -> r.timeSeriesId.equals(row.timeSeriesId)
                            && r.eventTimeMicros == row.eventTimeMicros
                            && r.eventId.equals(row.eventId)
                            && r.itemKey.equals(row.itemKey)
                            && Arrays.equals(r.itemValue, row.itemValue));
        }

        /** Takes in what the harness emitted so far, as the rollup and event-log sinks would store it. */
        void store(org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness<RollupWrite> h) {
            for (RollupWrite w : h.extractOutputValues()) {
                if (w.kind == RollupWrite.Kind.ROLLUP) {
                    rollups.put(
                            w.namespace + "/" + w.counter,
                            new StoredRollup(w.count, w.timeMicros, w.lastWriteMicros, 0));
                }
            }
            var logged = h.getSideOutput(CounterRollupFunction.EVENT_LOG);
            if (logged != null) {
                logged.forEach(r -> log.add(r.getValue()));
            }
        }
    }

    final WrittenStore store = new WrittenStore();
    CounterRollupOperator operator;
    OneInputStreamOperatorTestHarness<CounterMutation, RollupWrite> h;

    OneInputStreamOperatorTestHarness<CounterMutation, RollupWrite> harness(long idleMs) throws Exception {
        operator = new CounterRollupOperator(store, idleMs);
        h = new KeyedOneInputStreamOperatorTestHarness<>(operator, CounterMutation::key, Types.STRING);
        h.setProcessingTime(1_000);
        return h;
    }

    @AfterEach
    void close() throws Exception {
        if (h != null) {
            h.close();
        }
    }

    void send(CounterMutation m) throws Exception {
        h.processElement(new StreamRecord<>(m, m.eventTimeMicros / 1000));
    }

    List<Long> rollupCounts() {
        return h.extractOutputValues().stream()
                .filter(w -> w.kind == RollupWrite.Kind.ROLLUP)
                .map(w -> w.count)
                .toList();
    }

    @Test
    void anIdleCounterLeavesTheStateOnlyAfterTheIdleTimeAndACheckpointThenCarriesOnFromTheStore() throws Exception {
        harness(IDLE_MS).open();
        send(add("e1", T0, 5));
        h.processWatermark(T0 + 10_000); // rolled up: idle from processing time 1,000
        store.store(h);
        h.setProcessingTime(1_000 + 2 * IDLE_MS);
        assertThat(countersIn(operator, "rollup-state")).isEqualTo(1); // no checkpoint since it went idle
        h.snapshot(1, 1_000 + 2 * IDLE_MS);
        h.notifyOfCompletedCheckpoint(1);
        h.setProcessingTime(1_000 + 3 * IDLE_MS);
        assertThat(countersIn(operator, "rollup-state")).isZero();
        assertThat(store.reads).isZero(); // a new counter is not read

        send(add("e2", T0 + 20_000, 2));
        assertThat(store.reads).isEqualTo(1); // let go: read back
        h.processWatermark(T0 + 30_000);
        assertThat(rollupCounts()).containsExactly(5L, 7L); // from the stored 5, not from 0
    }

    @Test
    void aCounterTouchedAgainBeforeTheIdleTimeStays() throws Exception {
        harness(IDLE_MS).open();
        send(add("e1", T0, 5));
        h.processWatermark(T0 + 10_000);
        h.setProcessingTime(1_000 + IDLE_MS / 2);
        send(add("e2", T0 + 20_000, 1)); // pending: not idle any more
        h.snapshot(1, 1_000 + IDLE_MS / 2);
        h.notifyOfCompletedCheckpoint(1);
        h.setProcessingTime(1_000 + 3 * IDLE_MS);
        assertThat(countersIn(operator, "rollup-state")).isEqualTo(1);
        h.processWatermark(T0 + 30_000);
        assertThat(rollupCounts()).containsExactly(5L, 6L);
        assertThat(store.reads).isZero();
    }

    /** Lets the counter of `e` (rolled up, idle) go, and returns a snapshot taken after: the filter names it. */
    org.apache.flink.runtime.checkpoint.OperatorSubtaskState letGoAndSnapshot(CounterMutation e) throws Exception {
        send(e);
        h.processWatermark(e.eventTimeMicros / 1000 + 10_000);
        store.store(h);
        h.setProcessingTime(1_000 + 2 * IDLE_MS);
        h.snapshot(1, 1_000 + 2 * IDLE_MS);
        h.notifyOfCompletedCheckpoint(1);
        h.setProcessingTime(1_000 + 3 * IDLE_MS);
        assertThat(countersIn(operator, "rollup-state")).isZero();
        return h.snapshot(2, 1_000 + 3 * IDLE_MS);
    }

    @Test
    void eventsCountedByAStoredRollupNewerThanTheStateAreRetriesAndAnUnloggedOneIsStillLate() throws Exception {
        harness(IDLE_MS).open();
        var snapshot = letGoAndSnapshot(add("e0", T0, 5));
        // then the counter came back, was rolled up to 7 and stored, and the job crashed
        send(add("e1", T0 + 20_000, 2));
        h.processWatermark(T0 + 30_000);
        store.store(h);
        assertThat(rollupCounts()).containsExactly(5L, 7L);
        h.close();
        // restored from the snapshot taken while the counter was let go: e1 comes again
        harness(IDLE_MS);
        h.initializeState(snapshot);
        h.open();
        send(add("e1", T0 + 20_000, 2));
        send(add("e9", T0 + 20_000, 4)); // behind the rollup and never logged: late, as without a store
        send(add("e2", T0 + 40_000, 1));
        h.processWatermark(T0 + 50_000);
        assertThat(rollupCounts()).containsExactly(8L);
        assertThat(h.getSideOutput(CounterRollupFunction.EVENT_LOG))
                .extracting(r -> r.getValue().eventId)
                .containsExactly("e2");
        assertThat(h.getSideOutput(CounterRollupFunction.DEAD_LETTERS))
                .extracting(r -> ((DeadLetterRecord) r.getValue()).reason)
                .containsExactly(DeadLetterReason.OUTSIDE_ACCEPT_WINDOW);
    }

    @Test
    void aNewCounterCostsNoReadEvenWhenTheStoreHasARowOfItsName() throws Exception {
        store.rollups.put("video_views/c1", new CounterRollupStore.StoredRollup(99, 0, 0, 0)); // never this job's
        harness(IDLE_MS).open();
        send(add("e1", T0, 5));
        h.processWatermark(T0 + 10_000);
        assertThat(rollupCounts()).containsExactly(5L);
        assertThat(store.reads).isZero();
    }

    @Test
    void countersLetGoAreReadBackAfterTheSettingIsSetBackToZero() throws Exception {
        harness(IDLE_MS).open();
        var snapshot = letGoAndSnapshot(add("e0", T0, 5));
        h.close();
        harness(0);
        h.initializeState(snapshot);
        h.open();
        send(add("e1", T0 + 20_000, 2));
        h.processWatermark(T0 + 30_000);
        assertThat(rollupCounts()).containsExactly(7L);
        assertThat(store.reads).isEqualTo(1);
    }

    @Test
    void afterARescaleTheTaskThatGetsACounterLetGoStillReadsItBack() throws Exception {
        int maxParallelism = 128;
        operator = new CounterRollupOperator(store, IDLE_MS);
        h = new KeyedOneInputStreamOperatorTestHarness<>(
                operator, CounterMutation::key, Types.STRING, maxParallelism, 1, 0);
        h.setProcessingTime(1_000);
        h.open();
        var snapshot = letGoAndSnapshot(add("e0", T0, 5));
        h.close();
        String key = add("e1", T0, 1).key();
        int owner = org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignKeyToParallelOperator(
                key, maxParallelism, 2);
        for (int subtask = 0; subtask < 2; subtask++) {
            operator = new CounterRollupOperator(store, IDLE_MS);
            h = new KeyedOneInputStreamOperatorTestHarness<>(
                    operator, CounterMutation::key, Types.STRING, maxParallelism, 2, subtask);
            h.setProcessingTime(1_000);
            h.initializeState(
                    org.apache.flink.streaming.util.AbstractStreamOperatorTestHarness.repartitionOperatorState(
                            snapshot, maxParallelism, 1, 2, subtask));
            h.open();
            assertThat(operator.mayHaveLetGo(key)).isTrue(); // every task holds the whole filter
            if (subtask == owner) {
                send(add("e1", T0 + 20_000, 2));
                h.processWatermark(T0 + 30_000);
                assertThat(rollupCounts()).containsExactly(7L);
            }
            h.close();
        }
        h = null;
    }

    @Test
    void aRestoredStatesIdleCountersLeaveOnceTheIdleTimeAndACheckpointHavePassed() throws Exception {
        harness(0).open(); // a release that kept every counter
        send(add("e1", T0, 5));
        CounterMutation other = add("o1", T0 + 8_000, 1);
        other.counter = "c2";
        send(other);
        h.processWatermark(T0 + 10_000); // c1 rolled up and idle, c2 pending
        store.store(h);
        var snapshot = h.snapshot(1, 1_000);
        h.close();

        harness(IDLE_MS);
        h.initializeState(snapshot);
        h.open();
        h.setProcessingTime(1_000 + 2 * IDLE_MS);
        assertThat(countersIn(operator, "rollup-state")).isEqualTo(2); // no checkpoint since the restore
        h.snapshot(2, 1_000 + 2 * IDLE_MS);
        h.notifyOfCompletedCheckpoint(2);
        h.setProcessingTime(1_000 + 3 * IDLE_MS);
        assertThat(countersIn(operator, "rollup-state")).isEqualTo(1); // c2 still waits for its rollup
        send(add("e3", T0 + 20_000, 3));
        h.processWatermark(T0 + 30_000);
        assertThat(rollupCounts()).containsExactlyInAnyOrder(1L, 8L);
    }
}
