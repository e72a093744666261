package io.tally.jobs.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/** A test sink that collects into a static list per name (MiniCluster tasks share the JVM). */
public final class CollectSink<T> implements Sink<T> {
    static final Map<String, List<Object>> COLLECTED = new ConcurrentHashMap<>();
    private final String name;

    public CollectSink(String name) {
        this.name = name;
        COLLECTED.put(name, java.util.Collections.synchronizedList(new ArrayList<>()));
    }

    @SuppressWarnings("unchecked")
    public static <T> List<T> get(String name) {
        return (List<T>) COLLECTED.get(name);
    }

    @Override
    @SuppressWarnings("deprecation")
    public SinkWriter<T> createWriter(InitContext context) {
        return new SinkWriter<>() {
            @Override
            public void write(T element, Context context) {
                COLLECTED.get(name).add(element);
            }

            @Override
            public void flush(boolean endOfInput) {}

            @Override
            public void close() {}
        };
    }
}
