package io.tally.jobs.counter;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.testing.EveryField;
import io.tally.jobs.testing.FieldByField;
import java.util.Random;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** Flink's serializer contract, every field, and the move from the POJO serializer's state. */
class CounterRollupStateSerializerTest extends SerializerTestBase<CounterRollupState> {

    CounterRollupStateSerializerTest() {
        super(FieldByField.checker(CounterRollupState.class));
    }

    @Override
    protected TypeSerializer<CounterRollupState> createSerializer() {
        return new CounterRollupStateSerializer();
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    protected Class<CounterRollupState> getTypeClass() {
        return CounterRollupState.class;
    }

    @Override
    protected CounterRollupState[] getTestData() {
        Random random = new Random(3);
        CounterRollupState idle = new CounterRollupState();
        idle.count = 42;
        idle.rollupMicros = 1_795_680_000_000_000L;
        CounterRollupState negative = EveryField.fill(new CounterRollupState(), random);
        negative.count = Long.MIN_VALUE;
        negative.repairs = Integer.MAX_VALUE;
        CounterRollupState extremes = EveryField.fill(new CounterRollupState(), random);
        extremes.count = Long.MAX_VALUE;
        extremes.rollupMicros = -1;
        return new CounterRollupState[] {
            new CounterRollupState(), idle, negative, extremes, EveryField.fill(new CounterRollupState(), random)
        };
    }

    @Test
    void every_field_survives_the_round_trip() throws Exception {
        Random random = new Random(11);
        CounterRollupStateSerializer serializer = new CounterRollupStateSerializer();
        for (int i = 0; i < 200; i++) {
            CounterRollupState s = EveryField.fill(new CounterRollupState(), random);
            DataOutputSerializer out = new DataOutputSerializer(64);
            serializer.serialize(s, out);
            CounterRollupState back = serializer.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
            // every field was set to a value other than its default: one left out comes back as 0
            assertThat(back).usingRecursiveComparison().isEqualTo(s);
        }
    }

    @Test
    void an_idle_counter_takes_a_few_bytes_not_a_hundred() throws Exception {
        CounterRollupState idle = new CounterRollupState();
        idle.count = 1_234;
        idle.rollupMicros = 1_795_680_000_000_000L;
        idle.lastWriteMicros = 1_795_679_999_000_000L;
        idle.acceptLimitMs = 5_000;
        idle.coalesceMs = 1_000;
        idle.clockSkewMs = 500;
        idle.namespaceCreatedMicros = 1_795_000_000_000_000L;
        DataOutputSerializer out = new DataOutputSerializer(64);
        new CounterRollupStateSerializer().serialize(idle, out);
        assertThat(out.length()).isLessThan(40);
    }

    @Test
    void state_written_by_the_pojo_serializer_is_taken_over_after_migration() {
        TypeSerializerSnapshot<CounterRollupState> pojo = TypeInformation.of(CounterRollupState.class)
                .createSerializer(new SerializerConfigImpl())
                .snapshotConfiguration();
        var ours = new CounterRollupStateSerializer().snapshotConfiguration();
        assertThat(ours.resolveSchemaCompatibility(pojo).isCompatibleAfterMigration())
                .isTrue();
        assertThat(ours.resolveSchemaCompatibility(new CounterRollupStateSerializer().snapshotConfiguration())
                        .isCompatibleAsIs())
                .isTrue();
    }
}
