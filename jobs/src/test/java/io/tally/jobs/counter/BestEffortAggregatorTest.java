package io.tally.jobs.counter;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

class BestEffortAggregatorTest {
    static CounterMutation add(long delta) {
        CounterMutation m = CounterRollupFunctionTest.add("x", CounterRollupFunctionTest.T0, delta);
        m.namespace = "page_hits";
        m.bestEffort = true;
        m.deleteAfterSeconds = 3600;
        return m;
    }

    static KeyedOneInputStreamOperatorTestHarness<String, CounterMutation, RollupWrite> harness() throws Exception {
        return harness(new BestEffortAggregator());
    }

    /** An aggregator whose idle counters leave after a minute and are read back from `store`. */
    static KeyedOneInputStreamOperatorTestHarness<String, CounterMutation, RollupWrite> harness(
            CounterRollupStore store) throws Exception {
        return harness(new BestEffortAggregator(store, 60_000));
    }

    static KeyedOneInputStreamOperatorTestHarness<String, CounterMutation, RollupWrite> harness(
            BestEffortAggregator aggregator) throws Exception {
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(aggregator), CounterMutation::key, Types.STRING);
    }

    @Test
    void aBurstIsOneFlushWithTheNamespacesRetentionAsTtl() throws Exception {
        try (var h = harness()) {
            h.open();
            h.setProcessingTime(1_000);
            h.processElement(new StreamRecord<>(add(2)));
            h.processElement(new StreamRecord<>(add(3)));
            h.setProcessingTime(1_000 + BestEffortAggregator.FLUSH_MS);
            assertThat(h.extractOutputValues()).singleElement().satisfies(w -> {
                assertThat(w.count).isEqualTo(5);
                assertThat(w.ttlSeconds).isEqualTo(3600);
            });
        }
    }

    @Test
    void aCounterIdleForTheIdleTimeLeavesTheStateAndCarriesOnFromTheStoredTotal() throws Exception {
        CounterIdleStateTest.WrittenStore store = new CounterIdleStateTest.WrittenStore();
        try (var h = harness(store)) {
            h.open();
            h.setStateTtlProcessingTime(1_000);
            h.setProcessingTime(1_000);
            h.processElement(new StreamRecord<>(add(2)));
            h.setProcessingTime(1_000 + BestEffortAggregator.FLUSH_MS);
            store.store(h);
            assertThat(store.rollups.get("page_hits/c1").count()).isEqualTo(2);
            h.setStateTtlProcessingTime(1_000 + 61_000);
            h.setProcessingTime(1_000 + 61_000);
            h.processElement(new StreamRecord<>(add(3))); // the state expired: 2 comes from the store
            h.setProcessingTime(1_000 + 61_000 + BestEffortAggregator.FLUSH_MS);
            assertThat(h.extractOutputValues()).extracting(w -> w.count).containsExactly(2L, 5L);
            assertThat(store.reads).isEqualTo(1); // when it came back, not when it was new
        }
    }

    @Test
    void aNewCounterIsNotReadAndAFlushedOneIsReadBackAfterARestore() throws Exception {
        CounterIdleStateTest.WrittenStore store = new CounterIdleStateTest.WrittenStore();
        store.rollups.put("page_hits/c1", new CounterRollupStore.StoredRollup(99, 0, 0, 0)); // not this job's
        org.apache.flink.runtime.checkpoint.OperatorSubtaskState snapshot;
        try (var h = harness(store)) {
            h.open();
            h.setStateTtlProcessingTime(1_000);
            h.setProcessingTime(1_000);
            h.processElement(new StreamRecord<>(add(2)));
            assertThat(store.reads).isZero(); // never flushed by this job: new, starts from 0
            h.setProcessingTime(1_000 + BestEffortAggregator.FLUSH_MS);
            assertThat(h.extractOutputValues()).extracting(w -> w.count).containsExactly(2L);
            store.store(h);
            snapshot = h.snapshot(1, 2_000);
        }
        try (var h = harness(store)) {
            h.initializeState(snapshot);
            h.open();
            h.setStateTtlProcessingTime(1_000 + 61_000); // the restored total expired
            h.setProcessingTime(1_000 + 61_000);
            h.processElement(new StreamRecord<>(add(3)));
            h.setProcessingTime(1_000 + 61_000 + BestEffortAggregator.FLUSH_MS);
            assertThat(h.extractOutputValues()).extracting(w -> w.count).containsExactly(5L);
            assertThat(store.reads).isEqualTo(1);
        }
    }

    /** The layout up to 2026-11: long[] {total, pending flush time, delete_after seconds}. */
    static final class LegacyLayout extends KeyedProcessFunction<String, CounterMutation, RollupWrite> {
        @Override
        public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
            ValueStateDescriptor<long[]> desc = new ValueStateDescriptor<>(
                    "best-effort-total", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO);
            desc.enableTimeToLive(
                    StateTtlConfig.newBuilder(BestEffortAggregator.IDLE_TTL).build()); // as it was
            ValueState<long[]> t = getRuntimeContext().getState(desc);
            t.update(new long[] {40, 0, 3600});
        }
    }

    @Test
    void aSavepointOfTheSlotArrayLayoutKeepsItsTotal() throws Exception {
        var legacy = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new LegacyLayout()), CounterMutation::key, Types.STRING);
        legacy.open();
        legacy.processElement(new StreamRecord<>(add(0)));
        var snapshot = legacy.snapshot(1, 0);
        legacy.close();
        try (var h = harness()) {
            h.initializeState(snapshot);
            h.open();
            h.setProcessingTime(1_000);
            h.processElement(new StreamRecord<>(add(2)));
            h.setProcessingTime(2_000);
            assertThat(h.extractOutputValues()).extracting(w -> w.count).containsExactly(42L);
        }
    }
}
