package io.tally.jobs.counter;

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
    /** How long an idle counter's total is kept (its rollup row outlives it by the namespace's delete_after). */
    static final Duration IDLE_TTL = Duration.ofDays(7);
    /** [total, pending flush time, the namespace's delete_after in seconds]. */
    private transient ValueState<long[]> total;

    public BestEffortAggregator() {}

    @Override
    public void open(OpenContext ctx) throws Exception {
        Duration ttl = IDLE_TTL;
        ValueStateDescriptor<long[]> desc =
                new ValueStateDescriptor<>("best-effort-total", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO);
        desc.enableTimeToLive(StateTtlConfig.newBuilder(ttl).build());
        total = getRuntimeContext().getState(desc);
    }

    @Override
    public void processElement(CounterMutation m, Context ctx, Collector<RollupWrite> out) throws Exception {
        long[] t = total.value();
        t = t == null ? new long[3] : t.length < 3 ? java.util.Arrays.copyOf(t, 3) : t;
        t[0] = m.clear ? 0 : t[0] + m.delta;
        t[2] = m.deleteAfterSeconds;
        if (t[1] == 0) {
            t[1] = ctx.timerService().currentProcessingTime() + Math.min(FLUSH_MS, Math.max(1, m.coalesceMs));
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
        long ttlSeconds = t.length > 2 && t[2] > 0 ? t[2] : IDLE_TTL.toSeconds();
        out.collect(RollupWrite.rollup(namespace, key.substring(slash + 1), t[0], timestamp * 1000, (int)
                Math.min(Integer.MAX_VALUE, ttlSeconds)));
        t[1] = 0;
        total.update(t);
    }
}
