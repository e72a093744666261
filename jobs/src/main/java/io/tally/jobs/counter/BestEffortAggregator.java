package io.tally.jobs.counter;

import io.tally.namespace.NamespaceCatalog;
import io.tally.namespace.NamespaceConfig;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * BEST_EFFORT counters: a processing-time running total per counter, no dedup and no event
 * log (retries count twice; it is approximate by design). The total is flushed at most
 * FLUSH_MS (or coalesce_ms, if shorter) after a change, and both the state and the Cassandra
 * row expire after the namespace's retention.delete_after without writes.
 */
public class BestEffortAggregator extends KeyedProcessFunction<String, CounterMutation, RollupWrite> {
    static final long FLUSH_MS = 250;
    private final String namespacesDir;
    private transient NamespaceCatalog catalog;
    /** [total, pending flush time]. */
    private transient ValueState<long[]> total;

    public BestEffortAggregator(String namespacesDir) {
        this.namespacesDir = namespacesDir;
    }

    @Override
    public void open(OpenContext ctx) throws Exception {
        catalog = NamespaceCatalog.fromDirectory(Path.of(namespacesDir));
        Duration ttl = catalog.all().stream().filter(n -> n.counterType() == NamespaceConfig.CounterType.BEST_EFFORT)
                .map(n -> n.retention().deleteAfter()).max(Duration::compareTo).orElse(Duration.ofDays(1));
        ValueStateDescriptor<long[]> desc = new ValueStateDescriptor<>("best-effort-total", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO);
        desc.enableTimeToLive(StateTtlConfig.newBuilder(ttl).build());
        total = getRuntimeContext().getState(desc);
    }

    @Override
    public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
        long[] t = total.value();
        t = t == null ? new long[2] : t;
        t[0] = m.clear ? 0 : t[0] + m.delta;
        if (t[1] == 0) {
            NamespaceConfig ns = catalog.get(m.namespace).orElseThrow();
            t[1] = ctx.timerService().currentProcessingTime() + Math.min(FLUSH_MS, Math.max(1, ns.rollup().coalesceMs()));
            ctx.timerService().registerProcessingTimeTimer(t[1]);
        }
        total.update(t);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<RollupWrite> out) throws Exception {
        long[] t = total.value();
        if (t == null) {
            return;
        }
        String key = ctx.getCurrentKey();
        int slash = key.indexOf('/');
        String namespace = key.substring(0, slash);
        NamespaceConfig ns = catalog.get(namespace).orElseThrow();
        out.collect(RollupWrite.rollup(namespace, key.substring(slash + 1), t[0], timestamp * 1000,
                (int) Math.min(Integer.MAX_VALUE, ns.retention().deleteAfter().toSeconds())));
        t[1] = 0;
        total.update(t);
    }
}
