package io.tally.jobs.sched;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.HdrHistogram.Histogram;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.PojoField;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.testutils.DeeplyEqualsChecker;
import org.junit.jupiter.api.Test;

/**
 * Flink's serializer contract, a window's summary unchanged by where its histogram lives, and the
 * move from the POJO serializer's state (the histogram compressed at every sample).
 */
class WindowSketchAccSerializerTest extends SerializerTestBase<WindowSketch.Acc> {

    WindowSketchAccSerializerTest() {
        super(new DeeplyEqualsChecker()
                .withCustomCheck(
                        (a, b) -> a instanceof WindowSketch.Acc && b instanceof WindowSketch.Acc,
                        (a, b, c) -> same((WindowSketch.Acc) a, (WindowSketch.Acc) b)));
    }

    private static boolean same(WindowSketch.Acc a, WindowSketch.Acc b) {
        return a.sameContainer == b.sameContainer
                && a.otherContainer == b.otherContainer
                && a.system == b.system
                && a.waitSameUs == b.waitSameUs
                && a.waitOtherUs == b.waitOtherUs
                && a.waitSystemUs == b.waitSystemUs
                && a.histogram().equals(b.histogram());
    }

    @Override
    protected TypeSerializer<WindowSketch.Acc> createSerializer() {
        return WindowSketchAccSerializer.INSTANCE;
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    protected Class<WindowSketch.Acc> getTypeClass() {
        return WindowSketch.Acc.class;
    }

    @Override
    protected WindowSketch.Acc[] getTestData() {
        WindowSketch.Acc restored = filled(new Random(5), 300); // as the POJO serializer left it
        restored.histogram = restored.compressed();
        restored.live = null;
        return new WindowSketch.Acc[] {
            new WindowSketch.Acc(), filled(new Random(3), 1), filled(new Random(4), 500), restored
        };
    }

    private static SchedObservation sample(Random r) {
        SchedObservation o = new SchedObservation();
        o.host = "h";
        o.container = "c";
        o.switchOut = r.nextInt(4) == 0;
        o.latencyUs = (long) Math.exp(r.nextDouble() * 17); // 1 µs to about 24 s: past the top too
        o.cause = switch (r.nextInt(4)) {
            case 0 -> "same_container";
            case 1 -> "other_container";
            case 2 -> "system";
            default -> o.switchOut ? "system" : null; // a switch-out always names its cause
        };
        o.count = 1 + r.nextInt(5);
        return o;
    }

    private static WindowSketch.Acc filled(Random r, int samples) {
        WindowSketch sketch = new WindowSketch();
        WindowSketch.Acc acc = sketch.createAccumulator();
        for (int i = 0; i < samples; i++) {
            acc = sketch.add(sample(r), acc);
        }
        return acc;
    }

    @Test
    void a_window_sums_what_a_histogram_of_every_sample_holds() throws Exception {
        Random r = new Random(9);
        WindowSketch sketch = new WindowSketch();
        WindowSketch.Acc acc = sketch.createAccumulator();
        Histogram reference = new Histogram(WindowSketch.MAX_US, 2);
        long waits = 0;
        for (int i = 0; i < 5_000; i++) {
            SchedObservation o = sample(r);
            acc = sketch.add(o, acc);
            if (!o.switchOut) {
                long us = Math.max(1, Math.min(WindowSketch.MAX_US, o.latencyUs));
                reference.recordValue(us);
                waits += o.cause == null ? 0 : us;
            }
        }
        ContainerWindow w = WindowSketch.summary("h/c", 0, 60_000, acc);
        assertThat(w.samples).isEqualTo(reference.getTotalCount());
        assertThat(w.p50Us).isEqualTo(reference.getValueAtPercentile(50));
        assertThat(w.p99Us).isEqualTo(reference.getValueAtPercentile(99));
        assertThat(w.meanUs).isEqualTo(Math.round(reference.getMean()));
        assertThat(w.waitSameUs + w.waitOtherUs + w.waitSystemUs).isEqualTo(waits);
        // the same summary after a checkpoint's round trip, and after more samples on the restored one
        WindowSketch.Acc back = roundTrip(WindowSketchAccSerializer.INSTANCE, acc);
        assertThat(WindowSketch.summary("h/c", 0, 60_000, back))
                .usingRecursiveComparison()
                .isEqualTo(w);
    }

    @Test
    void a_copy_fills_apart_from_its_original() {
        WindowSketch sketch = new WindowSketch();
        WindowSketch.Acc acc = filled(new Random(1), 100);
        long before = acc.histogram().getTotalCount();
        WindowSketch.Acc copy = WindowSketchAccSerializer.INSTANCE.copy(acc);
        SchedObservation o = sample(new Random(2));
        o.switchOut = false;
        sketch.add(o, copy);
        assertThat(acc.histogram().getTotalCount()).isEqualTo(before);
        assertThat(copy.histogram().getTotalCount()).isEqualTo(before + 1);
    }

    @Test
    void state_the_pojo_serializer_wrote_is_taken_over_after_migration() throws Exception {
        TypeSerializer<WindowSketch.Acc> pojo = pojoSerializer();
        assertThat(new WindowSketchAccSerializer.Snapshot()
                        .resolveSchemaCompatibility(pojo.snapshotConfiguration())
                        .isCompatibleAfterMigration())
                .isTrue();
        assertThat(TypeInformation.of(WindowSketch.Acc.class).createSerializer(new SerializerConfigImpl()))
                .isInstanceOf(WindowSketchAccSerializer.class);
        // a window of the release before: the histogram compressed at each sample (Histogram, long counts)
        Random r = new Random(12);
        Histogram old = new Histogram(WindowSketch.MAX_US, 2);
        WindowSketch.Acc written = new WindowSketch.Acc();
        for (int i = 0; i < 400; i++) {
            old.recordValue(1 + r.nextInt(50_000));
        }
        ByteBuffer b = ByteBuffer.allocate(old.getNeededByteBufferCapacity());
        written.histogram = java.util.Arrays.copyOf(b.array(), old.encodeIntoCompressedByteBuffer(b));
        written.otherContainer = 7;
        written.waitOtherUs = 1_234;
        // restored with the POJO serializer, filled on, written with ours, read back
        WindowSketch.Acc restored = roundTrip(pojo, written);
        SchedObservation more = sample(r);
        more.switchOut = false;
        more.latencyUs = 77;
        new WindowSketch().add(more, restored);
        old.recordValue(77);
        WindowSketch.Acc migrated = roundTrip(WindowSketchAccSerializer.INSTANCE, restored);
        assertThat(migrated.histogram().getTotalCount()).isEqualTo(old.getTotalCount());
        assertThat(migrated.histogram().getValueAtPercentile(90)).isEqualTo(old.getValueAtPercentile(90));
        assertThat(migrated.otherContainer).isEqualTo(7);
        assertThat(migrated.waitOtherUs).isEqualTo(1_234 + (more.cause == null ? 0 : 77));
    }

    /** The serializer Flink chose for the accumulator before it had one of its own. */
    private static TypeSerializer<WindowSketch.Acc> pojoSerializer() {
        List<PojoField> fields = new ArrayList<>();
        for (Field f : WindowSketch.Acc.class.getFields()) {
            fields.add(new PojoField(f, TypeInformation.of(f.getType())));
        }
        return new PojoTypeInfo<>(WindowSketch.Acc.class, fields).createSerializer(new SerializerConfigImpl());
    }

    private static WindowSketch.Acc roundTrip(TypeSerializer<WindowSketch.Acc> s, WindowSketch.Acc acc)
            throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(256);
        s.serialize(acc, out);
        return s.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
    }
}
