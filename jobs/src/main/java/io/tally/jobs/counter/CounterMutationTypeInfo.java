package io.tally.jobs.counter;

import java.lang.reflect.Type;
import java.util.Map;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInfoFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/** Flink's type of {@link CounterMutation}: serialized by {@link CounterMutationSerializer}. */
public final class CounterMutationTypeInfo extends TypeInformation<CounterMutation> {
    private static final long serialVersionUID = 1L;

    /** Named by {@code @TypeInfo} on {@link CounterMutation}, so every stream of them uses it. */
    public static final class Factory extends TypeInfoFactory<CounterMutation> {
        @Override
        public TypeInformation<CounterMutation> createTypeInfo(Type type, Map<String, TypeInformation<?>> parameters) {
            return new CounterMutationTypeInfo();
        }
    }

    @Override
    public boolean isBasicType() {
        return false;
    }

    @Override
    public boolean isTupleType() {
        return false;
    }

    @Override
    public int getArity() {
        return 1;
    }

    @Override
    public int getTotalFields() {
        return 1;
    }

    @Override
    public Class<CounterMutation> getTypeClass() {
        return CounterMutation.class;
    }

    @Override
    public boolean isKeyType() {
        return false;
    }

    @Override
    public TypeSerializer<CounterMutation> createSerializer(SerializerConfig config) {
        return CounterMutationSerializer.INSTANCE;
    }

    @Override
    @SuppressWarnings("deprecation")
    public TypeSerializer<CounterMutation> createSerializer(ExecutionConfig config) {
        return CounterMutationSerializer.INSTANCE;
    }

    @Override
    public String toString() {
        return "CounterMutation";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CounterMutationTypeInfo;
    }

    @Override
    public int hashCode() {
        return CounterMutationTypeInfo.class.hashCode();
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof CounterMutationTypeInfo;
    }
}
