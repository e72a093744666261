package io.tally.jobs.provision;

import io.tally.jobs.control.ControlPlane;
import io.tally.namespace.NamespaceChange;
import java.io.Serializable;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.function.SerializableSupplier;

/**
 * The provisioning branch of a job: a tick every interval joined with the control plane, into
 * the {@link NamespaceProvisioner} (parallelism 1 by design). Part of the job's graph, so a
 * MiniCluster test runs it with a recording {@link NamespaceStorage}.
 *
 * @param storage opens the stores' side (once per operator instance)
 * @param intervalMs how often the slice lifecycle runs
 * @param ticks how many ticks the branch makes (unbounded in production; a test bounds it so its job ends)
 */
public record Provisioning(SerializableSupplier<NamespaceStorage> storage, long intervalMs, long ticks)
        implements Serializable {
    public static Provisioning every(long intervalMs, SerializableSupplier<NamespaceStorage> storage) {
        return new Provisioning(storage, intervalMs, Long.MAX_VALUE);
    }

    /** Adds the branch to the control stream's job. */
    public void attach(DataStream<NamespaceChange> control) {
        DataGeneratorSource<Long> tickSource = new DataGeneratorSource<>(
                i -> i, ticks, RateLimiterStrategy.perSecond(1000.0 / intervalMs), Types.LONG);
        control.getExecutionEnvironment()
                .fromSource(tickSource, WatermarkStrategy.noWatermarks(), "lifecycle-ticks")
                .uid("lifecycle-ticks")
                .setParallelism(1)
                .connect(ControlPlane.broadcast(control))
                .process(new NamespaceProvisioner(storage))
                .uid("namespace-provisioner")
                .name("namespace-provisioner")
                .setParallelism(1)
                .sinkTo(new DiscardingSink<>())
                .uid("lifecycle-done")
                .setParallelism(1);
    }
}
