package io.tally.jobs.state;

import java.util.Objects;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;

/**
 * Flink's type of a class that has a serializer of its own (written for a record crossing a
 * shuffle, a state written into every checkpoint, or a key): what a {@code @TypeInfo} factory
 * or a keyBy names so Flink uses that serializer instead of reflection or Kryo.
 */
public final class SerializerTypeInfo<T> extends TypeInformation<T> {
    private static final long serialVersionUID = 1L;
    /** String keys written by {@link OneWriteStringSerializer}. */
    public static final SerializerTypeInfo<String> STRING_KEY =
            new SerializerTypeInfo<>(String.class, OneWriteStringSerializer.INSTANCE, true);

    private final Class<T> type;
    private final TypeSerializer<T> serializer;
    private final boolean key;

    /** A type of records or state, not of keys. */
    public SerializerTypeInfo(Class<T> type, TypeSerializer<T> serializer) {
        this(type, serializer, false);
    }

    public SerializerTypeInfo(Class<T> type, TypeSerializer<T> serializer, boolean key) {
        this.type = type;
        this.serializer = serializer;
        this.key = key;
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
    public Class<T> getTypeClass() {
        return type;
    }

    @Override
    public boolean isKeyType() {
        return key;
    }

    @Override
    public TypeSerializer<T> createSerializer(SerializerConfig config) {
        return serializer.duplicate();
    }

    @Override
    @SuppressWarnings("deprecation")
    public TypeSerializer<T> createSerializer(ExecutionConfig config) {
        return serializer.duplicate();
    }

    @Override
    public String toString() {
        return type.getSimpleName() + " (" + serializer.getClass().getSimpleName() + ")";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SerializerTypeInfo<?> other
                && other.type == type
                && other.key == key
                && other.serializer.equals(serializer);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, serializer, key);
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof SerializerTypeInfo;
    }
}
