package io.tally.jobs.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

/** Flink's serializer contract, StringSerializer's bytes exactly, and keyed state restored across the change. */
class OneWriteStringSerializerTest extends SerializerTestBase<String> {

    @Override
    protected TypeSerializer<String> createSerializer() {
        return OneWriteStringSerializer.INSTANCE;
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    protected Class<String> getTypeClass() {
        return String.class;
    }

    @Override
    protected String[] getTestData() {
        return new String[] {"", "video_views/c-1", "zähler-🎯-" + "x".repeat(300), "\u3042".repeat(20_000), random(7)};
    }

    /** Random strings of every char range: ASCII, 2- and 3-byte varints, lone surrogates, long lengths. */
    private static String random(long seed) {
        Random r = new Random(seed);
        int length = r.nextInt(4) == 0 ? 16_384 + r.nextInt(200) : r.nextInt(300);
        StringBuilder s = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            s.append(
                    switch (r.nextInt(4)) {
                        case 0 -> (char) r.nextInt(0x80);
                        case 1 -> (char) (0x80 + r.nextInt(0x4000 - 0x80));
                        case 2 -> (char) (0x4000 + r.nextInt(0x10000 - 0x4000));
                        default -> (char) ('a' + r.nextInt(26));
                    });
        }
        return s.toString();
    }

    @Test
    void writes_the_bytes_string_serializer_writes() throws Exception {
        for (long seed = 0; seed < 500; seed++) {
            String s = seed == 0 ? null : random(seed);
            DataOutputSerializer theirs = new DataOutputSerializer(64);
            StringSerializer.INSTANCE.serialize(s, theirs);
            DataOutputSerializer ours = new DataOutputSerializer(64);
            OneWriteStringSerializer.INSTANCE.serialize(s, ours);
            assertThat(ours.getCopyOfBuffer()).isEqualTo(theirs.getCopyOfBuffer());
        }
    }

    @Test
    void state_keyed_by_string_serializer_restores_as_is_and_back() throws Exception {
        assertThat(new OneWriteStringSerializer.Snapshot()
                        .resolveSchemaCompatibility(StringSerializer.INSTANCE.snapshotConfiguration())
                        .isCompatibleAsIs())
                .isTrue();
        // a checkpoint keyed by Types.STRING (every release before this one), restored keyed by ours
        OperatorSubtaskState before = run(Types.STRING, null, List.of("a/1", "a/1", "zähler/🎯", "a/2"));
        OperatorSubtaskState after = run(SerializerTypeInfo.STRING_KEY, before, List.of("a/1", "zähler/🎯", "b/1"));
        // each key's count went on from the restored one, timers included (one a key, fired below)
        OperatorSubtaskState again = run(SerializerTypeInfo.STRING_KEY, after, List.of("a/1"));
        assertThat(counts)
                .containsExactly("a/1=1", "a/1=2", "zähler/🎯=1", "a/2=1", "a/1=3", "zähler/🎯=2", "b/1=1", "a/1=4");
        assertThat(fired).containsExactlyInAnyOrder("a/1", "zähler/🎯", "a/2", "b/1");
        assertThat(again).isNotNull();
    }

    private final List<String> counts = new java.util.ArrayList<>();
    private final List<String> fired = new java.util.ArrayList<>();

    private OperatorSubtaskState run(TypeInformation<String> keyType, OperatorSubtaskState restore, List<String> keys)
            throws Exception {
        var harness = new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new Count()), (String k) -> k, keyType);
        if (restore != null) {
            harness.initializeState(restore);
        }
        harness.open();
        for (String k : keys) {
            harness.processElement(k, 1);
        }
        counts.addAll(harness.extractOutputValues().stream()
                .filter(v -> v.contains("="))
                .toList());
        OperatorSubtaskState snapshot = harness.snapshot(1, 1);
        if (keyType != Types.STRING && keys.size() == 1) {
            harness.processWatermark(Long.MAX_VALUE); // every restored timer fires once
            fired.addAll(harness.extractOutputValues().stream()
                    .filter(v -> v.startsWith("fired:"))
                    .map(v -> v.substring(6))
                    .toList());
        }
        harness.close();
        return snapshot;
    }

    /** Counts a key's elements and sets a timer a key (the timers' keys are written too). */
    static final class Count extends KeyedProcessFunction<String, String, String> {
        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void processElement(String key, Context ctx, Collector<String> out) throws Exception {
            long n = count.value() == null ? 1 : count.value() + 1;
            count.update(n);
            ctx.timerService().registerEventTimeTimer(1_000);
            out.collect(key + "=" + n);
        }

        @Override
        public void onTimer(long time, OnTimerContext ctx, Collector<String> out) {
            out.collect("fired:" + ctx.getCurrentKey());
        }
    }
}
