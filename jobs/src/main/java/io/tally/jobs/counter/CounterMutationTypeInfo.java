package io.tally.jobs.counter;

import io.tally.jobs.state.SerializerTypeInfo;
import java.lang.reflect.Type;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.TypeInfoFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;

/**
 * Flink's type of {@link CounterMutation}, named by {@code @TypeInfo} on it so every stream of
 * them uses {@link CounterMutationSerializer}.
 */
public final class CounterMutationTypeInfo extends TypeInfoFactory<CounterMutation> {
    @Override
    public TypeInformation<CounterMutation> createTypeInfo(Type type, Map<String, TypeInformation<?>> parameters) {
        return new SerializerTypeInfo<>(CounterMutation.class, CounterMutationSerializer.INSTANCE);
    }
}
