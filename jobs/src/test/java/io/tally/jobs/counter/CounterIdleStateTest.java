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
        h.close();
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
        assertThat(store.reads).isEqualTo(1); // when it was new

        send(add("e2", T0 + 20_000, 2));
        assertThat(store.reads).isEqualTo(2);
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
        assertThat(store.reads).isEqualTo(1); // when it was new, not again
    }

    @Test
    void eventsCountedByAStoredRollupNewerThanTheStateAreRetriesAndAnUnloggedOneIsStillLate() throws Exception {
        // a run that crashed after writing a rollup of 5 at T0 + 0.5 s, with e1's row in the log
        harness(IDLE_MS).open();
        send(add("e1", T0, 5));
        h.processWatermark(T0 + 6_000);
        store.store(h);
        h.close();
        // the restored state knew nothing of the counter (it had left the state): e1 comes again
        harness(IDLE_MS).open();
        send(add("e1", T0, 5));
        send(add("e9", T0, 4)); // behind the rollup and never logged: late, as without a store
        send(add("e2", T0 + 20_000, 1));
        h.processWatermark(T0 + 30_000);
        assertThat(rollupCounts()).containsExactly(6L);
        assertThat(h.getSideOutput(CounterRollupFunction.EVENT_LOG))
                .extracting(r -> r.getValue().eventId)
                .containsExactly("e2");
        assertThat(h.getSideOutput(CounterRollupFunction.DEAD_LETTERS))
                .extracting(r -> ((DeadLetterRecord) r.getValue()).reason)
                .containsExactly(DeadLetterReason.OUTSIDE_ACCEPT_WINDOW);
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
