package io.tally.jobs.counter;

import static org.assertj.core.api.Assertions.assertThat;

import io.tally.jobs.kafka.RawRecord;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.SerializerTestBase;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.testutils.DeeplyEqualsChecker;
import org.junit.jupiter.api.Test;

/** Flink's own serializer contract (copy, snapshot, sequences, reuse) plus: no field is left out. */
class CounterMutationSerializerTest extends SerializerTestBase<CounterMutation> {

    CounterMutationSerializerTest() {
        // field by field: CounterMutation has no equals of its own (nothing else compares them)
        super(new DeeplyEqualsChecker()
                .withCustomCheck(
                        (a, b) -> a instanceof CounterMutation && b instanceof CounterMutation,
                        (a, b, checker) -> sameFields(a, b)));
    }

    private static boolean sameFields(Object a, Object b) {
        try {
            assertThat(b).usingRecursiveComparison().isEqualTo(a);
            return true;
        } catch (AssertionError e) {
            return false;
        }
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
        assertThat(TypeInformation.of(CounterMutation.class)).isInstanceOf(CounterMutationTypeInfo.class);
        assertThat(TypeInformation.of(CounterMutation.class)
                        .createSerializer(new org.apache.flink.api.common.serialization.SerializerConfigImpl()))
                .isSameAs(CounterMutationSerializer.INSTANCE);
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

    /** Every public field set by reflection to a random non-default value, so new fields are covered too. */
    private static CounterMutation filled(Random random) {
        CounterMutation m = new CounterMutation();
        fill(m, random);
        RawRecord raw = new RawRecord();
        fill(raw, random);
        m.raw = raw;
        return m;
    }

    private static void fill(Object target, Random random) {
        for (Field f : target.getClass().getFields()) {
            if (Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            try {
                Class<?> t = f.getType();
                if (t == String.class) {
                    f.set(target, "s" + random.nextInt(1_000_000));
                } else if (t == long.class) {
                    f.setLong(target, random.nextLong() | 1);
                } else if (t == int.class) {
                    f.setInt(target, random.nextInt() | 1);
                } else if (t == boolean.class) {
                    f.setBoolean(target, true);
                } else if (t == byte[].class) {
                    f.set(target, ("b" + random.nextInt()).getBytes(StandardCharsets.UTF_8));
                } else if (t == RawRecord.class) {
                    continue; // filled by the caller
                } else {
                    throw new AssertionError("a field of a type this test cannot fill: " + f);
                }
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
    }
}
