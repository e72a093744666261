package io.tally.jobs.sched;

import io.tally.jobs.state.SerializerTypeInfo;
import java.lang.reflect.Type;
import java.util.Map;
import org.apache.flink.api.common.typeinfo.TypeInfoFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;

/**
 * Flink's type of a window's {@link WindowSketch.Acc}, named by {@code @TypeInfo} on it so the
 * window's state uses {@link WindowSketchAccSerializer}.
 */
public final class WindowSketchAccTypeInfo extends TypeInfoFactory<WindowSketch.Acc> {
    @Override
    public TypeInformation<WindowSketch.Acc> createTypeInfo(Type type, Map<String, TypeInformation<?>> parameters) {
        return new SerializerTypeInfo<>(WindowSketch.Acc.class, WindowSketchAccSerializer.INSTANCE);
    }
}
