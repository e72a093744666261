package io.tally.jobs.counter;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.kafka.RawRecord;
import io.tally.jobs.testing.EveryField;
import io.tally.jobs.testing.FieldByField;
import java.util.Random;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/** Flink's own serializer contract (copy, snapshot, sequences, reuse) plus: no field is left out. */
class CounterMutationSerializerTest extends SerializerTestBase<CounterMutation> {

    CounterMutationSerializerTest() {
        super(FieldByField.checker(CounterMutation.class));
    }

    @Override
    protected TypeSerializer<CounterMutation> createSerializer() {
        return CounterMutationSerializer.INSTANCE;
    }

    @Override
    protected int getLength() {
        return -1;
    }

    @Override
    protected Class<CounterMutation> getTypeClass() {
        return CounterMutation.class;
    }

    @Override
    protected CounterMutation[] getTestData() {
        Random random = new Random(42);
        CounterMutation empty = new CounterMutation();
        CounterMutation noRaw = filled(random);
        noRaw.raw = null;
        CounterMutation rawWithoutBytes = filled(random);
        rawWithoutBytes.raw.key = null;
        rawWithoutBytes.raw.value = new byte[0];
        CounterMutation unicode = filled(random);
        unicode.counter = "zähler-🎯-" + "x".repeat(300);
        return new CounterMutation[] {empty, noRaw, rawWithoutBytes, unicode, filled(random), filled(random)};
    }

    @Test
    void the_stream_type_of_a_counter_mutation_is_this_serializer_not_the_pojo_one() {
        assertThat(TypeInformation.of(CounterMutation.class)
                        .createSerializer(new org.apache.flink.api.common.serialization.SerializerConfigImpl()))
                .isInstanceOf(CounterMutationSerializer.class);
    }

    @Test
    void every_field_of_a_mutation_and_its_raw_record_survives_the_round_trip() throws Exception {
        Random random = new Random(7);
        for (int i = 0; i < 50; i++) {
            CounterMutation m = filled(random);
            DataOutputSerializer out = new DataOutputSerializer(256);
            CounterMutationSerializer.INSTANCE.serialize(m, out);
            CounterMutation back =
                    CounterMutationSerializer.INSTANCE.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
            // filled() sets every field to a value other than its default, so a field the serializer
            // does not carry comes back as its default and fails here
            assertThat(back).usingRecursiveComparison().isEqualTo(m);
        }
    }

    /** Every field set (the raw record's too), so new fields are covered as well. */
    private static CounterMutation filled(Random random) {
        CounterMutation m = EveryField.fill(new CounterMutation(), random);
        m.raw = EveryField.fill(new RawRecord(), random);
        return m;
    }
}
