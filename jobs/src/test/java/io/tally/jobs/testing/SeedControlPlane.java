package io.tally.jobs.testing;

import io.tally.jobs.control.ControlPlane;
import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceChange;
import java.nio.file.Path;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/** A MiniCluster job's control plane: the seed namespaces of infra/namespaces as changes, in place of the Kafka topic. */
public final class SeedControlPlane {
    private SeedControlPlane() {}

    public static DataStream<NamespaceChange> stream(StreamExecutionEnvironment env, NamespaceChange... later)
            throws Exception {
        java.util.List<NamespaceChange> changes =
                new java.util.ArrayList<>(NamespaceCatalog.seedChanges(Path.of("../infra/namespaces")));
        changes.addAll(java.util.List.of(later));
        return env.fromData(TypeInformation.of(NamespaceChange.class), changes.toArray(new NamespaceChange[0]))
                .setParallelism(1)
                .assignTimestampsAndWatermarks(ControlPlane.NEVER_HOLDS_BACK)
                .setParallelism(1);
    }

    /** Holds the first element back, so the other input of a two-input step goes first. */
    public static <T> MapFunction<T, T> afterDelay(long millis) {
        return new MapFunction<>() {
            private boolean first = true;

            @Override
            public T map(T value) throws Exception {
                if (first) {
                    Thread.sleep(millis);
                    first = false;
                }
                return value;
            }
        };
    }
}
